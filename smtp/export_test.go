package smtp

import "time"

// QuitTimeout is the bound on a QUIT in these tests, set before any test runs: two tests
// wait out a QUIT that never answers, and what they check is that the bound holds, not
// its length.
const QuitTimeout = 200 * time.Millisecond

func init() { quitTimeout = QuitTimeout }

// TreatLoopbackAsRemote makes r apply the rules for remote hosts to a
// loopback fake relay, so that tests can check the refusal to authenticate
// without TLS.
func TreatLoopbackAsRemote(r *Relay) { r.loopbackIsRemote = true }

package smtp

// TreatLoopbackAsRemote makes r apply the rules for remote hosts to a
// loopback fake relay, so that tests can check the refusal to authenticate
// without TLS.
func TreatLoopbackAsRemote(r *Relay) { r.loopbackIsRemote = true }

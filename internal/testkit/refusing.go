package testkit

import "testing"

// RefusingAddr returns a loopback "host:port" where a connection is refused for as long as
// the test runs. Listening on port 0 and closing the listener gives a port that is free
// only until another test (or package) listens on port 0 again: a parallel test's server
// may get it and answer, as it did once in CI. Where it can, RefusingAddr keeps the port
// bound without listening, so that the kernel refuses connections and gives the port to
// no one else until the test's cleanup.
func RefusingAddr(t testing.TB) string {
	t.Helper()
	return refusingAddr(t)
}

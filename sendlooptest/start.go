package sendlooptest

import (
	"fmt"
	"net"
)

// TB is the part of testing.TB that NewServer and StartRelay use: a *testing.T, *testing.B
// or *testing.F satisfies it. The package takes this small interface instead of testing.TB
// so that a program using the fake, such as the sendloop CLI, does not link the testing
// package.
type TB interface {
	// Helper marks the calling function as a test helper.
	Helper()
	// Cleanup registers a function to call when the test ends.
	Cleanup(func())
	// Fatalf reports a failure and stops the test.
	Fatalf(format string, args ...any)
}

// NewServer starts a fake on a loopback port. With a non-nil t it is closed when the test
// ends, and a failure to listen fails the test; with nil it panics on that failure, and the
// caller calls Close. Programs use Start, which returns the error instead.
func NewServer(t TB, opts ...Option) *Server {
	if t != nil {
		t.Helper()
	}
	s, err := Start(opts...)
	if err != nil {
		if t == nil {
			panic(err) // as httptest.NewServer does
		}
		t.Fatalf("%v", err)
		return nil
	}
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// listenLoopback listens on a random port of 127.0.0.1, or of ::1 on a host without IPv4,
// as httptest does.
func listenLoopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		return ln, nil
	}
	ln, err6 := net.Listen("tcp6", "[::1]:0")
	if err6 != nil {
		return nil, fmt.Errorf("sendlooptest: cannot listen on a loopback port: %w", err)
	}
	return ln, nil
}

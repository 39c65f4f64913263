//go:build !unix

package testkit

import (
	"net"
	"testing"
)

// refusingAddr falls back to a port listened on and closed: free, but only until another
// listener takes it.
func refusingAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: listen: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

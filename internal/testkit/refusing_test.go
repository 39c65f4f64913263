//go:build unix

package testkit_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// A refusing address refuses, and no listener on port 0 is given its port while the test
// holds it (where the port can be held: elsewhere it is only listened on and closed).
func TestRefusingAddrRefusesAndIsNotReused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		listeners int // listeners on port 0 opened while the address is held
	}{
		{name: "alone"},
		{name: "with many listeners about", listeners: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := testkit.RefusingAddr(t)
			for range tt.listeners {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				assert.NotEqual(t, addr, l.Addr().String())
				require.NoError(t, l.Close())
			}
			_, err := net.Dial("tcp", addr)
			require.Error(t, err)
			assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
		})
	}
}

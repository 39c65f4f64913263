package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// namedLimiter is a Limiter that never waits; its name makes each one a distinct pointer.
type namedLimiter struct{ name string }

func (namedLimiter) Wait(context.Context) error { return nil }

// TestNewSharesTheWindowOfAnotherClientsHTTPClient: a Client built on another's HTTPClient
// sends through the same window and base transport, with its own limiter; one built on any
// other HTTP client has a window of its own.
func TestNewSharesTheWindowOfAnotherClientsHTTPClient(t *testing.T) {
	t.Parallel()
	attempts := func(c *Client) *attemptTransport {
		at, ok := c.HTTPClient().Transport.(*attemptTransport)
		require.True(t, ok, "%T", c.HTTPClient().Transport)
		return at
	}
	caller := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: time.Minute}
	rootLimiter, otherLimiter := &namedLimiter{"root"}, &namedLimiter{"other"}
	root := New(Config{HTTPClient: caller, Limiter: rootLimiter})
	tests := []struct {
		name       string
		hc         *http.Client
		sameWindow bool
		base       http.RoundTripper
	}{
		{"the root's HTTP client", root.HTTPClient(), true, caller.Transport},
		{"the caller's HTTP client", caller, false, caller.Transport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			other := New(Config{HTTPClient: tt.hc, Limiter: otherLimiter})
			at := attempts(other)
			assert.Equal(t, tt.sameWindow, at.window == attempts(root).window, "the same window")
			assert.Same(t, tt.base, at.base, "the caller's transport underneath, once")
			assert.Same(t, otherLimiter, at.limiter)
			assert.Same(t, rootLimiter, attempts(root).limiter, "the root's own limiter unchanged")
			assert.Equal(t, time.Minute, other.HTTPClient().Timeout)
			assert.NotSame(t, tt.hc, other.HTTPClient(), "a copy")
		})
	}
}

// TestSharedWindowCountsBothClients: an attempt of a Client built on another's HTTPClient
// holds a place in the other's window while it is in flight.
func TestSharedWindowCountsBothClients(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	t.Cleanup(srv.Close)
	root := New(Config{})
	other := New(Config{HTTPClient: root.HTTPClient()})
	done := make(chan error, 1)
	go func() {
		_, err := other.Do(context.Background(), &Request{Command: "test.read", Class: Read, Method: http.MethodGet, URL: srv.URL})
		done <- err
	}()
	<-arrived
	in, _ := root.HTTPClient().Transport.(*attemptTransport).window.state()
	assert.Equal(t, 1, in, "the other client's attempt holds a place in the root's window")
	close(release)
	require.NoError(t, <-done)
	in, _ = root.HTTPClient().Transport.(*attemptTransport).window.state()
	assert.Equal(t, 0, in)
}

package sendloop_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// fastRetry keeps retry waits tiny so that no test sleeps.
var fastRetry = sendloop.RetryPolicy{
	MaxRetries:    3,
	MinWait:       time.Millisecond,
	MaxWait:       2 * time.Millisecond,
	MaxRetryAfter: 50 * time.Millisecond,
}

// newTestClient starts a fake and a client for it; opts come after the defaults.
func newTestClient(t testing.TB, opts ...sendloop.Option) (*sendloop.Client, *sendlooptest.Server) {
	t.Helper()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey,
		append([]sendloop.Option{sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry)}, opts...)...)
	require.NoError(t, err)
	return c, srv
}

// requestsFor returns the requests the fake received for command.
func requestsFor(srv *sendlooptest.Server, command string) []sendlooptest.Request {
	var out []sendlooptest.Request
	for _, r := range srv.Requests() {
		if r.Command == command {
			out = append(out, r)
		}
	}
	return out
}

// keyParam is the APIKey form parameter as the client writes it.
func keyParam(srv *sendlooptest.Server) string { return "APIKey=" + url.QueryEscape(srv.APIKey) }

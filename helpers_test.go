package sendloop_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// fastRetry keeps retry waits tiny so that no test sleeps.
var fastRetry = sendloop.RetryPolicy(testkit.FastRetry)

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

// newList makes a list on the fake and returns its ID.
func newList(t testing.TB, c *sendloop.Client, mode sendloop.OptInMode) int {
	t.Helper()
	id, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "List", OptInMode: mode})
	require.NoError(t, err)
	return id
}

// subscribe subscribes email to listID on the fake (single opt-in lists subscribe at once).
func subscribe(t testing.TB, c *sendloop.Client, listID int, email string) *sendloop.SubscriberSubscribeResult {
	t.Helper()
	res, err := c.Subscribers.Subscribe(context.Background(), listID, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.7"})
	require.NoError(t, err)
	return res
}

// cannedClient returns a client for a server that answers every request with body.
func cannedClient(t testing.TB, status int, body string) *sendloop.Client {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(hs.Close)
	c, err := sendloop.NewClient("canned-key", sendloop.WithBaseURL(hs.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	return c
}

// countRecords walks seq, failing on an error, and returns how many records it yielded.
func countRecords[T any](t *testing.T, seq iter.Seq2[T, error]) int {
	t.Helper()
	n := 0
	for _, err := range seq {
		require.NoError(t, err)
		n++
	}
	return n
}

// countingTransport stands for a tracing wrapper: it must see every attempt.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

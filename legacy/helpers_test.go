package legacy_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// fastRetry keeps retry waits tiny so that no test sleeps.
var fastRetry = legacy.RetryPolicy(testkit.FastRetry)

// allForms are the input forms every command is tested in.
var allForms = []legacy.InputForm{legacy.PostForm, legacy.GetForm, legacy.MessageForm, legacy.MessageGetForm}

// newClient returns a legacy client for srv in the given form; opts come after the defaults.
func newClient(t testing.TB, srv *sendlooptest.Server, form legacy.InputForm, opts ...legacy.Option) *legacy.Client {
	t.Helper()
	c, err := legacy.NewClient(srv.APIKey, append([]legacy.Option{legacy.WithBaseURL(srv.URL),
		legacy.WithRetry(fastRetry), legacy.WithInputForm(form)}, opts...)...)
	require.NoError(t, err)
	return c
}

// createList makes a list through the v3 API, as legacy users do.
func createList(t testing.TB, srv *sendlooptest.Server, optIn string) int {
	t.Helper()
	root, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	var out struct{ ListID int }
	require.NoError(t, root.Call(context.Background(), "list.create", map[string]string{"Name": "L", "OptInMode": optIn}, &out))
	return out.ListID
}

// recorder is an http.RoundTripper that keeps the requests it sends, raw query included.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
	next http.RoundTripper
	// edit, when set, changes a request before it is sent.
	edit func(*http.Request)
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if r.edit != nil {
		r.edit(req)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	r.mu.Lock()
	if r.next == nil {
		r.next = testkit.Transport() // not http.DefaultTransport, which parallel tests close
	}
	next := r.next
	r.mu.Unlock()
	return next.RoundTrip(req)
}

func (r *recorder) last() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return nil
	}
	return r.reqs[len(r.reqs)-1]
}

// today is the fake's clock in the tests that chart activity.
var today = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

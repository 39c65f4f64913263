package sendloop_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
)

// redirectPair is a server that answers every request with a redirect to a second server,
// which counts what it receives.
type redirectPair struct {
	first, second *httptest.Server
	reached       atomic.Int64 // requests the second server received
	firstHits     atomic.Int64
}

func newRedirectPair(t *testing.T, status int, sameOrigin bool) *redirectPair {
	t.Helper()
	p := &redirectPair{}
	p.second = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Success":true,"Status":"Okay"}`))
	}))
	t.Cleanup(p.second.Close)
	p.first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.firstHits.Add(1)
		if sameOrigin && strings.HasSuffix(r.URL.Path, "/moved") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"Status":"Okay","Person":{"User ID":"u1"}}`))
			return
		}
		target := p.second.URL + "/elsewhere/secret-path?token=q"
		if sameOrigin {
			target = "/moved?x=1"
		}
		http.Redirect(w, r, target, status)
	}))
	t.Cleanup(p.first.Close)
	return p
}

var redirectStatuses = []int{301, 302, 303, 307, 308}

// credentialEntryPoints are the root client's ways of sending a request that carries the key.
var credentialEntryPoints = []struct {
	name string
	call func(context.Context, *sendloop.Client) error
}{
	{"typed v3 command", func(ctx context.Context, c *sendloop.Client) error { _, err := c.Account.Get(ctx); return err }},
	{"typed v3 write", func(ctx context.Context, c *sendloop.Client) error {
		_, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		return err
	}},
	{"Call", func(ctx context.Context, c *sendloop.Client) error { return c.Call(ctx, "list.getlist", nil, nil) }},
	{"CallRaw xml", func(ctx context.Context, c *sendloop.Client) error {
		_, err := c.CallRaw(ctx, "list.getlist", nil, sendloop.FormatXML)
		return err
	}},
	{"People.Track (POST v4)", func(ctx context.Context, c *sendloop.Client) error {
		return c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: "u1@example.com"})
	}},
	{"People.Get (GET)", func(ctx context.Context, c *sendloop.Client) error { _, err := c.People.Get(ctx, "u1"); return err }},
	{"People.Delete (GET)", func(ctx context.Context, c *sendloop.Client) error { return c.People.Delete(ctx, "u1") }},
}

func TestRedirectsNeverCarryTheKeyElsewhere(t *testing.T) {
	t.Parallel()
	for _, status := range redirectStatuses {
		for _, ep := range credentialEntryPoints {
			t.Run(http.StatusText(status)+"/"+ep.name, func(t *testing.T) {
				t.Parallel()
				p := newRedirectPair(t, status, false)
				c, err := sendloop.NewClient("the-test-key", sendloop.WithBaseURL(p.first.URL), sendloop.WithRetry(fastRetry))
				require.NoError(t, err)

				err = ep.call(context.Background(), c)

				require.Error(t, err)
				assert.Zero(t, p.reached.Load(), "the second server received a request")
				assert.EqualValues(t, 1, p.firstHits.Load(), "a redirect answer is final, never retried")
				var httpErr *sendloop.HTTPError
				require.True(t, errors.As(err, &httpErr), "%T: %v", err, err)
				assert.Equal(t, status, httpErr.HTTPStatus)
				assert.Contains(t, err.Error(), strings.TrimPrefix(p.second.URL, "http://"), "the error names the target's origin")
				assert.NotContains(t, err.Error(), "secret-path", "the error shows no path of the target")
				assert.NotContains(t, err.Error(), "token=q", "the error shows no query of the target")
			})
		}
	}
}

func TestPostsNeverFollowASameOriginRedirect(t *testing.T) {
	t.Parallel()
	for _, status := range redirectStatuses {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			p := newRedirectPair(t, status, true)
			c, err := sendloop.NewClient("the-test-key", sendloop.WithBaseURL(p.first.URL), sendloop.WithRetry(fastRetry))
			require.NoError(t, err)

			err = c.People.Track(context.Background(), "u1", sendloop.PersonTrackParams{Email: "u1@example.com"})

			var httpErr *sendloop.HTTPError
			require.True(t, errors.As(err, &httpErr), "%T: %v", err, err)
			assert.Equal(t, status, httpErr.HTTPStatus)
			assert.EqualValues(t, 1, p.firstHits.Load(), "the POST was sent once and not re-sent to the new path")
		})
	}
}

func TestGetsFollowSameOriginRedirects(t *testing.T) {
	t.Parallel()
	p := newRedirectPair(t, http.StatusFound, true)
	c, err := sendloop.NewClient("the-test-key", sendloop.WithBaseURL(p.first.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)

	person, err := c.People.Get(context.Background(), "u1")

	require.NoError(t, err)
	assert.Equal(t, "u1", person.UserID)
	assert.EqualValues(t, 2, p.firstHits.Load())
}

func TestHTTPSToHTTPRedirectIsRefused(t *testing.T) {
	t.Parallel()
	var plain atomic.Int64
	insecure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { plain.Add(1) }))
	t.Cleanup(insecure.Close)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, insecure.URL+"/api/v3/person.json", http.StatusFound)
	}))
	t.Cleanup(secure.Close)
	c, err := sendloop.NewClient("the-test-key", sendloop.WithBaseURL(secure.URL), sendloop.WithHTTPClient(secure.Client()))
	require.NoError(t, err)

	_, err = c.People.Get(context.Background(), "u1")

	var httpErr *sendloop.HTTPError
	require.True(t, errors.As(err, &httpErr), "%T: %v", err, err)
	assert.Zero(t, plain.Load())
}

func TestRedirectRuleHoldsOnTheCallersClientWithoutChangingIt(t *testing.T) {
	t.Parallel()
	p := newRedirectPair(t, http.StatusTemporaryRedirect, false)
	followAll := func(*http.Request, []*http.Request) error { return nil }
	tracing := &countingTransport{next: testkit.Transport()}
	callers := &http.Client{Transport: tracing, CheckRedirect: followAll}
	c, err := sendloop.NewClient("the-test-key", sendloop.WithBaseURL(p.first.URL), sendloop.WithHTTPClient(callers), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)

	_, err = c.Account.Get(context.Background())

	require.Error(t, err)
	assert.Zero(t, p.reached.Load(), "the caller's follow-everything policy was not used")
	assert.EqualValues(t, 1, tracing.n.Load(), "the caller's Transport saw the attempt")
	assert.Same(t, tracing, callers.Transport, "the caller's client is untouched")
	assert.NotNil(t, callers.CheckRedirect)
}

package legacy_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestRedirectsNeverCarryTheKeyElsewhere(t *testing.T) {
	t.Parallel()
	calls := map[string]func(context.Context, *legacy.Client) error{
		"read": func(ctx context.Context, c *legacy.Client) error { _, err := c.MediaBrowse(ctx); return err },
		"one-shot write": func(ctx context.Context, c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("GIF89a"), MediaType: "image/gif"})
			return err
		},
	}
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, form := range allForms {
			for name, call := range calls {
				t.Run(http.StatusText(status)+"/"+form.String()+"/"+name, func(t *testing.T) {
					t.Parallel()
					var reached, hits atomic.Int64
					second := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
					t.Cleanup(second.Close)
					first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						hits.Add(1)
						http.Redirect(w, r, second.URL+"/secret-path?token=q", status)
					}))
					t.Cleanup(first.Close)
					c, err := legacy.NewClient("the-test-key", legacy.WithBaseURL(first.URL), legacy.WithRetry(fastRetry), legacy.WithInputForm(form))
					require.NoError(t, err)

					err = call(context.Background(), c)

					assert.Zero(t, reached.Load(), "the second server received a request")
					assert.EqualValues(t, 1, hits.Load(), "a redirect answer is final")
					var httpErr *legacy.HTTPError
					require.True(t, errors.As(err, &httpErr), "%T: %v", err, err)
					assert.Equal(t, status, httpErr.HTTPStatus)
					assert.Contains(t, err.Error(), strings.TrimPrefix(second.URL, "http://"))
					assert.NotContains(t, err.Error(), "secret-path")
					assert.NotContains(t, err.Error(), "token=q")
				})
			}
		}
	}
}

// TestOneShotRunsOnceWhenAKeptAliveConnectionDies sends a read, then Media.Upload on the same
// kept-alive connection; the server executes the upload and closes the connection without an
// answer. net/http would send a GET again by itself on a new connection: the upload must
// have run once, whatever the input form, and its outcome is unknown.
func TestOneShotRunsOnceWhenAKeptAliveConnectionDies(t *testing.T) {
	t.Parallel()
	for _, form := range allForms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			seen := map[string]int{} // requests per connection
			var uploads atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				seen[r.RemoteAddr]++
				n := seen[r.RemoteAddr]
				mu.Unlock()
				w.Header().Set("Content-Type", "text/xml")
				if !strings.Contains(r.URL.RawQuery+string(body), "Media.Upload") {
					_, _ = io.WriteString(w, `<?xml version="1.0"?><methodResponse><params><param><value><struct>`+
						`<member><name>Status</name><value>Completed</value></member></struct></value></param></params></methodResponse>`)
					return
				}
				uploads.Add(1)
				if n > 1 { // on a kept-alive connection: run, then die without answering
					conn, _, _ := http.NewResponseController(w).Hijack()
					conn.Close()
					return
				}
				_, _ = io.WriteString(w, `<?xml version="1.0"?><methodResponse><params><param><value><struct>`+
					`<member><name>Status</name><value>Completed</value></member><member><name>MediaID</name><value>9</value></member>`+
					`</struct></value></param></params></methodResponse>`)
			}))
			t.Cleanup(srv.Close)
			c, err := legacy.NewClient("the-test-key", legacy.WithBaseURL(srv.URL), legacy.WithRetry(fastRetry), legacy.WithInputForm(form))
			require.NoError(t, err)
			ctx := context.Background()
			_, err = c.MediaBrowse(ctx)
			require.NoError(t, err)

			_, err = c.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("GIF89a"), MediaType: "image/gif"})

			assert.EqualValues(t, 1, uploads.Load(), "Media.Upload ran more than once")
			assert.ErrorIs(t, err, legacy.ErrOutcomeUnknown)
		})
	}
}

func TestIPsAreSentAsGiven(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	listID := createList(t, srv, "Single")
	c := newClient(t, srv, legacy.PostForm)
	ctx := context.Background()

	_, err := c.SubscriberAdd(ctx, listID, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "unknown"})
	require.NoError(t, err)
	_, err = c.SubscriberUnsubscribe(ctx, listID, legacy.SubscriberUnsubscribeParams{EmailAddress: "ann@example.com", UnsubscriptionIP: "2001:db8::1"})
	require.NoError(t, err)

	before := len(srv.Requests())
	_, err = c.SubscriberAdd(ctx, listID, legacy.SubscriberAddParams{EmailAddress: "bob@example.com", SubscriptionIP: "1.2.3.4\nX"})
	var ve *legacy.ValidationError
	require.ErrorAs(t, err, &ve)
	_, err = c.SubscriberUnsubscribe(ctx, listID, legacy.SubscriberUnsubscribeParams{EmailAddress: "ann@example.com", UnsubscriptionIP: "\x00"})
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, before, len(srv.Requests()), "nothing sent")
}

func TestChartDaysBoundIsAnOption(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	listID := createList(t, srv, "Single")
	start := time.Now().AddDate(0, 0, -20)
	tests := []struct {
		name    string
		opts    []legacy.Option
		days    int
		refused bool
	}{
		{"default bound", nil, legacy.DefaultMaxChartDays + 1, true},
		{"within the default", nil, 30, false},
		{"lowered", []legacy.Option{legacy.WithMaxChartDays(7)}, 8, true},
		{"raised", []legacy.Option{legacy.WithMaxChartDays(5000)}, legacy.DefaultMaxChartDays + 1, false},
		{"no bound", []legacy.Option{legacy.WithMaxChartDays(-1)}, 20000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv, legacy.PostForm, tt.opts...)
			before := srv.Executions(legacy.CommandChartListActivity)
			_, err := c.ChartListActivity(context.Background(), listID, legacy.ChartListActivityParams{Start: start, Days: tt.days})
			if tt.refused {
				var ve *legacy.ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, before, srv.Executions(legacy.CommandChartListActivity), "nothing sent")
				return
			}
			if err != nil { // the fake may bound Days itself: what matters is that it was sent
				var ve *legacy.ValidationError
				require.False(t, errors.As(err, &ve), "refused before sending: %v", err)
			}
			assert.Equal(t, before+1, srv.Executions(legacy.CommandChartListActivity))
		})
	}
}

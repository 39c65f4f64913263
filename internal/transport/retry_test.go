package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// A write whose context ends after a 429 or 503 was answered, and never processed, fails
// with the context's error, not an outcome-unknown one, whether the context ends before the
// answer was judged or while the write waits to retry. After a 502 it may have run, and the
// outcome is unknown. An answer that is not retried (a 200, a one-shot write's 502) is the
// call's result even when the context ends as it arrives: the service has answered.
func TestWriteCancelledWhileWaitingToRetryAfterAnAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		class   Class
		unknown bool
		waits   bool // the answer is retried: the context can end during the wait
		final   bool // the answer is returned, with no error
	}{
		{status: http.StatusServiceUnavailable, class: OneShot, waits: true},
		{status: http.StatusTooManyRequests, class: Idempotent, waits: true},
		{status: http.StatusBadGateway, class: Idempotent, unknown: true, waits: true},
		{status: http.StatusBadGateway, class: OneShot, final: true},
		{status: http.StatusOK, class: OneShot, final: true},
		{status: http.StatusOK, class: Idempotent, final: true},
	}
	for _, tt := range tests {
		ends := []string{"answer"}
		if tt.waits {
			ends = append(ends, "wait")
		}
		for _, during := range ends {
			name := fmt.Sprintf("%d/%s/deadline-during-%s", tt.status, tt.class, during)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var requests atomic.Int32
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					requests.Add(1)
					w.Header().Set("Retry-After", "30")
					w.WriteHeader(tt.status)
				}))
				defer hs.Close()
				ctx := newDeadlineAfterAnswer()
				hc := &http.Client{Transport: ownTransport()}
				if during == "answer" {
					hc.Transport = ctx.transport(ownTransport())
				}
				c := New(Config{HTTPClient: hc, Policy: Policy{MinWait: 30 * time.Second, MaxWait: 30 * time.Second}})
				if during == "wait" {
					// The answer has been judged and the wait chosen: the deadline passes
					// before the 30 s wait starts, so the wait is what it cuts short.
					backoff := c.rc.Backoff
					c.rc.Backoff = func(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
						defer ctx.end()
						return backoff(minWait, maxWait, attempt, resp)
					}
				}
				resp, err := c.Do(ctx, &Request{Command: "x.add", Class: tt.class, Method: http.MethodPost,
					URL: hs.URL + "/api", Body: []byte("a=b"), ContentType: "application/x-www-form-urlencoded"})
				assert.EqualValues(t, 1, requests.Load(), "requests")
				if tt.final {
					require.NoError(t, err)
					assert.Equal(t, tt.status, resp.StatusCode)
					return
				}
				require.Error(t, err)
				// An outcome-unknown error wraps the 502 that made it so; the deadline is its Last.
				if !tt.unknown {
					assert.ErrorIs(t, err, context.DeadlineExceeded)
				}
				assert.Equal(t, tt.unknown, errors.Is(err, outcome.ErrUnknown), "outcome unknown (%v)", err)
			})
		}
	}
}

// deadlineAfterAnswer is a context whose deadline passes once the first answer is in, so
// that a test decides when it ends relative to the answer, whatever the machine's load.
type deadlineAfterAnswer struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newDeadlineAfterAnswer() *deadlineAfterAnswer {
	return &deadlineAfterAnswer{Context: context.Background(), done: make(chan struct{})}
}

func (c *deadlineAfterAnswer) Done() <-chan struct{} { return c.done }

func (c *deadlineAfterAnswer) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *deadlineAfterAnswer) end() { c.once.Do(func() { close(c.done) }) }

// transport returns base, which ends the context once the first answer's body is read.
func (c *deadlineAfterAnswer) transport(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		c.end()
		return resp, nil
	})
}

// afterHeaders returns base, which ends the context once an answer's headers are in and
// leaves its body unread.
func (c *deadlineAfterAnswer) afterHeaders(base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err == nil {
			c.end()
		}
		return resp, err
	})
}

// ownTransport returns a transport of the test's own: every httptest.Server.Close closes
// http.DefaultTransport's idle connections and cancels its dials, which fails a request of
// a parallel test that was about to use one ("http: CloseIdleConnections called").
func ownTransport() *http.Transport { return http.DefaultTransport.(*http.Transport).Clone() }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The answer to the last attempt is the call's result even when the context ends as it
// arrives: no retry is left for the context's end to cut short.
func TestLastAttemptAnswerIsFinalWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	for _, ends := range []bool{false, true} {
		t.Run(fmt.Sprintf("context ends %t", ends), func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			defer hs.Close()
			ctx := newDeadlineAfterAnswer()
			base := http.RoundTripper(ownTransport())
			if ends {
				base = ctx.transport(base)
			}
			c := New(Config{HTTPClient: &http.Client{Transport: base}, Policy: Policy{MaxRetries: -1}})
			resp, err := c.Do(ctx, &Request{Command: "x.add", Class: OneShot, Method: http.MethodPost,
				URL: hs.URL + "/api", Body: []byte("a=b")})
			require.NoError(t, err)
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		})
	}
}

// A 429 or 503 whose body the deadline cuts still says the write was not processed: the
// error is the deadline's, not an outcome-unknown one. The deadline passes once the answer's
// headers are in, and the server holds the body until the call has returned, so that the
// deadline lands between the two by construction, whatever the machine's load.
func TestContextEndsDuringARefusalsBody(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "10")
				w.WriteHeader(status)
				w.(http.Flusher).Flush()
				<-release
			}))
			defer hs.Close()
			defer close(release) // after the call has returned: the body never comes in time
			ctx := newDeadlineAfterAnswer()
			hc := &http.Client{Transport: ctx.afterHeaders(ownTransport())}
			_, err := New(Config{HTTPClient: hc}).Do(ctx, &Request{Command: "x.add", Class: Idempotent,
				Method: http.MethodPost, URL: hs.URL + "/api", Body: []byte("a=b")})
			require.ErrorIs(t, err, context.DeadlineExceeded, "want the plain deadline error")
			assert.NotErrorIs(t, err, outcome.ErrUnknown, "want the plain deadline error")
		})
	}
}

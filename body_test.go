package sendloop_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
)

// bodyFault breaks the first answer's body after its headers are sent.
type bodyFault func(w http.ResponseWriter, r *http.Request, body string)

var bodyFaults = map[string]bodyFault{
	"stalls": func(w http.ResponseWriter, r *http.Request, body string) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		for i := range body { // one byte per second: far slower than the per-attempt timeout
			if _, err := w.Write([]byte{body[i]}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	},
	"closed mid-body": func(w http.ResponseWriter, r *http.Request, body string) {
		w.WriteHeader(http.StatusOK) // chunked: the cut leaves no final chunk
		_, _ = w.Write([]byte(body[:len(body)/2]))
		w.(http.Flusher).Flush()
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	},
	"short under Content-Length": func(w http.ResponseWriter, r *http.Request, body string) {
		conn, buf, _ := http.NewResponseController(w).Hijack()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body)+40, body)
		_ = buf.Flush()
		conn.Close()
	},
}

// bodyFaultServer answers each command with body, breaking the first attempt's body; it
// counts the executions (every request is one).
func bodyFaultServer(t *testing.T, fault bodyFault, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var executions atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if executions.Add(1) == 1 {
			fault(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &executions
}

func TestBrokenBodyIsPartOfTheAttempt(t *testing.T) {
	t.Parallel()
	calls := []struct {
		class   string
		body    string
		call    func(context.Context, *sendloop.Client) error
		retried bool
	}{
		{"read", `{"Success":true,"AccountInfo":{"Username":"ann"}}`, func(ctx context.Context, c *sendloop.Client) error {
			_, err := c.Account.Get(ctx)
			return err
		}, true},
		{"idempotent write", `{"Success":true}`, func(ctx context.Context, c *sendloop.Client) error {
			return c.Lists.Update(ctx, 1, sendloop.ListUpdateParams{Name: "N"})
		}, true},
		{"one-shot write", `{"Success":true,"ListID":"7"}`, func(ctx context.Context, c *sendloop.Client) error {
			_, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
			return err
		}, false},
	}
	for faultName, fault := range bodyFaults {
		for _, tc := range calls {
			t.Run(faultName+"/"+tc.class, func(t *testing.T) {
				t.Parallel()
				srv, executions := bodyFaultServer(t, fault, tc.body)
				// The per-attempt timeout ends the stalled attempt; it is far above a call to
				// the fake under -race, so that the retry cannot time out too on a loaded
				// machine. A body that held the call would be read whole, a byte a second, at
				// the first attempt: the count of executions says so, without a clock.
				c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry),
					sendloop.WithHTTPClient(&http.Client{Transport: testkit.Transport(), Timeout: 2 * time.Second}))
				require.NoError(t, err)

				err = tc.call(context.Background(), c)

				if tc.retried {
					require.NoError(t, err)
					assert.EqualValues(t, 2, executions.Load(), "retried once after the broken body")
					return
				}
				require.Error(t, err)
				assert.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
				assert.EqualValues(t, 1, executions.Load(), "a one-shot write is not sent again")
			})
		}
	}
}

func TestDrippingBodyStopsAtTheContextDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodyFaults["stalls"](w, r, `{"Success":true,"AccountInfo":{"Username":"ann"}}`)
	}))
	t.Cleanup(srv.Close)
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()

	start := time.Now()
	_, err = c.Account.Get(ctx)

	// Time is what is tested: the body would take 49 s, a byte a second. Wherever the
	// deadline lands, the call ends with it; the bound is far above the median under -race
	// (0.4 s, 20 runs): 25 times it.
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

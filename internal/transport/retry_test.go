package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// A write whose context ends while it waits to retry after a 429 or 503 was answered, and
// never processed: its error is the context's, not an outcome-unknown one. After a 502 it
// may have run, and the outcome is unknown.
func TestWriteCancelledWhileWaitingToRetryAfterAnAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		class   Class
		unknown bool
	}{
		{http.StatusServiceUnavailable, OneShot, false},
		{http.StatusTooManyRequests, Idempotent, false},
		{http.StatusBadGateway, Idempotent, true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status)+"/"+tt.class.String(), func(t *testing.T) {
			t.Parallel()
			var requests atomic.Int32
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				requests.Add(1)
				w.Header().Set("Retry-After", "30")
				w.WriteHeader(tt.status)
			}))
			defer hs.Close()
			c := New(Config{Policy: Policy{MinWait: 30 * time.Second, MaxWait: 30 * time.Second}})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := c.Do(ctx, &Request{Command: "x.add", Class: tt.class, Method: http.MethodPost,
				URL: hs.URL + "/api", Body: []byte("a=b"), ContentType: "application/x-www-form-urlencoded"})
			// An outcome-unknown error wraps the 502 that made it so; the deadline is its Last.
			if !tt.unknown && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not match the context's deadline", err)
			}
			if got := errors.Is(err, outcome.ErrUnknown); got != tt.unknown {
				t.Errorf("outcome unknown: %t, want %t (%v)", got, tt.unknown, err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

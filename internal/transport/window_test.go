package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fill admits n attempts into w, all at once, and returns their epochs.
func fill(t *testing.T, w *window, n int) []uint64 {
	t.Helper()
	epochs := make([]uint64, n)
	for i := range epochs {
		e, err := w.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		epochs[i] = e
	}
	return epochs
}

func TestWindowDecreasesOncePerRoundAndGrowsBack(t *testing.T) {
	t.Parallel()
	w := newWindow()
	epochs := fill(t, w, 16)
	if in, bound := w.state(); in != 16 || bound != MaxInFlight {
		t.Fatalf("in flight %d, bound %d: want 16 under %d before any push-back", in, bound, MaxInFlight)
	}
	// All 16 are answered 429: the first halves the window to the 16 in flight / 2; the
	// others were sent before it and say nothing new.
	for _, e := range epochs {
		w.release(e, throttled)
	}
	if _, bound := w.state(); bound != 8 {
		t.Fatalf("bound %d after a round of 429s from 16 in flight, want 8", bound)
	}
	// A 429 to an attempt sent after the decrease halves it again.
	epochs = fill(t, w, 8)
	w.release(epochs[0], throttled)
	if _, bound := w.state(); bound != 4 {
		t.Fatalf("bound %d after a second round, want 4", bound)
	}
	for _, e := range epochs[1:] {
		w.release(e, failed) // no answer: neither shrink nor grow
	}
	if _, bound := w.state(); bound != 4 {
		t.Fatalf("bound %d after failures without an answer, want 4", bound)
	}
	// Additive increase: one more place per round of answers.
	answers := 0
	for {
		in, bound := w.state()
		if bound >= 8 {
			break
		}
		epochs := fill(t, w, bound-in)
		for _, e := range epochs {
			w.release(e, answered)
			answers++
		}
	}
	// From 4 to 8: 4+5+6+7 answers, give or take the rounding of 1/bound.
	if answers < 20 || answers > 28 {
		t.Errorf("%d answers to grow from 4 to 8, want 22 to 26", answers)
	}
	// Never below one call in flight.
	for range 20 {
		w.release(fill(t, w, 1)[0], throttled)
	}
	if _, bound := w.state(); bound != 1 {
		t.Errorf("bound %d after many 429s, want 1", bound)
	}
}

func TestWindowQueuesInOrderAndHonoursTheContext(t *testing.T) {
	t.Parallel()
	w := newWindow()
	epochs := fill(t, w, 2)
	w.release(epochs[0], throttled) // bound: 2/2 = 1, with 1 in flight
	if in, bound := w.state(); in != 1 || bound != 1 {
		t.Fatalf("in flight %d, bound %d, want 1 and 1", in, bound)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := w.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on a full window: %v, want the context's deadline", err)
	}

	order := make(chan int, 3)
	var released sync.WaitGroup
	released.Add(3)
	for i := range 3 {
		go func() {
			defer released.Done()
			e, err := w.acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			w.release(e, failed)
		}()
		// Queued one after the other: polled, as the window tells nobody, and asserted on.
		// The minute only bounds how long a failing test waits.
		queued := func() int {
			w.mu.Lock()
			defer w.mu.Unlock()
			return len(w.waiters)
		}
		tick := time.NewTicker(time.Millisecond)
		for deadline := time.Now().Add(time.Minute); queued() != i+1; <-tick.C {
			if time.Now().After(deadline) {
				t.Fatalf("%d waiters a minute after acquire number %d, want %d", queued(), i+1, i+1)
			}
		}
		tick.Stop()
	}
	w.release(epochs[1], failed)
	for want := range 3 {
		if got := <-order; got != want {
			t.Fatalf("admitted %d, want %d: the queue is first in, first out", got, want)
		}
	}
	released.Wait()
	if in, _ := w.state(); in != 0 {
		t.Errorf("%d in flight after every release", in)
	}
}

func TestSignalOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		err    error
		want   signal
	}{
		{http.StatusOK, nil, answered},
		{http.StatusInternalServerError, nil, answered},
		{http.StatusBadGateway, nil, answered},
		{http.StatusTooManyRequests, nil, throttled},
		{http.StatusServiceUnavailable, nil, throttled},
		{0, errors.New("reset"), failed},
	}
	for _, tt := range tests {
		var resp *http.Response
		if tt.status != 0 {
			resp = &http.Response{StatusCode: tt.status}
		}
		if got := signalOf(resp, tt.err); got != tt.want {
			t.Errorf("signalOf(%d, %v) = %d, want %d", tt.status, tt.err, got, tt.want)
		}
	}
}

// A write whose context ends while it waits for a place in the window, or for the rate
// limiter, was never sent: its error is the context's, not an outcome-unknown one.
func TestWriteCancelledWhileWaitingIsNotOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, class := range []Class{Idempotent, OneShot} {
		for _, waitFor := range []string{"window", "limiter"} {
			t.Run(class.String()+"/"+waitFor, func(t *testing.T) {
				t.Parallel()
				var requests atomic.Int32
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					requests.Add(1)
				}))
				defer hs.Close()
				cfg := Config{}
				if waitFor == "limiter" {
					cfg.Limiter = blockingLimiter{}
				}
				c := New(cfg)
				if waitFor == "window" {
					w := c.rc.HTTPClient.Transport.(*attemptTransport).window
					epochs := fill(t, w, 2)
					w.release(epochs[0], throttled) // bound 1, taken by epochs[1]
					defer w.release(epochs[1], failed)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				_, err := c.Do(ctx, &Request{Command: "x.add", Class: class, Method: http.MethodPost,
					URL: hs.URL + "/api", Body: []byte("a=b"), ContentType: "application/x-www-form-urlencoded"})
				if err == nil {
					t.Fatal("no error")
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v does not match the context's deadline", err)
				}
				var oe interface{ Unwrap() []error }
				if errors.As(err, &oe) || strings.Contains(err.Error(), "outcome unknown") {
					t.Errorf("error %v is outcome-unknown, but nothing was sent", err)
				}
				if n := requests.Load(); n != 0 {
					t.Errorf("%d requests reached the server", n)
				}
			})
		}
	}
}

// blockingLimiter admits nothing: Wait returns when the context ends.
type blockingLimiter struct{}

func (blockingLimiter) Wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

package transport

import (
	"context"
	"net/http"
	"sync"
)

// MaxInFlight is the most attempts a Client keeps in flight while the service has not
// pushed back: far above what its callers ask for (ImportAll's and BrowseIter's
// concurrency), so that the window only ever binds after a 429 or a 503.
const MaxInFlight = 1024

// window bounds a Client's attempts in flight and adapts the bound to the service, as TCP's
// congestion window does: when the service answers 429 or 503 the bound falls to half the
// attempts in flight (multiplicative decrease, once per round: the answers to attempts sent
// before the decrease do not decrease it again), and every answer that is not one of them
// raises it by 1/bound, one more attempt per round of answers (additive increase), up to
// MaxInFlight. The retries that honour Retry-After come on top: a throttled call waits as
// the service asked, then queues for a place in the smaller window. Callers that keep fewer
// calls in flight than the bound never wait.
type window struct {
	mu       sync.Mutex
	limit    float64
	inFlight int
	epoch    uint64    // counts the decreases
	waiters  []*waiter // oldest first
}

// waiter is an attempt queued for a place in the window.
type waiter struct {
	ready chan struct{} // closed when the attempt is admitted
	epoch uint64        // the window's epoch when it was admitted
}

// signal is what an attempt's answer tells the window.
type signal int

const (
	answered  signal = iota // an answer that is not a push-back: grow
	throttled               // 429 or 503: shrink
	failed                  // no answer (a reset, a timeout): neither
)

// signalOf classifies an attempt's result.
func signalOf(resp *http.Response, err error) signal {
	switch {
	case err != nil || resp == nil:
		return failed
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return throttled
	}
	return answered
}

func newWindow() *window { return &window{limit: MaxInFlight} }

// acquire waits for a place in the window, or until ctx ends. It returns the epoch the
// attempt was admitted in, for release.
func (w *window) acquire(ctx context.Context) (uint64, error) {
	w.mu.Lock()
	if len(w.waiters) == 0 && w.inFlight < w.bound() {
		w.inFlight++
		epoch := w.epoch
		w.mu.Unlock()
		return epoch, nil
	}
	me := &waiter{ready: make(chan struct{})}
	w.waiters = append(w.waiters, me)
	w.mu.Unlock()
	select {
	case <-me.ready:
		return me.epoch, nil
	case <-ctx.Done():
		w.mu.Lock()
		defer w.mu.Unlock()
		select {
		case <-me.ready:
			// Admitted meanwhile: give the place back, unused.
			w.inFlight--
			w.admit()
		default:
			for i, other := range w.waiters {
				if other == me {
					w.waiters = append(w.waiters[:i], w.waiters[i+1:]...)
					break
				}
			}
		}
		return 0, ctx.Err()
	}
}

// release gives back the place of an attempt admitted in epoch, with what its answer
// tells.
func (w *window) release(epoch uint64, o signal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case o == throttled && epoch == w.epoch:
		w.limit = max(1, min(w.limit, float64(w.inFlight))/2)
		w.epoch++
	case o == answered:
		w.limit = min(MaxInFlight, w.limit+1/w.limit)
	}
	w.inFlight--
	w.admit()
}

// admit lets queued attempts in while there is room; the caller holds w.mu.
func (w *window) admit() {
	for len(w.waiters) > 0 && w.inFlight < w.bound() {
		next := w.waiters[0]
		w.waiters[0] = nil
		w.waiters = w.waiters[1:]
		w.inFlight++
		next.epoch = w.epoch
		close(next.ready)
	}
}

// bound is the number of attempts the window allows in flight; the caller holds w.mu.
func (w *window) bound() int { return int(w.limit) }

// state returns how many attempts are in flight and how many the window allows now.
func (w *window) state() (inFlight, bound int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inFlight, w.bound()
}

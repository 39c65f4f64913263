package smtp

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// Rate limiting (WithRate): a token bucket, slowed down by 4xx replies.
const (
	// maxSlowDowns bounds the halvings of the rate: it never falls below
	// 1/32 of the rate asked for.
	maxSlowDowns = 5
	// slowDownGap is the least time between two halvings, so that the
	// connections refused together by one busy server halve the rate once.
	slowDownGap = time.Second
	// recoverAfter is the time without a 4xx after which the rate doubles
	// again, one halving at a time, back to the rate asked for.
	recoverAfter = 5 * time.Second
)

// limiter is a token bucket: rate tokens a second, at most burst in store,
// full at the start. Each attempt to send a message takes one.
type limiter struct {
	mu      sync.Mutex
	base    float64 // messages per second asked for
	burst   float64
	tokens  float64
	last    time.Time // when tokens was last brought up to date
	slow    int       // halvings in force
	changed time.Time // the last halving or recovery step
	now     func() time.Time
}

func newLimiter(perSecond float64, burst int) *limiter {
	if burst < 1 {
		burst = 1
	}
	l := &limiter{base: perSecond, burst: float64(burst), now: time.Now}
	l.tokens, l.last = l.burst, l.now()
	return l
}

// refill brings the tokens and the rate up to date; l.mu is held.
func (l *limiter) refill(now time.Time) float64 {
	for l.slow > 0 && now.Sub(l.changed) >= recoverAfter {
		l.slow--
		l.changed = l.changed.Add(recoverAfter)
	}
	rate := l.base / float64(int(1)<<l.slow)
	if elapsed := now.Sub(l.last); elapsed > 0 {
		l.tokens = math.Min(l.burst, l.tokens+elapsed.Seconds()*rate)
	}
	l.last = now
	return rate
}

// reserve takes a token and returns how long to wait for it.
func (l *limiter) reserve() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	rate := l.refill(l.now())
	l.tokens--
	if l.tokens >= 0 {
		return 0
	}
	return time.Duration(-l.tokens / rate * float64(time.Second))
}

// wait takes a token, waiting for it as long as ctx allows; a token not
// waited for is given back.
func (l *limiter) wait(ctx context.Context) error {
	d := l.reserve()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		l.tokens++
		l.mu.Unlock()
		return ctx.Err()
	}
}

// slowDown halves the rate after a 4xx reply (at most once a slowDownGap),
// and empties the burst so that the lower rate holds at once.
func (l *limiter) slowDown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.refill(now)
	if l.slow > 0 && now.Sub(l.changed) < slowDownGap {
		return
	}
	if l.slow < maxSlowDowns {
		l.slow++
	}
	l.changed = now
	l.tokens = math.Min(l.tokens, 0)
}

// slowDownOn slows the rate down when err is a 4xx reply of the server (to
// the greeting, MAIL, RCPT or DATA).
func (r *Relay) slowDownOn(err error) {
	if r.limiter == nil || err == nil {
		return
	}
	var smtpErr *ReplyError
	if errors.As(err, &smtpErr) && smtpErr.Temporary() {
		r.limiter.slowDown()
	}
}

package smtp

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// fakeClock drives a limiter's time.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newTestLimiter(rate float64, burst int) (*limiter, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newLimiter(rate, burst)
	l.now, l.last = c.now, c.t
	return l, c
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	tests := []struct {
		name  string
		rate  float64
		burst int
		steps func(l *limiter, c *fakeClock) []time.Duration // the waits of successive reserves
		want  []time.Duration
	}{
		{"burst, then the rate", 100, 3, func(l *limiter, c *fakeClock) []time.Duration {
			return []time.Duration{l.reserve(), l.reserve(), l.reserve(), l.reserve(), l.reserve()}
		}, []time.Duration{0, 0, 0, 10 * ms, 20 * ms}},
		{"refills with time, up to the burst", 100, 2, func(l *limiter, c *fakeClock) []time.Duration {
			l.reserve()
			l.reserve()
			c.add(time.Second)
			return []time.Duration{l.reserve(), l.reserve(), l.reserve()}
		}, []time.Duration{0, 0, 10 * ms}},
		{"a burst below 1 is 1", 10, 0, func(l *limiter, c *fakeClock) []time.Duration {
			return []time.Duration{l.reserve(), l.reserve()}
		}, []time.Duration{0, 100 * ms}},
		{"a 4xx halves the rate and empties the burst", 100, 10, func(l *limiter, c *fakeClock) []time.Duration {
			l.slowDown()
			return []time.Duration{l.reserve(), l.reserve()}
		}, []time.Duration{20 * ms, 40 * ms}},
		{"4xx together halve once", 100, 1, func(l *limiter, c *fakeClock) []time.Duration {
			l.slowDown()
			l.slowDown()
			l.slowDown()
			return []time.Duration{l.reserve()}
		}, []time.Duration{20 * ms}},
		{"4xx a second apart halve twice", 100, 1, func(l *limiter, c *fakeClock) []time.Duration {
			l.slowDown()
			c.add(time.Second)
			l.slowDown()
			return []time.Duration{l.reserve()}
		}, []time.Duration{40 * ms}},
		{"never below 1/32", 100, 1, func(l *limiter, c *fakeClock) []time.Duration {
			for range 10 {
				l.slowDown()
				c.add(time.Second)
			}
			l.tokens, l.last = 0, c.now()
			return []time.Duration{l.reserve()}
		}, []time.Duration{320 * ms}},
		{"grows back after quiet seconds", 100, 1, func(l *limiter, c *fakeClock) []time.Duration {
			l.slowDown()
			c.add(time.Second)
			l.slowDown() // 25/s
			c.add(recoverAfter)
			l.tokens = -1e9 // look at the rate alone
			l.reserve()
			l.tokens = 0
			after1 := l.reserve() // 50/s
			c.add(recoverAfter)
			l.tokens = 0
			l.reserve() // refills at 100/s for 0s
			l.tokens = 0
			return []time.Duration{after1, l.reserve()}
		}, []time.Duration{20 * ms, 10 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, c := newTestLimiter(tt.rate, tt.burst)
			got := tt.steps(l, c)
			for i := range got {
				if d := got[i] - tt.want[i]; d < -ms/10 || d > ms/10 {
					t.Errorf("wait %d = %v, want %v (all: %v)", i, got[i], tt.want[i], got)
				}
			}
		})
	}
}

func TestLimiterWaitGivesBackOnCancel(t *testing.T) {
	t.Parallel()
	l := newLimiter(1, 1)
	l.reserve()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx); err == nil {
		t.Fatal("wait did not see the cancellation")
	}
	if l.tokens < -0.01 || l.tokens > 0.01 {
		t.Errorf("tokens = %v after a cancelled wait, want the token back (about 0)", l.tokens)
	}
}

func TestSlowDownOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"421", &ReplyError{Command: "MAIL", Code: 421}, 1},
		{"452 for a recipient", &RecipientsError{Refused: []*ReplyError{{Command: "RCPT", Code: 452}}}, 1},
		{"451 wrapped", fmt.Errorf("x: %w", &ReplyError{Command: "DATA", Code: 451}), 1},
		{"550", &ReplyError{Command: "RCPT", Code: 550}, 0},
		{"no reply", errors.New("connection reset"), 0},
		{"nil", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Relay{limiter: newLimiter(10, 1)}
			r.slowDownOn(tt.err)
			if r.limiter.slow != tt.want {
				t.Errorf("halvings = %d, want %d", r.limiter.slow, tt.want)
			}
		})
	}
}

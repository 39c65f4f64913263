package smtp

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// TestLimiterLongRun drives a limiter on a fake clock with workers that each take a token,
// wait what reserve says, and send for a while, as the pool's connections do: over many
// tokens the achieved rate is the rate asked for (the burst aside), no second holds more
// than rate + burst messages, and a pause refills the burst only.
func TestLimiterLongRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		rate      float64
		burst     int
		workers   int
		service   time.Duration // the time a message takes to send, after its wait
		messages  int
		pauseAt   int // after this many messages every worker stops for pause (0: none)
		pause     time.Duration
		wantRate  float64 // the achieved rate over the run, within 1 %
		wantBurst int     // the most messages in any one second
	}{
		{"200/s as the CLI sets it, 10,000 messages", 200, 20, 8, 3 * time.Millisecond, 10000, 0, 0, 200 * 10000 / (10000 - 20.0), 220},
		{"one connection", 200, 20, 1, time.Millisecond, 10000, 0, 0, 200 * 10000 / (10000 - 20.0), 220},
		{"connections slower than the rate", 200, 20, 2, 20 * time.Millisecond, 2000, 0, 0, 100, 101},
		{"a pause refills the burst only", 50, 5, 4, time.Millisecond, 3000, 1500, 10 * time.Second, 0, 55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, c := newTestLimiter(tt.rate, tt.burst)
			start := c.t
			ready := make([]time.Time, tt.workers)
			for i := range ready {
				ready[i] = start
			}
			sends := make([]time.Time, 0, tt.messages)
			for len(sends) < tt.messages {
				w := 0 // the worker free first takes the next message
				for i := range ready {
					if ready[i].Before(ready[w]) {
						w = i
					}
				}
				if tt.pauseAt > 0 && len(sends) == tt.pauseAt {
					for i := range ready {
						ready[i] = ready[i].Add(tt.pause)
					}
				}
				if ready[w].After(c.t) {
					c.t = ready[w]
				}
				at := c.t.Add(l.reserve())
				sends = append(sends, at)
				ready[w] = at.Add(tt.service)
			}
			slices.SortFunc(sends, func(a, b time.Time) int { return a.Compare(b) })
			if tt.wantRate > 0 {
				got := float64(len(sends)) / sends[len(sends)-1].Sub(start).Seconds()
				if got < tt.wantRate*0.99 || got > tt.wantRate*1.01 {
					t.Errorf("achieved %.2f messages/s over %d, want %.2f", got, len(sends), tt.wantRate)
				}
			}
			most := 0
			for i, j := 0, 0; i < len(sends); i++ {
				for sends[i].Sub(sends[j]) >= time.Second {
					j++
				}
				most = max(most, i-j+1)
			}
			if most > tt.wantBurst {
				t.Errorf("%d messages in one second, want at most %d", most, tt.wantBurst)
			}
		})
	}
}

package testkit

import (
	"context"
	"sync"
	"time"
)

// EndingContext is a context that ends when the test calls End, with the error it was made
// with. A test that needs "the context ends during X" ends it from a hook that runs during
// X (the request arrived, the answer's headers are in, the command is held), so that the
// context ends there by construction, not by a deadline's bet on how fast the machine is.
// It has no deadline: code that sets connection deadlines from ctx.Deadline sees none, and
// notices the end through Done, as it does a cancellation.
type EndingContext struct {
	context.Context
	err  error
	done chan struct{}
	once sync.Once
}

// NewEndingContext returns a context that ends with err once End is called:
// context.DeadlineExceeded stands for a deadline that passes at that moment,
// context.Canceled for a cancellation.
func NewEndingContext(err error) *EndingContext {
	return &EndingContext{Context: context.Background(), err: err, done: make(chan struct{})}
}

// Done is closed by End.
func (c *EndingContext) Done() <-chan struct{} { return c.done }

// Err returns nil until End is called, then the context's error.
func (c *EndingContext) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// End ends the context; calls after the first do nothing.
func (c *EndingContext) End() { c.once.Do(func() { close(c.done) }) }

// Eventually polls cond every millisecond until it holds, and reports whether it did
// within the given time: a test polls for an event it cannot be told of, and asserts on the
// event, never on the time it took. Give within far more than the event needs on a loaded
// machine; it only bounds how long a failing test waits.
func Eventually(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return cond()
		}
		<-tick.C
	}
	return true
}

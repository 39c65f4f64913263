package smtp

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Hook follows one message of SendAllHooked through the relay, for a job that keeps a
// durable record of its messages: a bulk send (package mailmerge) records the message in
// flight before its final dot and its outcome after, so that a run killed at any moment
// sends no message twice. A nil func is not called.
type Hook struct {
	// BeforeDot is called with the message's Message-ID once its content is written and
	// just before its final dot, on every attempt. An error abandons the message: the
	// connection is closed before the final dot, so that nothing is delivered, and the
	// error is the result's.
	BeforeDot func(messageID string) error
	// Deferred is called with the result so far after a 4xx reply to the final dot:
	// nothing was delivered, and the message may be tried again. An error ends the
	// message's attempts and becomes the result's.
	Deferred func(res *SendResult) error
	// Done is called with the message's result once it is final, on the goroutine that
	// sent it, before the result is yielded. An error stops the run: the messages not
	// yet on the wire are yielded with an error matching ErrRunStopped that wraps it.
	Done func(res SendResult) error
}

// ErrRunStopped is matched by the results SendAllHooked did not send because the run
// stopped on a failure of the session (or a Hook's Done said so); the cause is wrapped too.
var ErrRunStopped = errors.New("sendloop/smtp: not attempted: the run stopped on a failure of the session")

// SendAllHooked is SendAll with a Hook per message (nil for none), for a job that must
// know of each message's final dot: it sends in parallel over the pool, retries 4xx
// replies, and yields one result per message, in input order.
//
// Unlike SendAll it stops the run at a failure of the session rather than of one message:
// a 5xx reply to MAIL FROM stops it before its connection goes to the next message, and so
// does an error of a Hook's Done (by which the caller stops the run on the failures it
// classifies: refused credentials, a relay that stays unreachable, a record that cannot
// be written). The messages on the wire finish; every later one is yielded with an error
// matching ErrRunStopped. A nil message is answered at once, in its place, with an error:
// a caller may give one for a row it decided itself, to keep its place in the order.
func (r *Relay) SendAllHooked(ctx context.Context, msgs iter.Seq2[*Message, *Hook]) iter.Seq[SendResult] {
	return func(yield func(SendResult) bool) {
		b := &bulk{}
		type item struct {
			msg  *Message
			hook *Hook
		}
		src := func(y func(item) bool) {
			for m, h := range msgs {
				if !y(item{m, h}) {
					return
				}
			}
		}
		workers := 2 * r.maxConns
		now := func(i int, it item) (SendResult, bool) {
			switch {
			case it.msg == nil:
				return SendResult{Index: i, Err: errNilMessage}, true
			case b.failed() != nil:
				err := b.failed()
				if !errors.Is(err, ErrRunStopped) {
					err = &runStopped{cause: err} // a setup failure the pool recorded
				}
				return SendResult{Index: i, Err: err}, true
			case ctx.Err() != nil:
				return SendResult{Index: i, Err: fmt.Errorf("%w (%w)", ErrNotAttempted, ctx.Err())}, true
			}
			return SendResult{}, false
		}
		work := func(i int, it item) SendResult {
			hs := &hooked{hook: it.hook}
			if it.hook == nil {
				hs.hook = &Hook{}
			}
			res := r.sendOne(ctx, i, it.msg, b, hs)
			if hs.hook.Done != nil {
				if err := hs.hook.Done(res); err != nil {
					if !errors.Is(err, ErrRunStopped) {
						err = &runStopped{cause: err}
					}
					b.fail(err)
				}
			}
			return res
		}
		runOrdered(workers, 4*workers, src, now, work, yield)
	}
}

// errNilMessage is the error of a nil message.
var errNilMessage = errors.New("sendloop/smtp: nil message")

// hooked is a message of SendAllHooked on its way: its hook, and whether the final dot of
// the current attempt went out.
type hooked struct {
	hook   *Hook
	dotOut bool
}

// beforeDot calls the hook before the final dot.
func (h *hooked) beforeDot(messageID string) error {
	if h.hook.BeforeDot == nil {
		return nil
	}
	return h.hook.BeforeDot(messageID)
}

// deferred calls the hook after a 4xx reply to the final dot.
func (h *hooked) deferred(res *SendResult) error {
	if h.hook.Deferred == nil {
		return nil
	}
	return h.hook.Deferred(res)
}

// runStopped is the error of the messages a stopped run did not send.
type runStopped struct{ cause error }

func (e *runStopped) Error() string   { return ErrRunStopped.Error() + ": " + e.cause.Error() }
func (e *runStopped) Unwrap() []error { return []error{ErrRunStopped, e.cause} }

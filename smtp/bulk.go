package smtp

import (
	"context"
	"fmt"
	"iter"
)

// SendAll sends every message of msgs and yields one result per message, in
// the order of msgs, as the results come in. Messages go out in parallel
// over up to WithMaxConnections connections (4 by default), many over each
// (see the package doc for when RSET is sent between them); a connection the
// server closes (421, or dropped) is replaced.
//
// A failed message does not stop the others: its result carries the error.
// A setup failure that cannot change (refused credentials, an untrusted
// certificate, no TLS) fails the remaining messages without connecting
// again. Once ctx ends, every message not yet sent is still yielded, with
// an error matching ErrNotAttempted; a message whose final dot was out has
// ErrOutcomeUnknown.
//
// Stopping the iteration early stops taking messages from msgs; the messages
// already being sent finish first.
func (r *Relay) SendAll(ctx context.Context, msgs iter.Seq[*Message]) iter.Seq[SendResult] {
	return func(yield func(SendResult) bool) {
		next, stop := iter.Pull(msgs)
		defer stop()
		b := &bulk{}
		// Twice as many messages in flight as connections: the next ones are
		// built while the current ones are on the wire.
		workers := 2 * r.maxConns
		window := 4 * workers // results held for ordering, at most
		results := make(chan SendResult, workers)
		pending := make(map[int]SendResult)
		inflight, index, want := 0, 0, 0
		exhausted, stopped := false, false
		defer func() {
			for ; inflight > 0; inflight-- {
				<-results
			}
		}()
		for {
			for !exhausted && !stopped && inflight < workers && len(pending)+inflight < window {
				msg, ok := next()
				if !ok {
					exhausted = true
					break
				}
				if err := ctx.Err(); err != nil {
					pending[index] = SendResult{Index: index, Err: fmt.Errorf("%w (%w)", ErrNotAttempted, err)}
					index++
					break
				}
				inflight++
				go func(i int, m *Message) { results <- r.sendOne(ctx, i, m, b) }(index, msg)
				index++
			}
			for {
				res, ok := pending[want]
				if !ok {
					break
				}
				delete(pending, want)
				want++
				if !stopped && !yield(res) {
					stopped = true
				}
			}
			if stopped && inflight == 0 {
				return
			}
			if exhausted && inflight == 0 && len(pending) == 0 {
				return
			}
			if inflight > 0 {
				res := <-results
				inflight--
				pending[res.Index] = res
			}
		}
	}
}

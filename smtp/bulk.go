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
		b := &bulk{}
		// Twice as many messages in flight as connections: the next ones are
		// built while the current ones are on the wire.
		workers := 2 * r.maxConns
		now := func(i int, _ *Message) (SendResult, bool) {
			if err := ctx.Err(); err != nil {
				return SendResult{Index: i, Err: fmt.Errorf("%w (%w)", ErrNotAttempted, err)}, true
			}
			return SendResult{}, false
		}
		work := func(i int, m *Message) SendResult { return r.sendOne(ctx, i, m, b, nil) }
		runOrdered(workers, 4*workers, msgs, now, work, yield)
	}
}

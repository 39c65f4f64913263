package mailmerge

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sendloop/sendloop/smtp"
)

// TestOptions configures TestSend.
type TestOptions struct {
	// To is the one address every test message goes to.
	To string
	// Rows is how many rows' messages to send: 3 when 0, at most MaxTestRows.
	Rows int
	// AsIs keeps the subject and the tracking switches as the template has them;
	// otherwise the subject is prefixed "[test] " and tracking is off.
	AsIs bool
}

// MaxTestRows is the most rows TestSend sends.
const MaxTestRows = 20

// TestSent is one message TestSend sent.
type TestSent struct {
	// Line and Index name the row (as PreviewMessage's).
	Line, Index int
	// Address is the row's address, which did not get the message.
	Address string
	// MessageID is the message's Message-ID.
	MessageID string
	// Err is the relay's refusal, if any.
	Err error
}

// TestSend sends the messages of the first rows of the job's shard to one address only,
// personalised as each row's: each row's List-Unsubscribe is replaced by a mailto: to that
// address (never AsIs: no row's unsubscribe link reaches a tester), and unless AsIs,
// tracking is off and the subject starts with "[test] ". It touches no journal.
func (j *Job) TestSend(ctx context.Context, relay *smtp.Relay, opts TestOptions) ([]TestSent, error) {
	n := opts.Rows
	switch {
	case opts.To == "":
		return nil, errors.New("mailmerge: TestSend needs an address to send to")
	case n == 0:
		n = 3
	case n < 0 || n > MaxTestRows:
		return nil, fmt.Errorf("mailmerge: test rows %d: from 1 to %d", n, MaxTestRows)
	}
	var msgs []PreviewMessage
	if err := j.firstMessages(ctx, n, func(p PreviewMessage) { msgs = append(msgs, p) }); err != nil {
		return nil, err
	}
	var out []TestSent
	for _, p := range msgs {
		m := *p.Message
		m.To = []string{opts.To}
		if len(m.ListUnsubscribe) > 0 {
			m.ListUnsubscribe, m.ListUnsubscribeOneClick = []string{"mailto:" + opts.To}, false
		}
		if !opts.AsIs {
			m.Subject = "[test] " + m.Subject
			m.Headers.TrackOpens, m.Headers.TrackClicks, m.Headers.TrackGA = false, false, false
		}
		res, err := relay.Send(ctx, &m)
		out = append(out, TestSent{Line: p.Line, Index: p.Index, Address: p.Address, MessageID: res.MessageID, Err: err})
		if err != nil && !res.Delivered() {
			return out, err
		}
	}
	return out, nil
}

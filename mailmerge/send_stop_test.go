package mailmerge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestSendStop ends Send's context while the first message waits for the reply to its final
// dot (the relay's fault hook says when): no new row starts, and SendOptions.Stop says how
// the messages in flight end. With a grace period they finish (sent, not unknown); with
// none, or when Stop.Work ends too, they are cut off and the one past its final dot is
// unknown.
func TestSendStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		grace    time.Duration
		endWork  bool     // Stop.Work ends with the context
		first    job.Fate // the row whose final dot was out
		inFlight job.Fate // the other row taken before the context ended, waiting for the connection
	}{
		{"grace: the messages in flight finish", time.Minute, false, job.Done, job.Done},
		{"no grace: cut off with the context", 0, false, job.Unknown, job.NotAttempted},
		{"work ends: cut off at once", time.Minute, true, job.Unknown, job.NotAttempted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake, relay := startRelay(t, smtp.WithMaxConnections(1))
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			work, endWork := context.WithCancel(context.Background())
			defer endWork()
			fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Times: 1, Delay: 300 * time.Millisecond,
				Reached: func() {
					cancel() // the first row's final dot is out: stop starting rows
					if tt.endWork {
						endWork()
					}
				}})
			var rows []mailmerge.Row
			for i := range 5 {
				rows = append(rows, mailmerge.Row{Address: fmt.Sprintf("r%d@example.net", i)})
			}
			send, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "news@example.com", Subject: "S", Text: "T"},
				mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
			require.NoError(t, err)
			var fates []job.Fate
			res, err := send.Send(ctx, relay, mailmerge.SendOptions{MaxUnknown: anyRows,
				Stop: job.Stop{Grace: tt.grace, Work: work}, OnRow: func(r mailmerge.RowResult) { fates = append(fates, r.Fate) }})
			require.ErrorIs(t, err, context.Canceled)
			require.NotNil(t, res)
			defer res.Close()
			// Which of the two rows in flight reaches the final dot first is the pool's: the
			// fates are counted, not placed.
			var want job.Tally
			for _, f := range []job.Fate{tt.first, tt.inFlight, job.NotAttempted, job.NotAttempted, job.NotAttempted} {
				want.Add(f, 1)
			}
			var got job.Tally
			for _, f := range fates {
				got.Add(f, 1)
			}
			assert.Equal(t, want, got)
			assert.Equal(t, want, res.Tally)
		})
	}
}

package listsync

import (
	"errors"
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// checkIdentities asserts that every count of res adds up: the rows to the plan's rows, and
// each kind of change to the plan's count of it.
func checkIdentities(t *testing.T, pl *Plan, res *Result) {
	t.Helper()
	assert.Equal(t, pl.Rows, res.RowsDone+res.RowsFailed+res.RowsUnknown+res.RowsNotAttempted, "rows")
	assert.Equal(t, pl.Adds, res.Added+res.AlreadyPresent+res.AddFailed+res.AddUnknown+res.AddNotAttempted, "additions")
	assert.Equal(t, pl.Updates, res.Updated+res.UpdateFailed+res.UpdateUnknown+res.UpdateNotAttempted, "updates")
	assert.Equal(t, pl.Unsubscribes, res.Unsubscribed+res.UnsubscribeFailed+res.UnsubscribeUnknown+res.UnsubscribeNotAttempted, "unsubscriptions")
	assert.Equal(t, res.AddNotAttempted+res.UpdateNotAttempted+res.UnsubscribeNotAttempted, res.ChangesNotAttempted)
}

// outcomeRows is 30 new addresses and 5 updates of demoList's members' plan: a sync of them
// with UnsubscribeMissing leaves one member (gone@example.com) to unsubscribe.
func outcomeRows() []Row {
	var rows []Row
	for i := range 30 {
		rows = append(rows, Row{Email: emailN(i)})
	}
	for i := range 5 {
		rows = append(rows, Row{Email: fmt.Sprintf("member%d@example.com", i), Fields: map[string]string{"Plan": "gold"}})
	}
	return rows
}

// TestApplyOutcomeUnknown makes every call of one kind end without a proof of its effect,
// or with a proof that nothing ran, and checks how each row and change is counted: unknown
// is its own count, never failed, and the identities hold.
func TestApplyOutcomeUnknown(t *testing.T) {
	t.Parallel()
	lost := sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution, Times: 1000}
	tests := []struct {
		name    string
		command string
		fault   sendlooptest.Fault
		want    Result // the counts compared; the rest are checked by the identities
		outcome RowOutcome
		reason  string
	}{
		{"imports lose their answers", commands.SubscriberImport, lost,
			Result{AddUnknown: 30, Updated: 5, Unsubscribed: 1, RowsUnknown: 30}, RowUnknown,
			"may have been imported (run the sync again to know): "},
		{"a gateway's 504 to every import", commands.SubscriberImport, sendlooptest.Fault{Status: 504, Times: 1000},
			Result{AddUnknown: 30, Updated: 5, Unsubscribed: 1, RowsUnknown: 30}, RowUnknown,
			"may have been imported (run the sync again to know): "},
		{"updates lose their answers", commands.SubscriberUpdate, lost,
			Result{Added: 30, UpdateUnknown: 5, Unsubscribed: 1, RowsUnknown: 5}, RowUnknown,
			"may have been updated (run the sync again to know): "},
		{"imports refused with a 503", commands.SubscriberImport, sendlooptest.Fault{Status: 503, Times: 1000},
			Result{AddFailed: 30, Updated: 5, Unsubscribed: 1, Rejected: 30, RowsFailed: 30}, RowRefused, "not imported: "},
		{"unsubscriptions lose their answers", commands.LegacySubscriberUnsubscribe, sendlooptest.Fault{Status: 504, Times: 1000},
			Result{Added: 30, Updated: 5, UnsubscribeUnknown: 1}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := demoList(t)
			c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
				sendloop.WithRetry(sendloop.RetryPolicy(testkit.FastRetry)))
			require.NoError(t, err)
			var members []sendloop.ImportSubscriber
			for i := range 5 {
				members = append(members, sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("member%d@example.com", i)})
			}
			_, err = c.Subscribers.Import(testContext(t), 1, sendloop.SubscriberImportParams{Subscribers: members})
			require.NoError(t, err)
			keep := append(outcomeRows(), Row{Email: "ann@example.com", Fields: map[string]string{"Plan": "pro"}}, Row{Email: "bob@example.com", Fields: map[string]string{"Plan": "free"}})
			pl := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			require.Equal(t, 30, pl.Adds)
			require.Equal(t, 5, pl.Updates)
			require.Equal(t, 1, pl.Unsubscribes)

			srv.InjectFault(tt.command, tt.fault)
			var mu sync.Mutex
			var rejected []RejectedRow
			var unsubErrs []error
			var kinds []EventKind
			res, err := pl.Apply(testContext(t), ApplyOptions{
				MaxUnsubscribe: job.DefaultMaxUnsubscribe, MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited(),
				OnReject:   func(r RejectedRow) { rejected = append(rejected, r) },
				OnProgress: func(p ApplyProgress) { mu.Lock(); kinds = append(kinds, p.Kind); mu.Unlock() },
				OnUnsubscribeError: func(_ string, err error) {
					mu.Lock()
					unsubErrs = append(unsubErrs, err)
					mu.Unlock()
				},
			})
			require.NoError(t, err)
			checkIdentities(t, pl, res)
			got := Result{Added: res.Added, AddFailed: res.AddFailed, AddUnknown: res.AddUnknown,
				Updated: res.Updated, UpdateFailed: res.UpdateFailed, UpdateUnknown: res.UpdateUnknown,
				Unsubscribed: res.Unsubscribed, UnsubscribeFailed: res.UnsubscribeFailed, UnsubscribeUnknown: res.UnsubscribeUnknown,
				Rejected: res.Rejected, RowsFailed: res.RowsFailed, RowsUnknown: res.RowsUnknown}
			assert.Equal(t, tt.want, got)
			assert.Zero(t, res.ChangesNotAttempted)
			assert.Contains(t, kinds, EventAdd)
			assert.Contains(t, kinds, EventUnsubscribe)

			require.Len(t, rejected, tt.want.RowsUnknown+tt.want.RowsFailed)
			for _, r := range rejected {
				assert.Equal(t, tt.outcome, r.Outcome)
				assert.True(t, strings.HasPrefix(r.Reason, tt.reason), r.Reason)
				assert.Equal(t, tt.outcome == RowUnknown, errorsIsUnknown(r.Err), "%v", r.Err)
			}
			if tt.want.UnsubscribeUnknown > 0 {
				require.Len(t, unsubErrs, 1)
				assert.ErrorIs(t, unsubErrs[0], sendloop.ErrOutcomeUnknown)
			}

			// The same sync again settles every unknown row: the changes that ran are found
			// made, the others are made.
			srv.ClearFaults()
			again := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			res2, err := again.Apply(testContext(t), DefaultApplyOptions())
			require.NoError(t, err)
			checkIdentities(t, again, res2)
			assert.Zero(t, res2.RowsUnknown+res2.RowsFailed)
			final := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			assert.Zero(t, final.Adds+final.Updates+final.Unsubscribes, "a third plan finds nothing to do")
		})
	}
}

func errorsIsUnknown(err error) bool { return errors.Is(err, sendloop.ErrOutcomeUnknown) }

package listsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// checkIdentities asserts that every count of res adds up: the rows to the plan's rows,
// each kind of change to the plan's count of it, no count below zero, and (rows not nil)
// OnRow's rows to the tallies.
func checkIdentities(t *testing.T, pl *Plan, res *Result, rows []RowResult) {
	t.Helper()
	assert.Equal(t, pl.Rows, res.Rows.Total(), "rows")
	assert.Equal(t, pl.Adds, res.Adds.Total(), "additions")
	assert.Equal(t, pl.Updates, res.Updates.Total(), "updates")
	assert.Equal(t, pl.Unsubscribes, res.Unsubscribes.Total(), "unsubscriptions")
	for name, tally := range map[string]job.Tally{"rows": res.Rows, "adds": res.Adds, "updates": res.Updates, "unsubscribes": res.Unsubscribes} {
		for _, f := range job.Fates() {
			assert.GreaterOrEqual(t, tally.Of(f), 0, "%s %v", name, f)
		}
	}
	assert.Equal(t, pl.Unchanged+res.Adds.Done+res.Updates.Done, res.Rows.Done, "rows done")
	assert.Equal(t, pl.SkippedUnsubscribed+pl.SkippedStatus, res.Rows.Skipped, "rows skipped")
	assert.Equal(t, pl.SkippedSuppressed, res.Rows.Suppressed, "rows suppressed")
	assert.Equal(t, res.Adds.Unknown+res.Updates.Unknown, res.Rows.Unknown, "rows unknown")
	assert.Equal(t, res.Adds.Refused+res.Updates.Refused, res.Rows.Refused, "rows refused")
	assert.LessOrEqual(t, res.AlreadyPresent, res.Adds.Done)
	assert.LessOrEqual(t, res.Untraced, res.Adds.Refused)
	if !res.Interrupted {
		assert.Zero(t, res.Rows.NotAttempted+res.ChangesNotAttempted(), "a run that finished leaves nothing")
	}
	if rows == nil {
		return
	}
	heard := map[string]job.Tally{}
	for _, r := range rows {
		require.True(t, r.Fate.Valid(), "%+v", r)
		tally := heard[r.Kind]
		tally.Add(r.Fate, 1)
		heard[r.Kind] = tally
		assert.Equal(t, r.Fate == job.Done, r.Reason == "", "a reason for every row not done: %+v", r)
	}
	adds := res.Adds
	adds.Done, adds.NotAttempted, adds.Refused = 0, 0, adds.Refused-res.Untraced // additions done are counted, not heard of
	assert.Equal(t, adds, heard[KindAdd], "the additions OnRow heard of")
	updates, unsubs := res.Updates, res.Unsubscribes
	updates.NotAttempted, unsubs.NotAttempted = 0, 0
	assert.Equal(t, updates, heard[KindUpdate], "the updates OnRow heard of")
	assert.Equal(t, unsubs, heard[KindUnsubscribe], "the unsubscriptions OnRow heard of")
	assert.Equal(t, job.Tally{Rejected: res.Rows.Rejected - res.Adds.Rejected - res.Updates.Rejected}, heard[KindReject], "the rejected rows OnRow heard of")
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

// TestApplyTallies makes the calls of one kind fail in turn (their answers lost, refused,
// or the run stopped before it began) and checks how each row and change is counted: each
// kind's tally adds up to the plan's count of it, the rows' to the plan's rows, unknown is
// its own fate, never a refusal, and OnRow hears of the rows the tallies count.
func TestApplyTallies(t *testing.T) {
	t.Parallel()
	lost := sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution, Times: 1000}
	tests := []struct {
		name                  string
		command               string
		fault                 sendlooptest.Fault
		interrupted           bool
		adds, updates, unsubs job.Tally
		reason                string // the prefix of the reasons of the rows the fault hit
	}{
		{name: "no fault", adds: job.Tally{Done: 30}, updates: job.Tally{Done: 5}, unsubs: job.Tally{Done: 1}},
		{name: "imports lose their answers", command: commands.SubscriberImport, fault: lost,
			adds: job.Tally{Unknown: 30}, updates: job.Tally{Done: 5}, unsubs: job.Tally{Done: 1},
			reason: "may have been imported (run the sync again to know): "},
		{name: "a gateway's 504 to every import", command: commands.SubscriberImport, fault: sendlooptest.Fault{Status: 504, Times: 1000},
			adds: job.Tally{Unknown: 30}, updates: job.Tally{Done: 5}, unsubs: job.Tally{Done: 1},
			reason: "may have been imported (run the sync again to know): "},
		{name: "updates lose their answers", command: commands.SubscriberUpdate, fault: lost,
			adds: job.Tally{Done: 30}, updates: job.Tally{Unknown: 5}, unsubs: job.Tally{Done: 1},
			reason: "may have been updated (run the sync again to know): "},
		{name: "imports refused with a 503", command: commands.SubscriberImport, fault: sendlooptest.Fault{Status: 503, Times: 1000},
			adds: job.Tally{Refused: 30}, updates: job.Tally{Done: 5}, unsubs: job.Tally{Done: 1}, reason: "not imported: "},
		{name: "updates refused with a 503", command: commands.SubscriberUpdate, fault: sendlooptest.Fault{Status: 503, Times: 1000},
			adds: job.Tally{Done: 30}, updates: job.Tally{Refused: 5}, unsubs: job.Tally{Done: 1}, reason: "update failed: "},
		{name: "unsubscriptions lose their answers", command: commands.LegacySubscriberUnsubscribe, fault: sendlooptest.Fault{Status: 504, Times: 1000},
			adds: job.Tally{Done: 30}, updates: job.Tally{Done: 5}, unsubs: job.Tally{Unknown: 1},
			reason: "may have been unsubscribed (run the sync again to know): "},
		{name: "interrupted before the first change", interrupted: true,
			adds: job.Tally{NotAttempted: 30}, updates: job.Tally{NotAttempted: 5}, unsubs: job.Tally{NotAttempted: 1}},
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
			keep := append(outcomeRows(), Row{Email: "ann@example.com", Fields: map[string]string{"Plan": "pro"}},
				Row{Email: "bob@example.com", Fields: map[string]string{"Plan": "free"}}, Row{Email: "not an address"})
			pl := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			require.Equal(t, 30, pl.Adds)
			require.Equal(t, 5, pl.Updates)
			require.Equal(t, 1, pl.Unsubscribes)
			require.Equal(t, 1, pl.Rejected)

			if tt.command != "" {
				srv.InjectFault(tt.command, tt.fault)
			}
			ctx := testContext(t)
			if tt.interrupted {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			var mu sync.Mutex
			rows := []RowResult{}
			var kinds []string
			res, err := pl.Apply(ctx, ApplyOptions{
				MaxUnsubscribe: job.DefaultMaxUnsubscribe, MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited(),
				OnRow: func(r RowResult) { rows = append(rows, r) },
				OnProgress: func(p job.Progress) {
					mu.Lock()
					defer mu.Unlock()
					kinds = append(kinds, p.Kind)
					assert.Equal(t, p.Done, p.Tally.Total())
					assert.LessOrEqual(t, p.Done, p.Total)
				},
			})
			require.NoError(t, err)
			checkIdentities(t, pl, res, rows)
			assert.Equal(t, tt.interrupted, res.Interrupted)
			assert.Equal(t, tt.adds, res.Adds, "adds")
			assert.Equal(t, tt.updates, res.Updates, "updates")
			assert.Equal(t, tt.unsubs, res.Unsubscribes, "unsubscribes")
			if tt.interrupted {
				assert.Equal(t, 36, res.ChangesNotAttempted())
				assert.Equal(t, pl.Rows-pl.Unchanged, res.Rows.NotAttempted, "the reject too is left to the next run")
				return
			}
			assert.Equal(t, 1, res.Rows.Rejected, "the row without an address")
			assert.Contains(t, kinds, KindAdd)
			assert.Contains(t, kinds, KindUnsubscribe)
			for _, r := range rows {
				if r.Fate == job.Done || r.Kind == KindReject {
					continue
				}
				assert.True(t, strings.HasPrefix(r.Reason, tt.reason), r.Reason)
				assert.Equal(t, r.Fate == job.Unknown, errorsIsUnknown(r.Err), "%v", r.Err)
			}

			// The same sync again settles every unknown row: the changes that ran are found
			// made, the others are made.
			srv.ClearFaults()
			again := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			res2, err := again.Apply(testContext(t), ApplyOptions{MaxUnsubscribe: job.DefaultMaxUnsubscribe, MaxRejects: job.Rows(1)})
			require.NoError(t, err)
			checkIdentities(t, again, res2, nil)
			assert.Zero(t, res2.Rows.Unknown+res2.Rows.Refused)
			final := planRows(t, c, Rows(keep), Options{UnsubscribeMissing: true})
			assert.Zero(t, final.Adds+final.Updates+final.Unsubscribes, "a third plan finds nothing to do")
		})
	}
}

func errorsIsUnknown(err error) bool { return errors.Is(err, sendloop.ErrOutcomeUnknown) }

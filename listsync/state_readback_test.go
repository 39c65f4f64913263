package listsync

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"net/url"
)

// decided are a plan's decisions, to compare a state run's with a full run's.
type decided struct{ Adds, Updates, Unsubscribes, Unchanged, SkippedUnsubscribed, SkippedSuppressed int }

func countsOf(pl *Plan) decided {
	return decided{pl.Adds, pl.Updates, pl.Unsubscribes, pl.Unchanged, pl.SkippedUnsubscribed, pl.SkippedSuppressed}
}

// fullPlan is the plan a full run makes of src, applied by no one.
func (w *stateWorld) fullPlan(t *testing.T, src Source, opts Options) decided {
	t.Helper()
	opts.TempDir = t.TempDir()
	jb, err := New(testContext(t), w.c, w.listID, src, opts)
	require.NoError(t, err)
	pl, err := jb.Plan(testContext(t))
	require.NoError(t, err)
	defer pl.Close()
	return countsOf(pl)
}

// TestStateRunGivesAFullRunsPlan: after a change on the service side that the state does
// not hold, a state run plans what a full run plans, and applies no row's values to
// another member: an address changed by subscriber.update (the state's subscriber ID now
// names another address), a member the state holds as unsubscribed who subscribed again,
// a member the state holds as subscribed who unsubscribed, one deleted.
func TestStateRunGivesAFullRunsPlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, w *stateWorld)
		rows   func() []Row
		want   decided
		after  map[string][2]string // members after the state run
	}{
		{
			name: "address changed on the service side",
			change: func(t *testing.T, w *stateWorld) {
				sub, err := w.c.Subscribers.Get(testContext(t), w.listID, sendloop.SubscriberGetParams{EmailAddress: emailN(1)})
				require.NoError(t, err)
				require.NoError(t, w.c.Subscribers.Update(testContext(t), w.listID, sendloop.SubscriberUpdateParams{
					SubscriberID: sub.SubscriberID, EmailAddress: "renamed@example.org"}))
			},
			rows: func() []Row {
				rows := rowsOf(3)
				rows[1].Fields["Plan"] = "p7" // the old address's row changes
				return rows
			},
			want: decided{Adds: 1, Unchanged: 2},
			after: map[string][2]string{emailN(0): {"Subscribed", "p0"}, emailN(1): {"Subscribed", "p7"},
				emailN(2): {"Subscribed", "p0"}, "renamed@example.org": {"Subscribed", "p0"}},
		},
		{
			name: "resubscribed on the service side",
			change: func(t *testing.T, w *stateWorld) {
				// user1 was unsubscribed when the state was written (see below); now again.
				_, err := w.c.Subscribers.Subscribe(testContext(t), w.listID, sendloop.SubscriberSubscribeParams{
					EmailAddress: emailN(1), SubscriptionIP: "1.2.3.4"})
				require.NoError(t, err)
			},
			rows: func() []Row {
				rows := rowsOf(3)
				rows[1].Fields["Plan"] = "p7"
				return rows
			},
			want: decided{Updates: 1, Unchanged: 2},
			after: map[string][2]string{emailN(0): {"Subscribed", "p0"}, emailN(1): {"Subscribed", "p7"},
				emailN(2): {"Subscribed", "p0"}},
		},
		{
			name: "deleted on the service side",
			change: func(t *testing.T, w *stateWorld) {
				_, err := w.c.Legacy().Call(testContext(t), "Subscriber.Delete", url.Values{"ListID": {"1"}, "EmailAddress": {emailN(2)}})
				require.NoError(t, err)
			},
			rows: func() []Row {
				rows := rowsOf(3)
				rows[2].Fields["Plan"] = "p7"
				return rows
			},
			want: decided{Adds: 1, Unchanged: 2},
			after: map[string][2]string{emailN(0): {"Subscribed", "p0"}, emailN(1): {"Subscribed", "p0"},
				emailN(2): {"Subscribed", "p7"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newStateWorld(t, 3)
			if tt.name == "resubscribed on the service side" {
				_, err := w.c.Subscribers.Unsubscribe(testContext(t), w.listID, sendloop.SubscriberUnsubscribeParams{
					EmailAddress: emailN(1), UnsubscriptionIP: "1.2.3.4"})
				require.NoError(t, err)
			}
			w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
			tt.change(t, w)
			rows := tt.rows()
			require.Equal(t, tt.want, w.fullPlan(t, Rows(rows), Options{}), "the full run's plan")
			run := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: job.Percent(100)})
			require.True(t, run.plan.State.Used, run.plan.State.Reason)
			assert.Equal(t, tt.want, countsOf(run.plan), "the state run's plan")
			assert.Equal(t, tt.after, w.members(t))
			// The next state run holds the list as it is: nothing to do.
			again := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: job.Percent(100)})
			assert.Equal(t, decided{Unchanged: 3}, countsOf(again.plan))
		})
	}
}

// TestStateDriftSeesBalancedChanges: a sign-up offset by an unsubscription on the service
// side leaves the subscribed count as the state holds it, but the list's activity chart
// counts both: beyond MaxDrift the run reads the members; within it the run is from the
// state, its drift the chart's.
func TestStateDriftSeesBalancedChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		maxDrift job.Budget
		used     bool
		reason   string
	}{
		{name: "beyond the limit", maxDrift: job.DefaultMaxDrift,
			reason: "1 subscriptions and 1 unsubscriptions on the list since the state (its activity chart): a drift of 2, beyond 5% (1)"},
		{name: "within it", maxDrift: job.Percent(10), used: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newStateWorld(t, 20)
			w.sync(t, Rows(rowsOf(20)), Options{}, StateOptions{})
			ctx := testContext(t)
			_, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: "walkin@example.org", SubscriptionIP: "1.2.3.4"})
			require.NoError(t, err)
			_, err = w.c.Subscribers.Unsubscribe(ctx, w.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: emailN(3), UnsubscriptionIP: "1.2.3.4"})
			require.NoError(t, err)
			run := w.sync(t, Rows(rowsOf(20)), Options{}, StateOptions{MaxDrift: tt.maxDrift})
			assert.Equal(t, StateUse{Used: tt.used, Reason: tt.reason, Drift: 2}, run.plan.State)
			assert.Equal(t, 1, run.by["Chart.ListActivity"], "%v", run.by)
			// After a full run the state holds the list as read: no drift. A run from the
			// state holds the changes it did not read: they count again.
			again := w.sync(t, Rows(rowsOf(20)), Options{}, StateOptions{MaxDrift: tt.maxDrift})
			if !tt.used {
				assert.Equal(t, StateUse{Used: true}, again.plan.State)
				return
			}
			assert.Equal(t, StateUse{Used: true, Drift: 2}, again.plan.State)
			// A run from the state that changes the list writes a new state, which still
			// counts the changes on the service side it did not read.
			rows := rowsOf(20)
			rows[0].Fields["Plan"] = "p1"
			changed := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: tt.maxDrift})
			require.True(t, changed.plan.State.Used)
			require.Equal(t, 1, changed.res.Updates.Done)
			after := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: tt.maxDrift})
			assert.Equal(t, StateUse{Used: true, Drift: 2}, after.plan.State)
		})
	}
}

// TestStateOlderThanTheChartIsReadInFull: a state whose activity base is older than the
// days the service charts cannot measure the changes since: the run reads the members.
func TestStateOlderThanTheChartIsReadInFull(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 3)
	w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
	f, err := os.Open(w.path)
	require.NoError(t, err)
	h, entries, err := readAllState(f, w.srv.APIKey)
	f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, h.Activity.From, "a full run records the chart's base")
	h.Activity.From = "2010-01-01"
	writeTestState(t, w.path, w.srv.APIKey, h, entries)
	run := w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{MaxAge: -1})
	assert.False(t, run.plan.State.Used)
	assert.Contains(t, run.plan.State.Reason, "older than the 3660 days the service charts")
}

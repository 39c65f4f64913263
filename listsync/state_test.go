package listsync

import (
	"context"
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// stateWorld is a fake with a list of members and a state file, counting the calls.
type stateWorld struct {
	srv    *sendlooptest.Server
	c      *sendloop.Client
	listID int
	path   string

	run   atomic.Int64 // the number of the sync under way, sent with each call
	mu    sync.Mutex
	calls map[string]int // the calls of the sync under way
}

// runHeader carries a call's sync number from stateWorld's client to its server.
const runHeader = "X-Test-Run"

// taggingTransport sends each call with the number of the sync that makes it: a page read
// ahead past a list's end may reach the server after its sync has returned (the client
// cancels it, but its request may be out), and counts for that sync, not the next one.
type taggingTransport struct {
	base http.RoundTripper
	run  *atomic.Int64
}

func (tt taggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(runHeader, strconv.FormatInt(tt.run.Load(), 10))
	return tt.base.RoundTrip(req)
}

// newStateWorld makes list 1 with the field Plan (1) and members user0…user(n-1), each
// with Plan "p0".
func newStateWorld(t *testing.T, n int) *stateWorld {
	t.Helper()
	w := &stateWorld{calls: map[string]int{}, path: filepath.Join(t.TempDir(), "list.state")}
	w.srv = sendlooptest.NewServer(t, sendlooptest.WithRequestLog(0), sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if r.Header.Get(runHeader) == strconv.FormatInt(w.run.Load(), 10) {
			w.calls[r.Command]++
		}
	}))
	var err error
	w.c, err = sendloop.NewClient(w.srv.APIKey, sendloop.WithBaseURL(w.srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: taggingTransport{base: testkit.Transport(), run: &w.run}}),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: time.Millisecond, MaxWait: 10 * time.Millisecond}))
	require.NoError(t, err)
	ctx := testContext(t)
	w.listID, err = w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Nightly", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	_, err = w.srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	subs := make([]sendloop.ImportSubscriber, n)
	for i := range subs {
		subs[i] = sendloop.ImportSubscriber{EmailAddress: emailN(i), Fields: sendloop.CustomFields{1: "p0"}}
	}
	if n > 0 {
		_, err = w.c.Subscribers.ImportAll(ctx, w.listID, func(yield func(sendloop.ImportSubscriber) bool) {
			for _, s := range subs {
				if !yield(s) {
					return
				}
			}
		}, sendloop.ImportOptions{})
		require.NoError(t, err)
	}
	return w
}

// rowsOf returns the rows naming user0…user(n-1) with Plan "p0".
func rowsOf(n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{Email: emailN(i), Fields: map[string]string{"Plan": "p0"}}
	}
	return rows
}

// callCount returns the calls of the sync under way, in all and by command, and starts
// the next.
func (w *stateWorld) callCount() (int, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.run.Add(1)
	n := 0
	for _, k := range w.calls {
		n += k
	}
	by := w.calls
	w.calls = map[string]int{}
	return n, by
}

// syncRun is one sync with a state: its plan, result and calls.
type syncRun struct {
	plan  *Plan
	res   *Result
	calls int
	by    map[string]int
}

// sync plans and applies src against the list with the state, and counts the calls.
func (w *stateWorld) sync(t *testing.T, src Source, opts Options, so StateOptions) syncRun {
	t.Helper()
	ctx := testContext(t)
	w.callCount()
	if so.MaxDrift == (job.Budget{}) {
		so.MaxDrift = job.DefaultMaxDrift // as the CLI, and DefaultStateOptions
	}
	if so.Path == "" {
		so.Path = w.path
	}
	opts.State = &so
	opts.TempDir = t.TempDir()
	jb, err := New(ctx, w.c, w.listID, src, opts)
	require.NoError(t, err)
	pl, err := jb.Plan(ctx)
	require.NoError(t, err)
	defer pl.Close()
	res, err := pl.Apply(ctx, ApplyOptions{MaxUnsubscribe: job.Percent(100),
		OnRow: func(r RowResult) {
			if r.Fate != job.Done {
				t.Errorf("rejected: %+v", r)
			}
		}})
	require.NoError(t, err)
	n, by := w.callCount()
	return syncRun{plan: pl, res: res, calls: n, by: by}
}

// members returns every member of the list by address: status and Plan.
func (w *stateWorld) members(t *testing.T) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for m, err := range w.c.Subscribers.Members(testContext(t), w.listID, sendloop.SubscriberMembersParams{FieldIDs: []int{1}}) {
		require.NoError(t, err)
		out[m.EmailAddress] = [2]string{string(m.SubscriptionStatus), m.Values[0]}
	}
	return out
}

// planned returns a plan's changes.
func planned(pl *Plan) [3]int { return [3]int{pl.Adds, pl.Updates, pl.Unsubscribes} }

func TestStateRunUnchangedListCostsFiveCalls(t *testing.T) {
	t.Parallel()
	const n = 20000
	w := newStateWorld(t, n)
	src := Rows(rowsOf(n))

	first := w.sync(t, src, Options{}, StateOptions{})
	assert.Equal(t, StateUse{Reason: "no state yet", NoOwners: true}, first.plan.State)
	assert.Equal(t, [3]int{}, planned(first.plan))
	info, err := os.Stat(w.path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	t.Logf("state of %d members: %d bytes, %.1f per member", n, info.Size(), float64(info.Size())/n)

	before, err := os.ReadFile(w.path)
	require.NoError(t, err)
	again := w.sync(t, src, Options{UnsubscribeMissing: true}, StateOptions{})
	assert.Equal(t, StateUse{Used: true}, again.plan.State)
	after, err := os.ReadFile(w.path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "an unchanged run leaves the state as it was, its mark cleared")
	assert.Equal(t, [3]int{}, planned(again.plan))
	assert.Equal(t, n, again.plan.Unchanged)
	assert.Equal(t, n, again.plan.Members)
	assert.LessOrEqual(t, again.calls, 5, "%v", again.by)
	assert.Zero(t, again.by["subscriber.browse"], "no member is read")

	full := w.sync(t, src, Options{UnsubscribeMissing: true}, StateOptions{Full: true})
	assert.Equal(t, StateUse{Reason: "a full run was asked for"}, full.plan.State)
	assert.Equal(t, [3]int{}, planned(full.plan), "the state run left nothing for a full run")
}

// TestStateRunOnePercentChangedStaysWithinTheBudget: additions, updates and
// unsubscriptions cost one call each, plus the imports' batches and four reads.
func TestStateRunOnePercentChangedStaysWithinTheBudget(t *testing.T) {
	t.Parallel()
	const n = 10000
	w := newStateWorld(t, n)
	w.sync(t, Rows(rowsOf(n)), Options{}, StateOptions{})

	rows := rowsOf(n)
	for i := 0; i < n/100; i++ { // 1 %: a third updated, a third gone, a third new
		switch i % 3 {
		case 0:
			rows[i*97].Fields["Plan"] = "p1"
		case 1:
			rows[i*97].Email = fmt.Sprintf("new%d@example.net", i)
		case 2:
			rows = append(rows, Row{Email: fmt.Sprintf("more%d@example.net", i), Fields: map[string]string{"Plan": "p2"}})
		}
	}
	const batch = 1000
	run := w.sync(t, Rows(rows), Options{UnsubscribeMissing: true}, StateOptions{})
	require.True(t, run.plan.State.Used, run.plan.State.Reason)
	pl := run.plan
	assert.Equal(t, [3]int{66, 34, 33}, planned(pl))
	// Each update is read back first (subscriber.get by its address), as each addition.
	budget := pl.Adds + 2*pl.Updates + pl.Unsubscribes + (pl.Adds+batch-1)/batch + 5
	assert.LessOrEqual(t, run.calls, budget, "%v", run.by)
	t.Logf("%d calls, budget %d: %v", run.calls, budget, run.by)
	assert.Equal(t, 66, run.res.Adds.Done)
	assert.Equal(t, 34, run.res.Updates.Done)
	assert.Equal(t, 33, run.res.Unsubscribes.Done)

	full := w.sync(t, Rows(rows), Options{UnsubscribeMissing: true}, StateOptions{Full: true})
	assert.Equal(t, [3]int{}, planned(full.plan), "a full run afterwards plans nothing")
	again := w.sync(t, Rows(rows), Options{UnsubscribeMissing: true}, StateOptions{})
	assert.Equal(t, [3]int{}, planned(again.plan))
	assert.LessOrEqual(t, again.calls, 5, "%v", again.by)
}

// TestStateRunNeverResubscribes: an address the state does not know that is a member who
// unsubscribed is read back and skipped, not imported; one the state holds as subscribed
// that unsubscribed since, whose row changed, is read back before its update and skipped.
func TestStateRunNeverResubscribes(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 3)
	ctx := testContext(t)
	w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})

	// Since the state: late@ signed up and unsubscribed; user1 unsubscribed.
	_, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: "late@example.com", SubscriptionIP: "1.2.3.4"})
	require.NoError(t, err)
	for _, e := range []string{"late@example.com", emailN(1)} {
		_, err = w.c.Subscribers.Unsubscribe(ctx, w.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: e, UnsubscriptionIP: "1.2.3.4"})
		require.NoError(t, err)
	}
	rows := append(rowsOf(3), Row{Email: "Late@Example.com", Fields: map[string]string{"Plan": "p9"}})
	rows[1].Fields["Plan"] = "p5"
	run := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: job.Percent(100)})
	require.True(t, run.plan.State.Used, run.plan.State.Reason)
	assert.Zero(t, run.plan.Adds)
	// user1's row changed: the update is read back first, and skipped as a full run does.
	assert.Equal(t, 2, run.plan.SkippedUnsubscribed)
	assert.Zero(t, run.plan.Updates)
	assert.Equal(t, 2, run.by["subscriber.get"])
	assert.Zero(t, run.by["subscriber.import"])
	for _, e := range []string{"late@example.com", emailN(1)} {
		status, _ := w.srv.SubscriberStatus(w.listID, e)
		assert.Equal(t, "Unsubscribed", status, e)
	}

	// The next state run knows late@ from the state: no call for it.
	run = w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: job.Percent(100)})
	require.True(t, run.plan.State.Used, run.plan.State.Reason)
	assert.Equal(t, [3]int{}, planned(run.plan))
	assert.Zero(t, run.by["subscriber.get"])
}

// TestStateRunReadsBackAMemberItDoesNotKnow: an address added on the service side since
// the state is read back: unchanged or updated, not imported.
func TestStateRunReadsBackAMemberItDoesNotKnow(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 2)
	ctx := testContext(t)
	w.sync(t, Rows(rowsOf(2)), Options{}, StateOptions{})
	_, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: "a@example.com", SubscriptionIP: "1.2.3.4", Fields: sendloop.CustomFields{1: "x"}})
	require.NoError(t, err)
	_, err = w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: "b@example.com", SubscriptionIP: "1.2.3.4", Fields: sendloop.CustomFields{1: "y"}})
	require.NoError(t, err)
	rows := append(rowsOf(2), Row{Email: "a@example.com", Fields: map[string]string{"Plan": "x"}},
		Row{Email: "b@example.com", Fields: map[string]string{"Plan": "z"}})
	run := w.sync(t, Rows(rows), Options{}, StateOptions{MaxDrift: job.Percent(100)})
	require.True(t, run.plan.State.Used)
	assert.Equal(t, [3]int{0, 1, 0}, planned(run.plan))
	assert.Equal(t, 3, run.plan.Unchanged)
	assert.Equal(t, 2, run.by["subscriber.get"])
	assert.Equal(t, [2]string{"Subscribed", "z"}, w.members(t)["b@example.com"])
}

// TestStateFallsBackToAFullRun: a state that cannot be trusted makes the run a full one,
// which says why and writes a fresh state.
func TestStateFallsBackToAFullRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		before   func(t *testing.T, w *stateWorld) // after the first sync
		opts     StateOptions
		fields   bool // the rows give a second field
		reason   string
		noOwners bool // the state no longer says which members are the sync's
	}{
		{name: "missing", before: func(t *testing.T, w *stateWorld) { require.NoError(t, os.Remove(w.path)) }, reason: "no state yet", noOwners: true},
		{name: "unreadable", before: func(t *testing.T, w *stateWorld) {
			raw, err := os.ReadFile(w.path)
			require.NoError(t, err)
			raw[len(raw)-3] ^= 1
			require.NoError(t, os.WriteFile(w.path, raw, 0o600))
		}, reason: "unreadable: damaged or cut off", noOwners: true},
		{name: "cut off", before: func(t *testing.T, w *stateWorld) {
			raw, err := os.ReadFile(w.path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(w.path, raw[:len(raw)-20], 0o600))
		}, reason: "unreadable: damaged or cut off", noOwners: true},
		{name: "another account", before: func(t *testing.T, w *stateWorld) {
			writeTestState(t, w.path, "another-key", stateHeader{BaseURL: w.c.BaseURL(), ListID: w.listID}, nil)
		}, reason: "written for another account (another API key)", noOwners: true},
		{name: "another list", before: func(t *testing.T, w *stateWorld) {
			other, err := w.c.Lists.Create(testContext(t), sendloop.ListCreateParams{Name: "Other", OptInMode: sendloop.OptInSingle})
			require.NoError(t, err)
			id := w.listID
			w.listID = other
			_, err = w.srv.DefineCustomField(other, sendlooptest.CustomField{Name: "Plan"})
			require.NoError(t, err)
			w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
			w.listID = id
		}, reason: "written for list 2", noOwners: true},
		{name: "another mapping", fields: true, before: func(t *testing.T, w *stateWorld) {
			_, err := w.srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Tier"})
			require.NoError(t, err)
		}, reason: "written for another mapping of the source's fields"},
		{name: "stale", opts: StateOptions{Now: func() time.Time { return time.Now().Add(7*24*time.Hour + time.Minute) }}, reason: "older than 7 days"},
		{name: "shorter age", opts: StateOptions{MaxAge: time.Nanosecond}, reason: "older than 1ns"},
		{name: "in use", before: func(t *testing.T, w *stateWorld) { require.NoError(t, markStateInUse(w.path, true)) }, reason: "marked in use by a run that did not finish"},
		{name: "drift", before: func(t *testing.T, w *stateWorld) {
			for i := range 3 { // 3 of 20 since the state: beyond 5 %
				_, err := w.c.Subscribers.Subscribe(testContext(t), w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: fmt.Sprintf("s%d@example.org", i), SubscriptionIP: "1.2.3.4"})
				require.NoError(t, err)
			}
		}, reason: "the list has 23 subscribed members, the state 20: a drift of 3, beyond 5% (1)"},
		{name: "full", opts: StateOptions{Full: true}, reason: "a full run was asked for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newStateWorld(t, 20)
			w.sync(t, Rows(rowsOf(20)), Options{}, StateOptions{})
			if tt.before != nil {
				tt.before(t, w)
			}
			src := Rows(rowsOf(20))
			if tt.fields {
				rows := rowsOf(20)
				for i := range rows {
					rows[i].Fields["Tier"] = ""
				}
				src = Rows(rows)
			}
			run := w.sync(t, src, Options{}, tt.opts)
			assert.Equal(t, StateUse{Reason: tt.reason, Drift: run.plan.State.Drift, NoOwners: tt.noOwners}, run.plan.State)
			assert.Positive(t, run.by["subscriber.browse"], "the members are read")
			again := w.sync(t, src, Options{}, StateOptions{MaxDrift: job.Percent(100)})
			assert.True(t, again.plan.State.Used, "a fresh state: %s", again.plan.State.Reason)
		})
	}
}

func TestStateDryRunAndLock(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 3)
	ctx := testContext(t)
	so := &StateOptions{Path: w.path}
	jb, err := New(ctx, w.c, w.listID, Rows(rowsOf(3)), Options{State: so, TempDir: t.TempDir()})
	require.NoError(t, err)
	pl, err := jb.Plan(ctx)
	require.NoError(t, err)

	_, err = jb.Plan(ctx)
	require.ErrorIs(t, err, errStateLocked, "a second run while the first holds the state")

	require.NoError(t, pl.Close())
	_, err = os.Stat(w.path)
	require.ErrorIs(t, err, os.ErrNotExist, "a plan not applied writes no state")
	pl, err = jb.Plan(ctx)
	require.NoError(t, err, "the lock is released")
	require.NoError(t, pl.Close())
}

// TestStateInterruptedRunLeavesItInUse: a run stopped before it finished leaves the mark:
// the next run is a full one.
func TestStateInterruptedRunLeavesItInUse(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 3)
	w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
	ctx := testContext(t)
	jb, err := New(ctx, w.c, w.listID, Rows(append(rowsOf(3), Row{Email: "new@example.com", Fields: map[string]string{"Plan": "x"}})),
		Options{State: &StateOptions{Path: w.path}, TempDir: t.TempDir()})
	require.NoError(t, err)
	pl, err := jb.Plan(ctx)
	require.NoError(t, err)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	res, err := pl.Apply(stopped, ApplyOptions{})
	require.NoError(t, err)
	require.True(t, res.Interrupted)
	require.NoError(t, pl.Close())
	run := w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
	assert.Equal(t, "marked in use by a run that did not finish", run.plan.State.Reason)
}

// stateEntries reads the entries of the state at path.
func stateEntries(t *testing.T, path, key string) map[string][]stateEntry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, entries, err := readAllState(f, key)
	require.NoError(t, err)
	out := map[string][]stateEntry{}
	for _, e := range entries {
		out[e.Email] = append(out[e.Email], e)
	}
	return out
}

// TestStateRunReadsBackAnAdditionOfUnknownOutcome: an addition whose outcome is unknown is
// marked so in the state; the next run reads it back, and the state then holds it once,
// known.
func TestStateRunReadsBackAnAdditionOfUnknownOutcome(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 3)
	ctx := testContext(t)
	w.sync(t, Rows(rowsOf(3)), Options{}, StateOptions{})
	rows := append(rowsOf(3), Row{Email: "new@example.com", Fields: map[string]string{"Plan": "x"}})

	w.srv.InjectFault("subscriber.import", sendlooptest.Fault{Times: 50, Reset: sendlooptest.ResetAfterExecution})
	jb, err := New(ctx, w.c, w.listID, Rows(rows), Options{State: &StateOptions{Path: w.path}, TempDir: t.TempDir()})
	require.NoError(t, err)
	pl, err := jb.Plan(ctx)
	require.NoError(t, err)
	res, err := pl.Apply(ctx, ApplyOptions{MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited()})
	require.NoError(t, err)
	require.NoError(t, pl.Close())
	require.Equal(t, 1, res.Adds.Unknown)
	w.srv.ClearFaults()
	got := stateEntries(t, w.path, w.srv.APIKey)
	require.Len(t, got["new@example.com"], 1)
	assert.True(t, got["new@example.com"][0].Unknown)

	run := w.sync(t, Rows(rows), Options{}, StateOptions{})
	require.True(t, run.plan.State.Used, run.plan.State.Reason)
	assert.Equal(t, [3]int{}, planned(run.plan))
	assert.Equal(t, 4, run.plan.Unchanged)
	assert.Equal(t, 1, run.by["subscriber.get"])
	got = stateEntries(t, w.path, w.srv.APIKey)
	assert.Len(t, got, 4)
	require.Len(t, got["new@example.com"], 1, "once")
	assert.False(t, got["new@example.com"][0].Unknown)
	assert.Positive(t, got["new@example.com"][0].ID, "read back: its ID is known")
}

// Package statetest is the conformance suite of a sync's state store: the syncs of
// package listsync run with their state in the store under test, against an in-memory
// service (sendlooptest), and must plan from it exactly as from the file: a state written
// and read back at a state run's cost, and the same fallbacks to a full run (another list,
// mapping or account, an old state, a state a run left marked in use, drift) and the same
// refusal of a second run while one holds the state. The file (listsync's default) and
// package listsync/pgstate's PostgreSQL store both pass it; a store of another kind runs
// it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		statetest.Run(t, statetest.Store{Options: ...})
//	}
package statetest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// Store gives the suite the states of one kind of store.
type Store struct {
	// Options returns the options of the state name, as a run sets them: Path, and Store
	// for a store other than the file. Two calls with one name are two runs of one state
	// (a rerun, on another machine for a shared store); each subtest uses names of its own.
	Options func(t *testing.T, name string) listsync.StateOptions
}

// Run runs the suite as parallel subtests of t.
func Run(t *testing.T, s Store) {
	t.Run("written and read back", func(t *testing.T) { t.Parallel(); writtenAndRead(t, s) })
	t.Run("fallbacks", func(t *testing.T) { t.Parallel(); fallbacks(t, s) })
	t.Run("in use", func(t *testing.T) { t.Parallel(); inUse(t, s) })
	t.Run("a run that did not finish", func(t *testing.T) { t.Parallel(); unfinished(t, s) })
}

// writtenAndRead: the first run is a full one and writes the state; the second plans from
// it, reading no member, and applies only the changes.
func writtenAndRead(t *testing.T, s Store) {
	w := newWorld(t, 20)
	so := s.Options(t, "nightly")
	first := w.sync(t, rowsOf(20), so)
	want(t, first.plan.State, listsync.StateUse{Reason: "no state yet", NoOwners: first.plan.State.NoOwners})
	if first.by[commands.SubscriberBrowse] == 0 {
		t.Error("a full run reads the members")
	}

	rows := rowsOf(21)
	rows[3].Fields["Plan"] = "p1"
	second := w.sync(t, rows, s.Options(t, "nightly"))
	if !second.plan.State.Used {
		t.Fatalf("the second run does not use the state: %s", second.plan.State.Reason)
	}
	want(t, second.by[commands.SubscriberBrowse], 0, "members read from the state")
	want(t, second.res.Adds.Done, 1, "additions")
	want(t, second.res.Updates.Done, 1, "updates")

	third := w.sync(t, rows, s.Options(t, "nightly"))
	if !third.plan.State.Used {
		t.Fatalf("the state written by a run from the state is not used: %s", third.plan.State.Reason)
	}
	want(t, third.by[commands.SubscriberBrowse], 0, "members read")
	want(t, third.plan.Unchanged, 21, "unchanged rows: the second run's changes are in the state")
	// list.get, list.getlist, the two suppression lists and the activity chart.
	if third.calls > 5 {
		t.Errorf("an unchanged list from the state costs %d calls, want at most 5: %v", third.calls, third.by)
	}
}

// fallbacks: a state that does not describe the list as the run sees it makes the run a
// full one, saying why; the run writes a fresh state, which the next run uses.
func fallbacks(t *testing.T, s Store) {
	tests := []struct {
		name   string
		before func(t *testing.T, w *world, so listsync.StateOptions) // after the first sync
		opts   func(so *listsync.StateOptions)
		fields bool // the rows give a second field
		reason string
	}{
		{name: "another account", before: func(t *testing.T, w *world, so listsync.StateOptions) {
			other := newWorld(t, 3) // another service, another API key
			other.sync(t, rowsOf(3), so)
		}, reason: "written for another account (another API key)"},
		{name: "another list", before: func(t *testing.T, w *world, so listsync.StateOptions) {
			id := w.listID
			w.listID = w.newList(t, "Other")
			w.sync(t, rowsOf(3), so)
			w.listID = id
		}, reason: "written for list 2"},
		{name: "another mapping", fields: true, before: func(t *testing.T, w *world, _ listsync.StateOptions) {
			_, err := w.srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Tier"})
			check(t, err)
		}, reason: "written for another mapping of the source's fields"},
		{name: "stale", opts: func(so *listsync.StateOptions) {
			so.Now = func() time.Time { return time.Now().Add(7*24*time.Hour + time.Minute) }
		}, reason: "older than 7 days"},
		{name: "shorter age", opts: func(so *listsync.StateOptions) { so.MaxAge = time.Nanosecond }, reason: "older than 1ns"},
		{name: "drift", before: func(t *testing.T, w *world, _ listsync.StateOptions) {
			for i := range 3 { // 3 of 20 since the state: beyond 5 %
				_, err := w.c.Subscribers.Subscribe(context.Background(), w.listID, sendloop.SubscriberSubscribeParams{
					EmailAddress: fmt.Sprintf("s%d@example.org", i), SubscriptionIP: "1.2.3.4"})
				check(t, err)
			}
		}, reason: "the list has 23 subscribed members, the state 20: a drift of 3, beyond 5% (1)"},
		{name: "full", opts: func(so *listsync.StateOptions) { so.Full = true }, reason: "a full run was asked for"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("fallback-%d", i)
			w := newWorld(t, 20)
			w.sync(t, rowsOf(20), s.Options(t, name))
			if tt.before != nil {
				tt.before(t, w, s.Options(t, name))
			}
			rows := rowsOf(20)
			if tt.fields {
				for i := range rows {
					rows[i].Fields["Tier"] = ""
				}
			}
			so := s.Options(t, name)
			if tt.opts != nil {
				tt.opts(&so)
			}
			run := w.sync(t, rows, so)
			want(t, run.plan.State, listsync.StateUse{Reason: tt.reason, Drift: run.plan.State.Drift, NoOwners: run.plan.State.NoOwners})
			if run.by[commands.SubscriberBrowse] == 0 {
				t.Error("a full run reads the members")
			}
			again := s.Options(t, name)
			again.MaxDrift = job.Percent(100)
			next := w.sync(t, rows, again)
			if !next.plan.State.Used {
				t.Errorf("the fresh state is not used: %s", next.plan.State.Reason)
			}
		})
	}
}

// inUse: while a run holds the state (from its Plan to its Close), another run on it is
// refused with an error matching listsync.ErrStateInUse, naming the state; once the first
// ends, the state is free.
func inUse(t *testing.T, s Store) {
	w := newWorld(t, 3)
	ctx := context.Background()
	so := s.Options(t, "held")
	jb, err := listsync.New(ctx, w.c, w.listID, listsync.Rows(rowsOf(3)), listsync.Options{State: &so, TempDir: t.TempDir()})
	check(t, err)
	defer jb.Close()
	pl, err := jb.Plan(ctx)
	check(t, err)

	other := s.Options(t, "held")
	jb2, err := listsync.New(ctx, w.c, w.listID, listsync.Rows(rowsOf(3)), listsync.Options{State: &other, TempDir: t.TempDir()})
	check(t, err)
	defer jb2.Close()
	_, err = jb2.Plan(ctx)
	if !errors.Is(err, listsync.ErrStateInUse) {
		t.Fatalf("a second run while the first holds the state: %v, want an error matching ErrStateInUse", err)
	}
	if msg := "listsync: state " + other.Path + ": in use by another run"; err.Error() != msg {
		t.Errorf("the second run's error is %q, want %q", err, msg)
	}

	free := s.Options(t, "another-name")
	jb3, err := listsync.New(ctx, w.c, w.listID, listsync.Rows(rowsOf(3)), listsync.Options{State: &free, TempDir: t.TempDir()})
	check(t, err)
	defer jb3.Close()
	pl3, err := jb3.Plan(ctx)
	check(t, err, "another state")
	check(t, pl3.Close())

	check(t, pl.Close())
	pl2, err := jb2.Plan(ctx)
	check(t, err, "once the first run ends")
	want(t, pl2.State.Reason, "no state yet", "a plan not applied writes no state")
	check(t, pl2.Close())
}

// unfinished: a run stopped before it finished leaves the state marked in use: the next
// run is a full one, and the one after it plans from the state it wrote.
func unfinished(t *testing.T, s Store) {
	w := newWorld(t, 3)
	w.sync(t, rowsOf(3), s.Options(t, "stopped"))
	ctx := context.Background()
	so := s.Options(t, "stopped")
	rows := append(rowsOf(3), listsync.Row{Email: "new@example.com", Fields: map[string]string{"Plan": "x"}})
	jb, err := listsync.New(ctx, w.c, w.listID, listsync.Rows(rows), listsync.Options{State: &so, TempDir: t.TempDir()})
	check(t, err)
	defer jb.Close()
	pl, err := jb.Plan(ctx)
	check(t, err)
	if !pl.State.Used {
		t.Fatalf("the state is not used: %s", pl.State.Reason)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	res, err := pl.Apply(stopped, listsync.ApplyOptions{})
	check(t, err)
	if !res.Interrupted {
		t.Fatal("an Apply with its context ended is not interrupted")
	}
	check(t, pl.Close())

	run := w.sync(t, rowsOf(3), s.Options(t, "stopped"))
	want(t, run.plan.State.Reason, "marked in use by a run that did not finish")
	next := w.sync(t, rowsOf(3), s.Options(t, "stopped"))
	if !next.plan.State.Used {
		t.Errorf("the state after a full run is not used: %s", next.plan.State.Reason)
	}
}

// world is a service with list 1 and its field Plan, and the calls of each sync.
type world struct {
	srv    *sendlooptest.Server
	c      *sendloop.Client
	listID int

	run   atomic.Int64 // the number of the sync under way, sent with each call
	mu    sync.Mutex
	calls map[string]int // the calls of the sync under way
}

// runHeader carries a call's sync number from the world's client to its server: a page read
// ahead past a list's end may reach the server after its sync has returned, and counts for
// that sync, not the next one.
const runHeader = "X-Statetest-Run"

type tagging struct {
	base http.RoundTripper
	run  *atomic.Int64
}

func (tt tagging) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(runHeader, strconv.FormatInt(tt.run.Load(), 10))
	return tt.base.RoundTrip(req)
}

// newWorld makes a service whose list 1 has the field Plan and members 0…n-1 with Plan "p0".
func newWorld(t *testing.T, n int) *world {
	t.Helper()
	w := &world{calls: map[string]int{}}
	w.srv = sendlooptest.NewServer(t, sendlooptest.WithRequestLog(0), sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if r.Header.Get(runHeader) == strconv.FormatInt(w.run.Load(), 10) {
			w.calls[r.Command]++
		}
	}))
	var err error
	w.c, err = sendloop.NewClient(w.srv.APIKey, sendloop.WithBaseURL(w.srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: tagging{base: http.DefaultTransport.(*http.Transport).Clone(), run: &w.run}}),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: time.Millisecond, MaxWait: 10 * time.Millisecond}))
	check(t, err)
	w.listID = w.newList(t, "Nightly")
	subs := make([]sendloop.ImportSubscriber, n)
	for i := range subs {
		subs[i] = sendloop.ImportSubscriber{EmailAddress: email(i), Fields: sendloop.CustomFields{1: "p0"}}
	}
	if n > 0 {
		_, err = w.c.Subscribers.ImportAll(context.Background(), w.listID, func(yield func(sendloop.ImportSubscriber) bool) {
			for _, s := range subs {
				if !yield(s) {
					return
				}
			}
		}, sendloop.ImportOptions{})
		check(t, err)
	}
	return w
}

// newList makes a list with the field Plan.
func (w *world) newList(t *testing.T, name string) int {
	t.Helper()
	id, err := w.c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: name, OptInMode: sendloop.OptInSingle})
	check(t, err)
	_, err = w.srv.DefineCustomField(id, sendlooptest.CustomField{Name: "Plan"})
	check(t, err)
	return id
}

func email(i int) string { return fmt.Sprintf("user%06d@example.com", i) }

// rowsOf returns the rows naming the members 0…n-1 with Plan "p0".
func rowsOf(n int) []listsync.Row {
	rows := make([]listsync.Row, n)
	for i := range rows {
		rows[i] = listsync.Row{Email: email(i), Fields: map[string]string{"Plan": "p0"}}
	}
	return rows
}

// callCount returns the calls of the sync under way, in all and by command, and starts the
// next.
func (w *world) callCount() (int, map[string]int) {
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

type syncRun struct {
	plan  *listsync.Plan
	res   *listsync.Result
	calls int
	by    map[string]int
}

// sync plans and applies rows against the list with the state so (the CLI's drift limit
// when so sets none), and counts the calls.
func (w *world) sync(t *testing.T, rows []listsync.Row, so listsync.StateOptions) syncRun {
	t.Helper()
	ctx := context.Background()
	w.callCount()
	if so.MaxDrift == (job.Budget{}) {
		so.MaxDrift = job.DefaultMaxDrift
	}
	jb, err := listsync.New(ctx, w.c, w.listID, listsync.Rows(rows), listsync.Options{State: &so, TempDir: t.TempDir()})
	check(t, err)
	defer jb.Close()
	pl, err := jb.Plan(ctx)
	check(t, err)
	defer pl.Close()
	res, err := pl.Apply(ctx, listsync.ApplyOptions{MaxUnsubscribe: job.Percent(100),
		OnRow: func(r listsync.RowResult) {
			if r.Fate != job.Done {
				t.Errorf("rejected: %+v", r)
			}
		}})
	check(t, err)
	n, by := w.callCount()
	return syncRun{plan: pl, res: res, calls: n, by: by}
}

// check ends the test on err, saying what failed.
func check(t *testing.T, err error, what ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(append([]string{"unexpected error"}, what...), ", "), err)
	}
}

// want reports got when it is not want.
func want[T any](t *testing.T, got, want T, what ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %+v, want %+v", strings.Join(append([]string{"mismatch"}, what...), ", "), got, want)
	}
}

package listsync

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// demoList makes list 1 with the fields First name (1) and Plan (2), and the members ann
// (pro), bob (free) and gone (free).
func demoList(t *testing.T, opts ...sendlooptest.Option) (*sendlooptest.Server, *sendloop.Client) {
	t.Helper()
	srv := sendlooptest.NewServer(t, opts...)
	c := apiClient(t, srv)
	ctx := testContext(t)
	list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Demo", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"First name", "Plan"} {
		if _, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{
		{EmailAddress: "ann@example.com", Fields: sendloop.CustomFields{2: "pro"}},
		{EmailAddress: "bob@example.com", Fields: sendloop.CustomFields{2: "free"}},
		{EmailAddress: "gone@example.com", Fields: sendloop.CustomFields{2: "free"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// planRows plans a sync of list 1 with src.
func planRows(t *testing.T, c *sendloop.Client, src Source, opts Options) *Plan {
	t.Helper()
	opts.TempDir = t.TempDir()
	job, err := New(testContext(t), c, 1, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := job.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pl.Close() })
	return pl
}

func TestRowsSource(t *testing.T) {
	t.Parallel()
	_, c := demoList(t)
	rows := []Row{
		{Email: "ann@example.com", Fields: map[string]string{"plan": "pro"}},
		{Email: "BOB@example.com", Fields: map[string]string{"plan": "team", "CustomField1": "Bob"}},
		{Email: "new@example.com", Fields: map[string]string{"Colour": "red"}},
		{Email: "", Fields: nil},
	}
	src := RowFunc([]string{"plan", "CustomField1"}, func(context.Context) iter.Seq2[Row, error] {
		return func(yield func(Row, error) bool) {
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		}
	})
	var reads atomic.Int64
	pl := planRows(t, c, src, Options{Progress: func(p PlanProgress) { reads.Store(p.Read) }})
	if reads.Load() != 4 {
		t.Errorf("the last progress says %d rows read, want 4", reads.Load())
	}
	if pl.Rows != 4 || pl.Unchanged != 1 || pl.Updates != 1 || pl.Adds != 0 || pl.Rejected != 2 {
		t.Errorf("plan %+v", *pl)
	}
	var rejects []string
	res, err := pl.Apply(testContext(t), ApplyOptions{MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited(), OnRow: func(r RowResult) {
		if r.Fate != job.Done {
			rejects = append(rejects, fmt.Sprintf("%d %s: %s", r.Line, r.Address, r.Reason))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`3 new@example.com: unknown field "Colour" (the source's fields are "plan", "CustomField1")`,
		"4 : missing email address",
	}
	if strings.Join(rejects, "\n") != strings.Join(want, "\n") {
		t.Errorf("rejects\n%s\nwant\n%s", strings.Join(rejects, "\n"), strings.Join(want, "\n"))
	}
	if res.Updates.Done != 1 || res.Rows != (job.Tally{Done: 2, Rejected: 2}) {
		t.Errorf("result %+v", *res)
	}
}

// beyond32 is the first line the plan cannot keep.
var beyond32 int64 = 1 << 32

func TestRowFuncErrors(t *testing.T) {
	t.Parallel()
	_, c := demoList(t)
	seq := func(rows ...Row) func(context.Context) iter.Seq2[Row, error] {
		return func(context.Context) iter.Seq2[Row, error] {
			return func(yield func(Row, error) bool) {
				for _, r := range rows {
					if !yield(r, nil) {
						return
					}
				}
				yield(Row{}, errors.New("the query failed"))
			}
		}
	}
	tests := []struct {
		name   string
		fields []string
		rows   func(context.Context) iter.Seq2[Row, error]
		want   string
	}{
		{"unknown field", []string{"Plan", "Colour"}, seq(), `listsync: source fields: unknown field "Colour" (the list's custom fields are "First name" (CustomField1), "Plan" (CustomField2))`},
		{"lines that do not increase", nil, seq(Row{Line: 5, Email: "a@example.com"}, Row{Line: 5, Email: "b@example.com"}), "row 2 has Line 5, after a row with Line 5"},
		{"the source's error", nil, seq(Row{Email: "a@example.com"}), "reading the source: the query failed"},
		// The plan keeps a line in 32 bits: a larger one (a database ID) would wrap around.
		{"a line beyond 32 bits", nil, seq(Row{Line: int(beyond32 - 1), Email: "a@example.com"}, Row{Line: int(beyond32), Email: "b@example.com"}), "row 2 has Line 4294967296: lines go up to 4294967295"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if strings.Contains(tt.name, "32 bits") && strconv.IntSize == 32 {
				t.Skip("an int holds no larger line")
			}
			job, err := New(testContext(t), c, 1, RowFunc(tt.fields, tt.rows), Options{TempDir: t.TempDir()})
			if err == nil {
				var pl *Plan
				pl, err = job.Plan(testContext(t))
				if pl != nil {
					pl.Close()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSourceChangedBetweenReads: a RowFunc whose rows change after the plan is not applied
// to the wrong addresses: the rows that moved are rejected.
func TestSourceChangedBetweenReads(t *testing.T) {
	t.Parallel()
	srv, c := demoList(t)
	var reads atomic.Int32
	src := RowFunc([]string{"Plan"}, func(context.Context) iter.Seq2[Row, error] {
		rows := []Row{{Email: "new@example.com", Fields: map[string]string{"Plan": "team"}}, {Email: "ann@example.com", Fields: map[string]string{"Plan": "gold"}}}
		if reads.Add(1) > 1 { // the export was rewritten in between
			rows[0], rows[1] = rows[1], rows[0]
		}
		return func(yield func(Row, error) bool) {
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		}
	})
	pl := planRows(t, c, src, Options{})
	var rejects []string
	res, err := pl.Apply(testContext(t), ApplyOptions{MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited(), OnRow: func(r RowResult) {
		if r.Fate != job.Done {
			rejects = append(rejects, r.Reason)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The planned addition and update failed: they are not left "not attempted" by a run
	// that nothing interrupted.
	want := Result{Adds: job.Tally{Rejected: 1}, Updates: job.Tally{Rejected: 1}, Rows: job.Tally{Rejected: 2}}
	if len(rejects) != 2 || rejects[0] != ReasonFileChanged || *res != want {
		t.Errorf("rejects %q, result %+v", rejects, *res)
	}
	if _, ok := srv.SubscriberStatus(1, "new@example.com"); ok {
		t.Error("a row was applied after the source changed")
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   Source
		limit job.Budget
		check func(error) bool
	}{
		{"names no subscriber", Rows([]Row{{Email: "bad"}}), job.Percent(100), func(err error) bool {
			var e *GuardError
			return errors.As(err, &e) && e.EmptySource && e.Unsubscribes == 3
		}},
		{"beyond the default limit", Rows([]Row{{Email: "ann@example.com"}}), job.DefaultMaxUnsubscribe, func(err error) bool {
			var e *GuardError
			return errors.As(err, &e) && e.Unsubscribes == 2 && e.Members == 3 && e.Allowed == 1
		}},
		{"beyond a count", Rows([]Row{{Email: "ann@example.com"}, {Email: "bob@example.com"}}), job.Rows(0), func(err error) bool {
			var e *GuardError
			return errors.As(err, &e) && e.Allowed == 0
		}},
		{"within a share", Rows([]Row{{Email: "ann@example.com"}}), job.Percent(67), func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t) // Apply changes the list
			pl := planRows(t, c, tt.src, Options{UnsubscribeMissing: true})
			if err := pl.Check(tt.limit); !tt.check(err) {
				t.Errorf("Check: %v", err)
			}
			if _, err := pl.Apply(testContext(t), ApplyOptions{MaxUnsubscribe: tt.limit}); !tt.check(err) {
				t.Errorf("Apply: %v", err)
			}
		})
	}
}

// TestUnsubscribesFromThisListOnly: a member the source does not name leaves the synced
// list and stays in the others.
func TestUnsubscribesFromThisListOnly(t *testing.T) {
	t.Parallel()
	srv, c := demoList(t)
	ctx := testContext(t)
	other, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Other", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribers.Import(ctx, other, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "gone@example.com"}}}); err != nil {
		t.Fatal(err)
	}
	pl := planRows(t, c, Rows([]Row{{Email: "ann@example.com"}, {Email: "bob@example.com"}}), Options{UnsubscribeMissing: true})
	res, err := pl.Apply(ctx, ApplyOptions{MaxUnsubscribe: job.Percent(100)})
	if err != nil || res.Unsubscribes.Done != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	for list, want := range map[int]string{1: "Unsubscribed", other: "Subscribed"} {
		if got, _ := srv.SubscriberStatus(list, "gone@example.com"); got != want {
			t.Errorf("gone@example.com is %q in list %d, want %q", got, list, want)
		}
	}
}

// TestApplyInterrupted: Apply's context ends at the first update: with no grace the call in
// flight is cancelled and left not attempted; with a grace it finishes. Nothing more starts,
// and the rows add up.
func TestApplyInterrupted(t *testing.T) {
	t.Parallel()
	for _, grace := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint(grace), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var cancel context.CancelFunc
			hook := sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
				mu.Lock()
				defer mu.Unlock()
				if r.Command == "subscriber.update" && cancel != nil {
					cancel()
				}
			})
			srv, c := demoList(t, hook)
			// The context ends from the hook, as the first update arrives. Without a grace,
			// the fake holds that update until the client gives up on it, however long the
			// cancellation takes to reach it on a loaded machine; with one, it answers at once
			// and the update is done.
			if grace == 0 {
				srv.InjectFault("subscriber.update", sendlooptest.Fault{Delay: time.Hour, Times: 10})
			}
			src := Rows([]Row{
				{Email: "ann@example.com", Fields: map[string]string{"Plan": "team"}},
				{Email: "bob@example.com", Fields: map[string]string{"Plan": "team"}},
			})
			pl := planRows(t, c, src, Options{Concurrency: 1, UnsubscribeMissing: true})
			ctx, stop := context.WithCancel(testContext(t))
			defer stop()
			mu.Lock()
			cancel = stop
			mu.Unlock()
			var progress atomic.Int32
			res, err := pl.Apply(ctx, ApplyOptions{Stop: job.Stop{Grace: grace}, MaxUnsubscribe: job.Percent(100),
				OnProgress: func(job.Progress) { progress.Add(1) },
				OnRow: func(r RowResult) {
					if r.Fate != job.Done {
						t.Errorf("rejected %+v", r)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Interrupted: true, Updates: job.Tally{NotAttempted: 2}, Unsubscribes: job.Tally{NotAttempted: 1}, Rows: job.Tally{NotAttempted: 2}}
			if grace > 0 {
				want = Result{Interrupted: true, Updates: job.Tally{Done: 1, NotAttempted: 1}, Unsubscribes: job.Tally{NotAttempted: 1}, Rows: job.Tally{Done: 1, NotAttempted: 1}}
			}
			if *res != want {
				t.Errorf("result %+v, want %+v", *res, want)
			}
			// The call cancelled in flight is not executed by the fake.
			if n, want := srv.Executions("subscriber.update"), res.Updates.Done; n != want {
				t.Errorf("%d updates executed, want %d", n, want)
			}
			if progress.Load() < 1 {
				t.Errorf("%d progress calls", progress.Load())
			}
		})
	}
}

// TestRowsFieldsAndCount: Rows takes its fields from the rows' keys; CountRows counts the
// rows without planning.
func TestRowsFieldsAndCount(t *testing.T) {
	t.Parallel()
	_, c := demoList(t)
	src := Rows([]Row{{Email: "a@example.com", Fields: map[string]string{"Plan": "x"}}, {Email: "b@example.com", Fields: map[string]string{"First name": "B", "Plan": "y"}}})
	job, err := New(testContext(t), c, 1, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := job.CountRows(testContext(t)); n != 2 || err != nil {
		t.Errorf("CountRows: %d, %v", n, err)
	}
	var headers []string
	for _, f := range job.Mapping().Fields { // read by CountRows, as by Plan
		headers = append(headers, f.Header)
	}
	if got := strings.Join(headers, ","); got != "Plan,First name" {
		t.Errorf("fields %s", got)
	}
}

// TestSourceRowsChangedBetweenReads: a RowFunc whose second reading yields other rows (a row
// gone, a rejected row fixed, a good row broken) leaves no row unaccounted: every planned
// change is applied or rejected, the rows after a gone one are still applied, and done,
// failed and not attempted add up to the rows without a negative count.
func TestSourceRowsChangedBetweenReads(t *testing.T) {
	t.Parallel()
	r := func(line int, email string) Row { return Row{Line: line, Email: email} }
	tests := []struct {
		name          string
		first, second []Row
		added         []string
		rejects       []string
		want          Result
	}{
		{
			name:    "a row gone from the middle",
			first:   []Row{r(10, "new1@example.com"), r(20, "new2@example.com"), r(30, "new3@example.com")},
			second:  []Row{r(10, "new1@example.com"), r(30, "new3@example.com")},
			added:   []string{"new1@example.com", "new3@example.com"},
			rejects: []string{"20 (line 20): " + ReasonFileChanged},
			want:    Result{Adds: job.Tally{Done: 2, Rejected: 1}, Rows: job.Tally{Done: 2, Rejected: 1}},
		},
		{
			name:    "the last row gone",
			first:   []Row{r(0, "new1@example.com"), r(0, "new2@example.com")},
			second:  []Row{r(0, "new1@example.com")},
			added:   []string{"new1@example.com"},
			rejects: []string{"2 (line 2): " + ReasonFileChanged},
			want:    Result{Adds: job.Tally{Done: 1, Rejected: 1}, Rows: job.Tally{Done: 1, Rejected: 1}},
		},
		{
			name:    "a rejected row fixed",
			first:   []Row{r(0, "bad"), r(0, "new1@example.com")},
			second:  []Row{r(0, "fixed@example.com"), r(0, "new1@example.com")},
			added:   []string{"new1@example.com"},
			rejects: []string{"1 fixed@example.com: " + ReasonFileChanged},
			want:    Result{Adds: job.Tally{Done: 1}, Rows: job.Tally{Done: 1, Rejected: 1}},
		},
		{
			name:    "an updated row gone",
			first:   []Row{{Email: "ann@example.com", Fields: map[string]string{"Plan": "gold"}}, r(0, "new1@example.com")},
			second:  []Row{r(0, "new1@example.com")},
			rejects: []string{"2 (line 2): " + ReasonFileChanged, "1 new1@example.com: " + ReasonFileChanged},
			want:    Result{Adds: job.Tally{Rejected: 1}, Updates: job.Tally{Rejected: 1}, Rows: job.Tally{Rejected: 2}},
		},
		{
			name:   "an unchanged row broken",
			first:  []Row{{Email: "ann@example.com", Fields: map[string]string{"Plan": "pro"}}, r(0, "new1@example.com")},
			second: []Row{r(0, ""), r(0, "new1@example.com")},
			added:  []string{"new1@example.com"},
			want:   Result{Adds: job.Tally{Done: 1}, Rows: job.Tally{Done: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c := demoList(t)
			var reads atomic.Int32
			src := RowFunc([]string{"Plan"}, func(context.Context) iter.Seq2[Row, error] {
				rows := tt.first
				if reads.Add(1) > 1 {
					rows = tt.second
				}
				return func(yield func(Row, error) bool) {
					for _, r := range rows {
						if !yield(r, nil) {
							return
						}
					}
				}
			})
			pl := planRows(t, c, src, Options{})
			var rejects []string
			res, err := pl.Apply(testContext(t), ApplyOptions{MaxRejects: job.Unlimited(), MaxUnknown: job.Unlimited(), OnRow: func(r RowResult) {
				if r.Fate != job.Done {
					rejects = append(rejects, fmt.Sprintf("%d %s: %s", r.Line, r.Address, r.Reason))
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(rejects, "\n") != strings.Join(tt.rejects, "\n") {
				t.Errorf("rejects\n%s\nwant\n%s", strings.Join(rejects, "\n"), strings.Join(tt.rejects, "\n"))
			}
			if *res != tt.want {
				t.Errorf("result %+v\nwant   %+v", *res, tt.want)
			}
			for _, a := range tt.added {
				if _, ok := srv.SubscriberStatus(1, a); !ok {
					t.Errorf("%s was not added", a)
				}
			}
		})
	}
}

// TestApplyWorkEnded: ApplyOptions.Work ending while Apply's context lives (a job's own
// deadline on the calls, say) stops Apply as an interruption: no call goes out, and the
// Result says it was interrupted rather than passing its rows off as a finished run.
func TestApplyWorkEnded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		rows []Row
	}{
		{"updates only", []Row{{Email: "ann@example.com", Fields: map[string]string{"Plan": "team"}}, {Email: "bob@example.com", Fields: map[string]string{"Plan": "team"}}}},
		{"an addition", []Row{{Email: "ann@example.com", Fields: map[string]string{"Plan": "team"}}, {Email: "new@example.com", Fields: map[string]string{"Plan": "team"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, c := demoList(t)
			pl := planRows(t, c, Rows(tt.rows), Options{Concurrency: 1})
			calls := func() int { return srv.Executions("subscriber.update") + srv.Executions("subscriber.import") }
			before := calls()
			work, cancel := context.WithCancel(context.Background())
			cancel()
			res, err := pl.Apply(testContext(t), ApplyOptions{Stop: job.Stop{Work: work}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Interrupted || res.Rows != (job.Tally{NotAttempted: 2}) {
				t.Errorf("result %+v", *res)
			}
			if n := calls() - before; n != 0 {
				t.Errorf("%d calls executed", n)
			}
		})
	}
}

// cancelAfter is a transport that cancels a context once an answer to command has come.
type cancelAfter struct {
	base    http.RoundTripper // the test's own: parallel tests close http.DefaultTransport's connections
	command string
	cancel  context.CancelFunc
}

func (c cancelAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil && strings.Contains(req.URL.Path, "/"+c.command+"/") {
		c.cancel()
	}
	return resp, err
}

// A plan whose context ends as the last answers come in is not made: every read may have
// succeeded (an answer that has come is returned, even once the context has ended), but the
// caller asked to stop, and a plan it did not wait for must not be applied.
func TestPlanStopsWhenTheContextEndsAsTheAnswersCome(t *testing.T) {
	t.Parallel()
	for _, command := range []string{commands.SubscriberBrowse, commands.SuppressionListGetList} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			srv, _ := demoList(t)
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
				sendloop.WithHTTPClient(&http.Client{Transport: cancelAfter{testkit.Transport(), command, cancel}}))
			if err != nil {
				t.Fatal(err)
			}
			src := Rows([]Row{{Email: "ann@example.com", Fields: map[string]string{"Plan": "pro"}}})
			job, err := New(testContext(t), c, 1, src, Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			pl, err := job.Plan(ctx)
			if err == nil {
				pl.Close()
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("plan error %v, want the context's", err)
			}
		})
	}
}

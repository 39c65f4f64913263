package listsync

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/csvfile"
)

const planCSV = "EmailAddress,Plan,First name\n" +
	"ann@example.com,pro,Ann\n" + // 2: unchanged
	"BOB@example.com,pro,Bob\n" + // 3: update Plan free → pro, First name "" → Bob
	"carol@example.com,pro,Carol\n" + // 4: skipped, unsubscribed
	"dora@example.com,free,\n" + // 5: unchanged (pending is a member)
	"new1@example.com,free,N1\n" + // 6: add
	"bad,free,\n" + // 7: rejected
	"new2@example.com,,\n" + // 8: add
	"NEW1@example.com,free,N1\n" + // 9: duplicate of 6
	"spam@example.com,free,\n" + // 10: skipped, suppressed
	"spam@example.com,free,\n" + // 11: duplicate of 10
	"ann@example.com,pro,Ann\n" + // 12: duplicate of 2
	"new3@example.com,free\n" + // 13: malformed
	"new2@example.com,x,y\n" + // 14: duplicate of 8
	"new4@example.com,free,N4\n" // 15: add

func testPlanner(t *testing.T, content string, opts plannerOptions) (*planner, func() (*csvfile.Reader, error)) {
	t.Helper()
	open := func() (*csvfile.Reader, error) { return csvfile.NewReader(strings.NewReader(content)) }
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapHeader(r.Header, demoFields)
	if err != nil {
		t.Fatal(err)
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	p, err := newPlanner(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.close() })
	addMemberFields(p, 1, "ann@example.com", "Subscribed", map[int]string{1: "Ann", 2: "pro", 7: "other"})
	addMemberFields(p, 2, "Bob@Example.com", "Subscribed", map[int]string{2: "free"})
	addMemberFields(p, 3, "carol@example.com", statusUnsubscribed, map[int]string{2: "free"})
	addMemberFields(p, 4, "dora@example.com", "Confirmation Pending", map[int]string{2: "free"})
	addMemberFields(p, 5, "gone@example.com", "Subscribed", nil)
	addMemberFields(p, 6, "left@example.com", statusUnsubscribed, nil)
	p.suppress(" SPAM@example.com ")
	return p, open
}

// plan reads the file and plans.
func plan(p *planner, open func() (*csvfile.Reader, error)) (*Plan, error) {
	err := p.readSource(context.Background(), func() (pass, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return readerPass(r, p.mapping), nil
	})
	if err != nil {
		return nil, err
	}
	return p.finish()
}

// events lists a plan's events as text.
func events(t *testing.T, pl *Plan, open func() (*csvfile.Reader, error)) []string {
	t.Helper()
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for ev, err := range pl.events(readerPass(r, pl.Mapping()), EventAdd|EventReject, false) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case EventAdd:
			out = append(out, fmt.Sprintf("%d add %s %q", ev.Row.Line, ev.Row.Email, ev.Row.Values))
		case EventReject:
			out = append(out, fmt.Sprintf("%d reject %s: %s", ev.Row.Line, ev.Row.Email, ev.Reason))
		}
	}
	return out
}

func TestPlan(t *testing.T) {
	t.Parallel()
	wantEvents := []string{
		`6 add new1@example.com ["free" "N1"]`,
		"7 reject bad: invalid email address",
		`8 add new2@example.com ["" ""]`,
		"9 reject NEW1@example.com: duplicate of line 6",
		"11 reject spam@example.com: duplicate of line 10",
		"12 reject ann@example.com: duplicate of line 2",
		"13 reject new3@example.com: malformed line: 2 fields, the header has 3",
		"14 reject new2@example.com: duplicate of line 8",
		`15 add new4@example.com ["free" "N4"]`,
	}
	wantUpdates := []Update{{Line: 3, SubscriberID: 2, Email: "Bob@Example.com", Fields: map[int]string{1: "Bob", 2: "pro"},
		Changes: []Change{{Field: Field{2, "Plan"}, Header: "Plan", From: "free", To: "pro"}, {Field: Field{1, "First name"}, Header: "First name", From: "", To: "Bob"}}}}
	for _, unsubscribe := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsubscribe=%t", unsubscribe), func(t *testing.T) {
			t.Parallel()
			var offsets []int64
			p, open := testPlanner(t, planCSV, plannerOptions{UnsubscribeMissing: unsubscribe, Progress: func(o int64) { offsets = append(offsets, o) }})
			pl, err := plan(p, open)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("rows=%d adds=%d updates=%d unchanged=%d unsub=%d suppressed=%d status=%d rejected=%d absent=%d members=%d",
				pl.Rows, pl.Adds, pl.Updates, pl.Unchanged, pl.SkippedUnsubscribed, pl.SkippedSuppressed, pl.SkippedStatus, pl.Rejected, pl.Absent, pl.Members)
			if want := "rows=14 adds=3 updates=1 unchanged=2 unsub=1 suppressed=1 status=0 rejected=6 absent=1 members=4"; got != want {
				t.Errorf("plan %s, want %s", got, want)
			}
			if got := planUpdates(t, pl, open); !reflect.DeepEqual(got, wantUpdates) {
				t.Errorf("updates %+v", got)
			}
			var wantUnsub []Unsubscribe
			if unsubscribe {
				wantUnsub = []Unsubscribe{{SubscriberID: 5, Email: "gone@example.com"}}
			}
			if got := unsubscribes(t, pl); !reflect.DeepEqual(got, wantUnsub) || pl.Unsubscribes != len(wantUnsub) {
				t.Errorf("unsubscribes %+v (%d)", got, pl.Unsubscribes)
			}
			if got := events(t, pl, open); !reflect.DeepEqual(got, wantEvents) {
				t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantEvents, "\n"))
			}
			if len(offsets) == 0 || offsets[len(offsets)-1] != int64(len(planCSV)) {
				t.Errorf("progress offsets %v, want a last one of %d", offsets, len(planCSV))
			}
		})
	}
}

func planUpdates(t *testing.T, pl *Plan, open func() (*csvfile.Reader, error)) []Update {
	t.Helper()
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	var out []Update
	for ev, err := range pl.events(readerPass(r, pl.Mapping()), EventUpdate, false) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *ev.Update)
	}
	return out
}

func unsubscribes(t *testing.T, pl *Plan) []Unsubscribe {
	t.Helper()
	var out []Unsubscribe
	for u, err := range pl.ToUnsubscribe() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func TestPlanStatusColumn(t *testing.T) {
	t.Parallel()
	content := "EmailAddress,SubscriptionStatus,Plan\n" +
		"gone@example.com,Unsubscribed,x\n" + // protects gone from the unsubscription, changes nothing
		"ann@example.com,Subscribed,team\n" + // update
		"pending@example.com,Confirmation Pending,\n" + // skipped, not added
		"ann@example.com,Unsubscribed,zzz\n" // skipped: not a duplicate, not an update
	p, open := testPlanner(t, content, plannerOptions{UnsubscribeMissing: true})
	pl, err := plan(p, open)
	if err != nil {
		t.Fatal(err)
	}
	if pl.SkippedStatus != 3 || pl.Updates != 1 || pl.Adds != 0 || pl.Rejected != 0 {
		t.Errorf("plan %+v", pl)
	}
	var unsub []string
	for _, u := range unsubscribes(t, pl) {
		unsub = append(unsub, u.Email)
	}
	if want := []string{"Bob@Example.com", "dora@example.com"}; !reflect.DeepEqual(unsub, want) {
		t.Errorf("unsubscribes %q, want %q", unsub, want)
	}
	if got := events(t, pl, open); len(got) != 0 {
		t.Errorf("events %q", got)
	}
}

func TestPlanManyRows(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("EmailAddress\n")
	const n = 20000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "user%d@example.com\n", i)
		if i%1000 == 0 {
			fmt.Fprintf(&b, "USER%d@example.com\n", i)
		}
	}
	// More rows than a sorter holds: the records spill to disk and are merged.
	tmp := t.TempDir()
	p, open := testPlanner(t, b.String(), plannerOptions{TempDir: tmp})
	pl, err := plan(p, open)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Adds != n || pl.Rejected != n/1000 || pl.Rows != n+n/1000 {
		t.Errorf("adds %d rejected %d rows %d", pl.Adds, pl.Rejected, pl.Rows)
	}
	if got := events(t, pl, open); len(got) != n+n/1000 {
		t.Errorf("%d events", len(got))
	}
	// The temporary files are removed as soon as created: a process killed now (SIGKILL,
	// SIGPIPE) leaves nothing behind.
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		t.Errorf("the plan's temporary files are left in %s while it is open: %v %v", tmp, left, err)
	}
}

func TestAddMemberReplaces(t *testing.T) {
	t.Parallel()
	p, _ := testPlanner(t, "EmailAddress\n", plannerOptions{})
	before := p.count
	addMemberFields(p, 99, "ANN@example.com", statusUnsubscribed, nil)
	if p.count != before+1 {
		t.Errorf("%d member records, want %d", p.count, before+1)
	}
	pl, err := plan(p, func() (*csvfile.Reader, error) {
		return csvfile.NewReader(strings.NewReader("EmailAddress\nann@example.com\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if pl.SkippedUnsubscribed != 1 || pl.Unchanged != 0 {
		t.Errorf("the later record did not replace the earlier: %+v", pl)
	}
}

// TestPlanRejectedRowProtects: a rejected row still names its member, and the member is not
// unsubscribed: a row with too few fields or invalid UTF-8, and a stray comma that shifts
// the address out of its column (the member it names in any field is protected).
func TestPlanRejectedRowProtects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, content string
		unsubscribed  string
		rejected      int
	}{
		{"too few fields, invalid UTF-8", "EmailAddress,Plan,First name\n" +
			"gone@example.com,free\n" + // too few fields, but it names gone
			"Bob@example.com,free,\xff\n" + // invalid UTF-8, but it names Bob
			"ann@example.com,pro,Ann\n", "dora@example.com", 2},
		{"stray comma before the address", "First name,EmailAddress,Plan\nAnn,ann@example.com,pro\nBob, Jr,bob@example.com,free\ndora,dora@example.com,\n", "gone@example.com", 1},
		{"stray comma after the address", "EmailAddress,Plan,First name\nann@example.com,pro,Ann\nbob@example.com,free,Bob, Jr\ndora@example.com,,\n", "gone@example.com", 1},
		{"quoted address, two stray commas", "First name,Plan,EmailAddress\nAnn,pro,ann@example.com\n\"Bob\",a,b,\" BOB@example.com\",free\ndora,,dora@example.com\n", "gone@example.com", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, open := testPlanner(t, tt.content, plannerOptions{UnsubscribeMissing: true})
			pl, err := plan(p, open)
			if err != nil {
				t.Fatal(err)
			}
			var unsub []string
			for _, u := range unsubscribes(t, pl) {
				unsub = append(unsub, u.Email)
			}
			if want := []string{tt.unsubscribed}; !reflect.DeepEqual(unsub, want) || pl.Rejected != tt.rejected {
				t.Errorf("unsubscribes %q (want %q), rejected %d (want %d)", unsub, want, pl.Rejected, tt.rejected)
			}
		})
	}
}

// TestPlanFileChanged: the file is read again to apply the plan; a line that no longer holds
// the address its decision was made for is skipped and reported, never applied to another
// row.
func TestPlanFileChanged(t *testing.T) {
	t.Parallel()
	content := "EmailAddress,Plan\nann@example.com,gold\nnew@example.com,free\nzed@example.com,pro\n"
	open := func() (*csvfile.Reader, error) { return csvfile.NewReader(strings.NewReader(content)) }
	r, _ := open()
	m, err := mapHeader(r.Header, demoFields[1:])
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlanner(m, plannerOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	addMemberFields(p, 1, "ann@example.com", "Subscribed", map[int]string{2: "pro"})
	addMemberFields(p, 2, "zed@example.com", "Subscribed", map[int]string{2: "pro"})
	pl, err := plan(p, open)
	if err != nil {
		t.Fatal(err)
	}
	// The nightly export rewrites the file while the sync runs: lines 2 and 3 change, line 4
	// does not.
	content = "EmailAddress,Plan\nzed@example.com,hacked\nANN@example.com,gold\nzed@example.com,pro\n"
	for _, mask := range []EventKind{EventAdd, EventUpdate, EventAdd | EventReject} {
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for ev, err := range pl.events(readerPass(r, pl.Mapping()), mask, false) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %d %s", ev.Kind, ev.Row.Line, ev.Reason))
		}
		var want []string
		if mask&EventUpdate != 0 {
			want = []string{fmt.Sprintf("%d 2 %s", EventReject, ReasonFileChanged)}
		} else {
			want = []string{fmt.Sprintf("%d 3 %s", EventReject, ReasonFileChanged)}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("mask %d: events %q, want %q", mask, got, want)
		}
	}
}

package listsync

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestPlanReadsEveryMember plans lists of several sizes with several concurrencies (the
// pages of members asked for at once): every member is read once, and the suppressed
// address is skipped.
func TestPlanReadsEveryMember(t *testing.T) {
	t.Parallel()
	tests := []struct {
		members int
	}{
		{0}, {1}, {sendloop.BrowsePageSize - 1}, {sendloop.BrowsePageSize}, {2*sendloop.BrowsePageSize + 7},
	}
	for _, tt := range tests {
		for _, concurrency := range []int{1, 3, 8} {
			t.Run(fmt.Sprintf("%d members, concurrency %d", tt.members, concurrency), func(t *testing.T) {
				t.Parallel()
				f := newFake(t)
				c := apiClient(t, f)
				ctx := testContext(t)
				list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
				if err != nil {
					t.Fatal(err)
				}
				var rows []sendloop.ImportSubscriber
				for i := range tt.members {
					rows = append(rows, sendloop.ImportSubscriber{EmailAddress: emailN(i)})
				}
				if tt.members > 0 {
					if _, err := c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := f.Suppress(0, "blocked@example.com", ""); err != nil {
					t.Fatal(err)
				}
				// The source names the first member (if any) and a suppressed address.
				src := []Row{{Email: "blocked@example.com"}}
				if tt.members > 0 {
					src = append(src, Row{Email: emailN(0)})
				}
				job, err := New(ctx, c, list, Rows(src), Options{Concurrency: concurrency, UnsubscribeMissing: true, TempDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				pl, err := job.Plan(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer pl.Close()
				absent := max(0, tt.members-1)
				if pl.Members != tt.members || pl.Absent != absent || pl.Unsubscribes != absent || pl.SkippedSuppressed != 1 {
					t.Errorf("members %d, absent %d, unsubscribes %d, suppressed %d; want %d, %d, %d, 1",
						pl.Members, pl.Absent, pl.Unsubscribes, pl.SkippedSuppressed, tt.members, absent, absent)
				}
			})
		}
	}
}

// TestPlanReadsSuppressionsWithTheMembers: the suppression reads do not wait for the last
// page of members. The fake holds every subscriber.browse until both suppression reads have
// arrived: read one after the other, the plan would wait for ever (here: fail).
func TestPlanReadsSuppressionsWithTheMembers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := 0
	both := make(chan struct{})
	var waitedInVain atomic.Bool
	hook := func(r sendlooptest.Request) {
		switch cmd := strings.ToLower(r.Command); {
		case strings.HasPrefix(cmd, "suppression.list"):
			mu.Lock()
			if seen++; seen == 2 {
				close(both)
			}
			mu.Unlock()
		case cmd == "subscriber.browse":
			// The event is asserted, not the time: 30 s only bound how long a plan
			// that reads one after the other keeps the test waiting.
			select {
			case <-both:
			case <-time.After(30 * time.Second):
				waitedInVain.Store(true)
			}
		}
	}
	_, c := demoList(t, sendlooptest.WithRequestHook(hook))
	job, err := New(testContext(t), c, 1, Rows([]Row{{Email: "ann@example.com"}}), Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := job.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if waitedInVain.Load() {
		t.Error("the suppression lists were not asked for while the members were being read")
	}
	if pl.Members != 3 || pl.Unchanged != 1 {
		t.Errorf("members %d, unchanged %d; want 3, 1", pl.Members, pl.Unchanged)
	}
}

// TestPlanErrorsInOrder: when more than one read fails, the plan reports the first in the
// order members, the list's suppressions, the global ones, whichever answered first.
func TestPlanErrorsInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail []string // the commands that fail
		want string   // the command of the error reported
	}{
		{"members and suppressions", []string{"subscriber.browse", "suppression.list"}, "subscriber.browse:"},
		{"suppressions", []string{"suppression.list"}, "suppression.list.getlist:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			c := apiClient(t, srv)
			ctx := testContext(t)
			list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
			if err != nil {
				t.Fatal(err)
			}
			// list.get answers; the suppression reads fail at once, the browse only once a
			// suppression read's failure is in. New starts these reads for Plan, which makes
			// them again when one failed: the order is Plan's either way.
			failing := &failTransport{base: testkit.Transport(), fail: tt.fail, hold: "subscriber.browse", answered: make(chan struct{})}
			c2, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: failing}))
			if err != nil {
				t.Fatal(err)
			}
			job, err := New(ctx, c2, list, Rows([]Row{{Email: "ann@example.com"}}), Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = job.Plan(ctx)
			if err == nil || !strings.HasPrefix(err.Error(), "sendloop: "+tt.want) {
				t.Errorf("got %v, want an error of %s", err, tt.want)
			}
		})
	}
}

// failTransport answers the commands of fail with a final error (500). The command hold is
// sent only once the failure of another command has been answered: an order of events, not
// of times.
type failTransport struct {
	base     http.RoundTripper
	fail     []string
	hold     string
	once     sync.Once
	answered chan struct{} // closed by the first failure answered to a command other than hold
}

func (f *failTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	path := strings.ToLower(req.URL.Path)
	held := strings.Contains(path, f.hold)
	if held {
		select {
		case <-f.answered:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	for _, cmd := range f.fail {
		if strings.Contains(path, cmd) {
			if !held {
				defer f.once.Do(func() { close(f.answered) })
			}
			return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"text/plain"}},
				Body: http.NoBody, Request: req}, nil
		}
	}
	return f.base.RoundTrip(req)
}

// TestPlanRepeatedPage: a service that ignores StartIndex must not make a sync read the
// first page for ever. (The first page comes with list.get, and the walk of the rest from
// the second: the repeat shows at the third.)
func TestPlanRepeatedPage(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	page.WriteString(`{"Success":true,"Subscribers":[`)
	for i := range sendloop.BrowsePageSize {
		if i > 0 {
			page.WriteString(",")
		}
		fmt.Fprintf(&page, `{"SubscriberID":"%d","EmailAddress":"%s","SubscriptionStatus":"Subscribed"}`, i+1, emailN(i))
	}
	page.WriteString("]}")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch path := strings.ToLower(r.URL.Path); {
		case strings.Contains(path, "list.get"):
			_, _ = w.Write([]byte(`{"Success":true,"List":{"ListID":"1","Name":"L","OptInMode":"Single"}}`))
		case strings.Contains(path, "suppression.list"):
			_, _ = w.Write([]byte(`{"Success":true,"SuppressedEmails":[]}`))
		default:
			_, _ = w.Write([]byte(page.String()))
		}
	}))
	defer srv.Close()
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, concurrency := range []int{1, 4} {
		job, err := New(testContext(t), c, 1, Rows([]Row{{Email: "ann@example.com"}}), Options{Concurrency: concurrency, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = job.Plan(testContext(t))
		if err == nil || !strings.Contains(err.Error(), "page 2: the page repeats the previous one") {
			t.Errorf("concurrency %d: got %v", concurrency, err)
		}
	}
}

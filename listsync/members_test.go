package listsync

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
)

// TestBrowseMembers reads lists of several sizes page by page, pages asked for ahead: every
// member once, in the service's order.
func TestBrowseMembers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c := apiClient(t, f)
	ctx := testContext(t)
	for _, n := range []int{0, 1, sendloop.BrowsePageSize - 1, sendloop.BrowsePageSize, 2*sendloop.BrowsePageSize + 7} {
		list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: fmt.Sprint("L", n), OptInMode: sendloop.OptInSingle})
		if err != nil {
			t.Fatal(err)
		}
		var rows []sendloop.ImportSubscriber
		for i := range n {
			rows = append(rows, sendloop.ImportSubscriber{EmailAddress: emailN(i)})
		}
		if n > 0 {
			if _, err := c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
				t.Fatal(err)
			}
		}
		for _, concurrency := range []int{1, 3, 8} {
			var want, got []string
			for s, err := range c.Subscribers.BrowseIter(ctx, list, sendloop.SubscriberBrowseParams{}) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, s.EmailAddress)
			}
			for s, err := range browseMembers(ctx, c, list, concurrency) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, s.EmailAddress)
			}
			if len(got) != n || strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%d members, concurrency %d: got %d, want %d in BrowseIter's order", n, concurrency, len(got), len(want))
			}
		}
	}
}

// TestBrowseMembersRepeatedPage: a service that ignores StartIndex must not make sync read
// the first page for ever.
func TestBrowseMembersRepeatedPage(t *testing.T) {
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
		_, _ = w.Write([]byte(page.String()))
	}))
	defer srv.Close()
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var last error
	for _, err := range browseMembers(testContext(t), c, 1, 4) {
		if err != nil {
			last = err
			break
		}
		n++
	}
	if last == nil || !strings.Contains(last.Error(), "answered page 1 as page 0") || n != sendloop.BrowsePageSize {
		t.Errorf("after %d members: %v", n, last)
	}
}

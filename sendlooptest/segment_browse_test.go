package sendlooptest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestSegmentBrowseResumesOnlyWhileTheListIsUnchanged reads a segment page by page, in
// order, out of order and across changes to the list, and holds every page to what a walk
// of the whole list gives: the cursor that keeps reading a large segment linear must never
// serve a page the members' current values would not.
func TestSegmentBrowseResumesOnlyWhileTheListIsUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Segmented", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	fieldID, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "Plan"})
	if err != nil {
		t.Fatal(err)
	}
	const members = 750
	plan := make(map[string]string, members) // the test's own copy of every member's Plan
	var order []string                       // addresses in SubscriberID order
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range members {
			email := fmt.Sprintf("m%03d@example.com", i)
			value := []string{"pro", "free", "pro"}[i%3]
			plan[email] = value
			order = append(order, email)
			if !yield(sendloop.ImportSubscriber{EmailAddress: email, Fields: sendloop.CustomFields{fieldID: value}}) {
				return
			}
		}
	}
	if _, err := c.Subscribers.ImportAll(ctx, listID, rows, sendloop.ImportOptions{Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	segID, err := srv.DefineSegment(listID, "Pro", fieldID, "pro")
	if err != nil {
		t.Fatal(err)
	}
	want := func(page int) []string {
		var all []string
		for _, email := range order {
			if plan[email] == "pro" {
				all = append(all, email)
			}
		}
		start := min(len(all), page*sendloop.BrowsePageSize)
		return all[start:min(len(all), start+sendloop.BrowsePageSize)]
	}
	setPlan := func(email, value string) {
		t.Helper()
		if err := c.Subscribers.Update(ctx, listID, sendloop.SubscriberUpdateParams{EmailAddress: email,
			Fields: sendloop.CustomFields{fieldID: value}}); err != nil {
			t.Fatal(err)
		}
		plan[email] = value
	}

	steps := []struct {
		name   string
		change func()
		page   int
	}{
		{name: "first page", page: 0},
		{name: "next page", page: 1},
		{name: "a member before the cursor leaves the segment", change: func() { setPlan("m000@example.com", "free") }, page: 2},
		{name: "a member before the cursor joins it", change: func() { setPlan("m001@example.com", "pro") }, page: 3},
		{name: "next page again", page: 4},
		{name: "back to an earlier page", page: 1},
		{name: "skipping ahead", page: 4},
		{name: "past the end", page: 9},
		{name: "a page far beyond the list", page: 1 << 30},
	}
	for _, step := range steps {
		if step.change != nil {
			step.change()
		}
		page, err := c.Subscribers.Browse(ctx, listID, sendloop.SubscriberBrowseParams{SegmentID: segID, StartIndex: step.page})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got := make([]string, len(page))
		for i, s := range page {
			got[i] = s.EmailAddress
		}
		if fmt.Sprint(got) != fmt.Sprint(want(step.page)) {
			t.Errorf("%s (page %d):\n got %v\nwant %v", step.name, step.page, got, want(step.page))
		}
	}
}

// BenchmarkBrowseWholeSegment reads every page of a segment holding half of a 20,000-member
// list, beside the whole list's pages as the baseline: with the cursor, a segment costs
// about what the list does, where a walk from the start for every page made it quadratic.
func BenchmarkBrowseWholeSegment(b *testing.B) {
	ctx := context.Background()
	srv := sendlooptest.NewServer(b, sendlooptest.WithRequestLog(0))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Big", OptInMode: sendloop.OptInSingle})
	if err != nil {
		b.Fatal(err)
	}
	fieldID, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "Plan"})
	if err != nil {
		b.Fatal(err)
	}
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range 20_000 {
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("b%05d@example.com", i),
				Fields: sendloop.CustomFields{fieldID: []string{"pro", "free"}[i%2]}}) {
				return
			}
		}
	}
	if _, err := c.Subscribers.ImportAll(ctx, listID, rows, sendloop.ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	segID, err := srv.DefineSegment(listID, "Pro", fieldID, "pro")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		segment int
	}{{"list", 0}, {"segment", segID}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				n := 0
				for _, err := range c.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{SegmentID: bc.segment}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(n), "members")
			}
		})
	}
}

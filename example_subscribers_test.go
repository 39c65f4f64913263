package sendloop_test

import (
	"context"
	"fmt"
	"iter"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func ExampleSubscribersService_Subscribe() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()

	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Newsletter", OptInMode: sendloop.OptInDouble})
	res, err := client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.9"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SubscriptionStatus)

	// The fake plays the address owner following the confirmation email.
	_ = srv.Confirm(listID, "ann@example.com")
	sub, _ := client.Subscribers.Get(ctx, listID, sendloop.SubscriberGetParams{EmailAddress: "ann@example.com"})
	fmt.Println(sub.SubscriptionStatus)
	// Output:
	// Confirmation Pending
	// Subscribed
}

func ExampleSubscribersService_ImportAll() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Customers", OptInMode: sendloop.OptInSingle})
	_, _ = srv.Suppress(sendloop.GlobalSuppression, "complained@example.com", "FBL Report")

	// Any iter.Seq works: rows read from a CSV file or a database cursor stream through.
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for _, email := range []string{"a@example.com", "b@example.com", "not an address", "complained@example.com", "a@example.com"} {
			if !yield(sendloop.ImportSubscriber{EmailAddress: email}) {
				return
			}
		}
	}
	report, err := client.Subscribers.ImportAll(ctx, listID, iter.Seq[sendloop.ImportSubscriber](rows), sendloop.ImportOptions{BatchSize: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("imported %d, duplicate %d, failed %d\n", report.Imported, report.Duplicate, len(report.Failed))
	for _, f := range report.Failed {
		fmt.Printf("row %d %q: %v\n", f.Index, f.Subscriber.EmailAddress, f.Err)
	}
	// Unordered output:
	// imported 2, duplicate 1, failed 2
	// row 2 "not an address": sendloop: subscriber.import: invalid parameters: "not an address" is not an email address: it has no @ (fields: Subscribers[2][EmailAddress]) [error 111]
	// row 3 "complained@example.com": sendloop: subscriber.import refused the row
}

func ExampleSubscribersService_BrowseIter() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Big list", OptInMode: sendloop.OptInSingle})
	rows := make([]sendloop.ImportSubscriber, 230)
	for i := range rows {
		rows[i].EmailAddress = fmt.Sprintf("reader%03d@example.com", i)
	}
	_, _ = client.Subscribers.Import(ctx, listID, sendloop.SubscriberImportParams{Subscribers: rows})

	count, last := 0, ""
	for sub, err := range client.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		count, last = count+1, sub.EmailAddress
	}
	fmt.Println(count, last)
	// Output: 230 reader229@example.com
}

func ExampleSubscribersService_Members() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Customers", OptInMode: sendloop.OptInSingle})
	plan, _ := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "Plan"})
	rows := make([]sendloop.ImportSubscriber, 230)
	for i := range rows {
		rows[i] = sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("customer%03d@example.com", i),
			Fields: sendloop.CustomFields{plan: []string{"free", "pro", "team"}[i%3]}}
	}
	_, _ = client.Subscribers.Import(ctx, listID, sendloop.SubscriberImportParams{Subscribers: rows})

	// Only the plan of each member is decoded, with three pages read at once.
	perPlan := map[string]int{}
	for m, err := range client.Subscribers.Members(ctx, listID, sendloop.SubscriberMembersParams{FieldIDs: []int{plan}, Concurrency: 3}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		perPlan[m.Values[0]]++ // a string is kept as it is; the Values slice is not
	}
	fmt.Println(perPlan)
	// Output: map[free:77 pro:77 team:76]
}

func ExampleSuppressionService_Add() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()

	_, _ = client.Suppression.Add(ctx, sendloop.GlobalSuppression, sendloop.SuppressionAddParams{EmailAddress: "bounced@example.com"})
	entries, _ := client.Suppression.Get(ctx, "bounced@example.com")
	for _, e := range entries {
		fmt.Println(e.ListID, e.Type)
	}
	// Output: 0 Manual
}

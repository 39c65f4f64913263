package sendlooptest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// ExampleNewServer starts the fake, points a client at it, makes it fail once, and reads
// what it recorded. In a test, pass t: the server is closed when the test ends.
func ExampleNewServer() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: 1, MaxWait: 1}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 503}) // answered once, then served
	info, err := client.Account.Get(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Username)
	fmt.Println("requests:", len(srv.Requests()), "executions:", srv.Executions("account.info.get"))
	fmt.Println("path:", srv.LastRequest().Path)
	// Output:
	// demo
	// requests: 2 executions: 1
	// path: /api/v3/account.info.get/json
}

// ExampleWithLatency shows a job as it would run against an account 30 ms away: reading a
// list of 1,000 members (11 pages) one page after the other takes 11 round trips; with 8
// pages in flight, about 2.
func ExampleWithLatency() {
	const latency = 30 * time.Millisecond
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Far away", OptInMode: sendloop.OptInSingle})
	rows := make([]sendloop.ImportSubscriber, 1000)
	for i := range rows {
		rows[i].EmailAddress = fmt.Sprintf("m%04d@example.com", i)
	}
	_, _ = client.Subscribers.Import(ctx, listID, sendloop.SubscriberImportParams{Subscribers: rows})

	srv.SetLatency(latency, 5*time.Millisecond) // or WithLatency in NewServer
	for _, concurrency := range []int{1, 8} {
		start, n := time.Now(), 0
		for _, err := range client.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{Concurrency: concurrency}) {
			if err != nil {
				fmt.Println(err)
				return
			}
			n++
		}
		// Only the lower bound is certain: one page at a time costs a round trip per page.
		// Eight pages at a time take about two round trips, but a busy machine may take longer.
		fmt.Printf("Concurrency %d: %d members, at least 2 round trips: %t\n", concurrency, n, time.Since(start) >= 2*latency)
	}
	// Output:
	// Concurrency 1: 1000 members, at least 2 round trips: true
	// Concurrency 8: 1000 members, at least 2 round trips: true
}

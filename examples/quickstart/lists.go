package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/webhook"
)

// listTour runs a double opt-in list through its life on the fake: subscribe, confirm,
// browse, unsubscribe, with the list's webhooks received by a webhook.Handler. It returns
// the list's ID.
func listTour(ctx context.Context, client *sendloop.Client, srv *sendlooptest.Server) (int, error) {
	events, hooksURL, stop, err := startWebhookReceiver()
	if err != nil {
		return 0, err
	}
	defer stop()

	listID, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Quickstart newsletter", OptInMode: sendloop.OptInDouble})
	if err != nil {
		return 0, fmt.Errorf("creating a list: %w", err)
	}
	fields := map[string]int{}
	for _, name := range []string{"First name", "Plan"} {
		if fields[name], err = srv.DefineCustomField(listID, sendlooptest.CustomField{Name: name}); err != nil {
			return 0, err
		}
	}
	// The service's callback names no list: each list's callback URLs carry its ID, which
	// the handler reads (webhook.WithListIDParam).
	listHooksURL := fmt.Sprintf("%s?token=quickstart&list=%d", hooksURL, listID)
	welcome := sendloop.FinalActionSendEmail
	err = client.Lists.UpdateSettings(ctx, listID, sendloop.ListSettingsUpdateParams{
		SubscriptionFinalAction:     &welcome,
		WebServiceSubscriptionURL:   sendloop.String(listHooksURL),
		WebServiceUnsubscriptionURL: sendloop.String(listHooksURL),
	})
	if err != nil {
		return 0, fmt.Errorf("setting the webhooks: %w", err)
	}
	fmt.Printf("list:        #%d %q, double opt-in, webhooks at %s\n", listID, "Quickstart newsletter", hooksURL)

	people := []struct{ email, name, plan string }{
		{"ann@example.com", "Ann", "pro"}, {"bob@example.com", "Bob", "free"}, {"cem@example.com", "Cem", "pro"},
	}
	for _, p := range people {
		res, err := client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: p.email, SubscriptionIP: "203.0.113.7", Fields: sendloop.CustomFields{fields["First name"]: p.name, fields["Plan"]: p.plan}})
		if err != nil {
			return 0, fmt.Errorf("subscribing %s: %w", p.email, err)
		}
		fmt.Printf("subscribe:   %s → %s\n", p.email, res.SubscriptionStatus)
	}
	for _, p := range people {
		// The fake plays the address owner who follows the confirmation email.
		if err := srv.Confirm(listID, p.email); err != nil {
			return 0, err
		}
	}
	fmt.Printf("outbox:      %s (confirmation requests and welcomes)\n", plural(len(srv.Outbox()), "email"))

	for sub, err := range client.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			return 0, fmt.Errorf("browsing: %w", err)
		}
		fmt.Printf("browse:      #%d %s %s, plan %s\n", sub.SubscriberID, sub.EmailAddress, sub.SubscriptionStatus, sub.CustomFields[fields["Plan"]])
	}

	// Bob leaves this list (and only this one) from the page the RedirectURL of his
	// subscription led to; his address is the unsubscription's IP.
	if _, err := client.Subscribers.Unsubscribe(ctx, listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: "bob@example.com", UnsubscriptionIP: "203.0.113.7"}); err != nil {
		return 0, fmt.Errorf("unsubscribing: %w", err)
	}
	fmt.Println("unsubscribe: bob@example.com")

	for _, ev := range events() {
		fmt.Printf("webhook:     %s of %s (list #%d, plan %s)\n", ev.Kind, ev.Subscriber.EmailAddress, ev.ListID, ev.Subscriber.CustomFields[fields["Plan"]])
	}
	return listID, nil
}

// startWebhookReceiver serves a webhook.Handler on a loopback port and returns the events
// it has received so far.
func startWebhookReceiver() (events func() []*webhook.Event, url string, stop func(), err error) {
	var mu sync.Mutex
	var received []*webhook.Event
	handler, err := webhook.NewHandler(func(_ context.Context, ev *webhook.Event) error {
		mu.Lock()
		defer mu.Unlock()
		received = append(received, ev)
		return nil
	}, webhook.WithToken("quickstart"), webhook.WithListIDParam("list"))
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	server := &http.Server{Handler: handler}
	go func() { _ = server.Serve(ln) }()
	events = func() []*webhook.Event {
		mu.Lock()
		defer mu.Unlock()
		return append([]*webhook.Event(nil), received...)
	}
	return events, "http://" + ln.Addr().String() + "/sendloop", func() { _ = server.Close() }, nil
}

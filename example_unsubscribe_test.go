package sendloop_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func ExampleSubscribersService_Unsubscribe() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	news, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	offers, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Offers", OptInMode: sendloop.OptInSingle})
	for _, listID := range []int{news, offers} {
		_, _ = client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: "bob@example.com", SubscriptionIP: "203.0.113.9"})
	}

	// A clean-up job acts on no person's request: it sends 0.0.0.0 as the IP.
	res, err := client.Subscribers.Unsubscribe(ctx, offers, sendloop.SubscriberUnsubscribeParams{
		EmailAddress: "bob@example.com", UnsubscriptionIP: "0.0.0.0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Offers:", res.SubscriptionStatus)
	sub, _ := client.Subscribers.Get(ctx, news, sendloop.SubscriberGetParams{EmailAddress: "bob@example.com"})
	fmt.Println("News:", sub.SubscriptionStatus)

	// An address the list does not hold.
	_, err = client.Subscribers.Unsubscribe(ctx, offers, sendloop.SubscriberUnsubscribeParams{
		EmailAddress: "eve@example.com", UnsubscriptionIP: "0.0.0.0"})
	fmt.Println("eve in Offers:", errors.Is(err, sendloop.ErrNotInList))
	// Output:
	// Offers: Unsubscribed
	// News: Subscribed
	// eve in Offers: true
}

func ExampleClient_Legacy() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	// One client for both APIs; the legacy client's own settings come with WithLegacyOptions.
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithLegacyOptions(legacy.WithInputForm(legacy.MessageForm)))
	ctx := context.Background()
	listID, _ := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInDouble})

	res, err := client.Legacy().SubscriberAdd(ctx, listID, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.9"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status)
	fmt.Println(client.Legacy().InputForm(), client.Legacy().BaseURL() == client.BaseURL())
	// Output:
	// Waiting For Opt-In Confirmation
	// message true
}

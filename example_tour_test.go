package sendloop_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// Example is the tour: a client on the embedded fake, a list, a subscription, the typed
// error of a second one, and a walk over the list.
func Example() {
	srv := sendlooptest.NewServer(nil) // in tests: sendlooptest.NewServer(t)
	defer srv.Close()
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	listID, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		res, err := client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "203.0.113.7"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(email, res.SubscriptionStatus)
	}

	_, err = client.Subscribers.Subscribe(ctx, listID, sendloop.SubscriberSubscribeParams{EmailAddress: "ann@example.com", SubscriptionIP: "203.0.113.7"})
	fmt.Println("again:", errors.Is(err, sendloop.ErrEmailExists))

	for sub, err := range client.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("member:", sub.SubscriberID, sub.EmailAddress)
	}
	// Output:
	// ann@example.com Subscribed
	// bob@example.com Subscribed
	// again: true
	// member: 1 ann@example.com
	// member: 2 bob@example.com
}

// ExampleListsService_Create makes a double opt-in list, gives it a webhook URL and reads
// it back.
func ExampleListsService_Create() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()

	// The mode is accepted in any case and sent as the service spells it.
	id, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Newsletter", OptInMode: "double"})
	if err != nil {
		fmt.Println(err)
		return
	}
	hook := fmt.Sprintf("https://hooks.example.com/sendloop?list=%d", id)
	if err := client.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{WebServiceSubscriptionURL: &hook}); err != nil {
		fmt.Println(err)
		return
	}
	list, err := client.Lists.Get(ctx, id, sendloop.ListGetParams{})
	if err != nil {
		fmt.Println(err)
		return
	}
	settings, _ := client.Lists.Settings(ctx, id)
	fmt.Println(list.ListID, list.Name, list.OptInMode)
	fmt.Println(settings.WebServiceSubscriptionURL)

	// A mode the service does not know is refused before anything is sent.
	_, err = client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "X", OptInMode: "Triple"})
	fmt.Println(errors.Is(err, sendloop.ErrInvalidParameterValue))
	// Output:
	// 1 Newsletter Double
	// https://hooks.example.com/sendloop?list=1
	// true
}

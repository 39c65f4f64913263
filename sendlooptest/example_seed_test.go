package sendlooptest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func ExampleServer_LoadSeed() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	// The same document `sendloop fake --seed FILE` reads.
	seed, err := sendlooptest.ReadSeed(strings.NewReader(`{"lists": [{
		"id": 7, "name": "Customers",
		"custom_fields": [{"id": 3, "name": "Company"}],
		"subscribers": [
			{"email": "ann@example.com", "fields": {"Company": "Acme"}},
			{"email": "bob@example.com", "status": "Unsubscribed"}
		]}]}`))
	if err == nil {
		err = srv.LoadSeed(seed)
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	subs, _ := client.Subscribers.Browse(context.Background(), 7, sendloop.SubscriberBrowseParams{})
	for _, s := range subs {
		fmt.Printf("%s %s %q\n", s.EmailAddress, s.SubscriptionStatus, s.CustomFields[3])
	}

	// A fault names its place in the document.
	_, err = sendlooptest.ReadSeed(strings.NewReader(`{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com", "statuz": "x"}]}]}`))
	fmt.Println(err)
	// Output:
	// ann@example.com Subscribed "Acme"
	// bob@example.com Unsubscribed ""
	// seed: lists[0].subscribers[0].statuz: unknown member; known here: email, status, bounce_type, fields
}

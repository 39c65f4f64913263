// Command quickstart shows the SDK's main path. With SENDLOOP_API_KEY unset it runs against
// an embedded sendlooptest fake, so it needs no account and no network, and tours a double
// opt-in list from subscription to unsubscription with its webhooks. With the key set (and
// SENDLOOP_BASE_URL for an account host) it only reads the real account, changing nothing.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client, srv, where, err := newClient()
	if err != nil {
		return err
	}
	if srv != nil {
		defer srv.Close()
	}
	fmt.Println("sendloop quickstart against", where)

	info, err := client.Account.Get(ctx)
	if err != nil {
		return fmt.Errorf("reading the account: %w", err)
	}
	fmt.Printf("account:     %s (%s %s), time zone %s, member since %s\n",
		info.Username, info.FirstName, info.LastName, info.TimeZone, info.MemberSince.Format("2006-01-02"))

	now, err := client.System.Date(ctx)
	if err != nil {
		return fmt.Errorf("reading the system date: %w", err)
	}
	fmt.Printf("system date: %s %s\n", now.Date, now.TimeZone)

	zones, err := client.System.TimeZones(ctx)
	if err != nil {
		return fmt.Errorf("reading the time zones: %w", err)
	}
	fmt.Printf("time zones:  %d known\n", len(zones))

	if srv == nil {
		fmt.Println("(the list tour runs against the fake only: it writes)")
		return nil
	}
	listID, err := listTour(ctx, client, srv)
	if err != nil {
		return err
	}
	return campaignTour(ctx, client, srv, listID)
}

// newClient returns a client for the real service when SENDLOOP_API_KEY is set, and for an
// embedded fake otherwise (then srv is the fake).
func newClient() (client *sendloop.Client, srv *sendlooptest.Server, where string, err error) {
	if os.Getenv(sendloop.EnvAPIKey) != "" {
		client, err = sendloop.NewClientFromEnv()
		if err != nil {
			return nil, nil, "", err
		}
		return client, nil, client.BaseURL(), nil
	}
	srv, err = sendlooptest.Start()
	if err != nil {
		return nil, nil, "", err
	}
	client, err = sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		srv.Close()
		return nil, nil, "", err
	}
	return client, srv, "the embedded sendlooptest fake at " + srv.URL + " (set SENDLOOP_API_KEY for a real account)", nil
}

package sendloop_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func ExampleNewClient() {
	// Against the real service: sendloop.NewClient(os.Getenv("SENDLOOP_API_KEY")), or
	// NewClientFromEnv. Here against the embedded fake.
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()

	client, err := sendloop.NewClient(srv.APIKey,
		sendloop.WithBaseURL(srv.URL),
		sendloop.WithUserAgent("newsletter-sync/1.0"),
		sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: 5, MaxRetryAfter: 30 * time.Second}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := client.Account.Get(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Username, info.TimeZone)
	// Output: demo Europe/London
}

func ExampleAccountService_Update() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()

	// A time zone the service does not list is refused before the update is sent.
	err := client.Account.Update(ctx, sendloop.AccountUpdateParams{TimeZone: "Europe/Atlantis"})
	fmt.Println(errors.Is(err, sendloop.ErrInvalidParameterValue))

	if err := client.Account.Update(ctx, sendloop.AccountUpdateParams{TimeZone: "Asia/Tokyo", City: "Tokyo"}); err != nil {
		fmt.Println(err)
		return
	}
	info, _ := client.Account.Get(ctx)
	fmt.Println(info.City, info.TimeZone)
	// Output:
	// true
	// Tokyo Asia/Tokyo
}

func ExampleSystemService_Date() {
	noon := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	srv := sendlooptest.NewServer(nil, sendlooptest.WithClock(func() time.Time { return noon }))
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))

	now, err := client.System.Date(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(now.Date, now.TimeZone)
	// Output: 2026-11-21 12:00:00 UTC
}

func ExampleClient_Call() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))

	// Any v3 command, typed by the SDK or not.
	var out struct{ ListID int }
	err := client.Call(context.Background(), "list.create",
		url.Values{"Name": {"Customers"}, "OptInMode": {"Double"}}, &out)
	fmt.Println(out.ListID, err)
	// Output: 1 <nil>
}

func ExampleAPIError() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, _ := sendloop.NewClient("not-the-key", sendloop.WithBaseURL(srv.URL))

	_, err := client.Account.Get(context.Background())
	fmt.Println(errors.Is(err, sendloop.ErrInvalidAPIKey))
	var apiErr *sendloop.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Code, apiErr.Command)
	}
	// Output:
	// true
	// 104 (invalid API key) account.info.get
}

func ExampleValidationError() {
	client, _ := sendloop.NewClient("your-api-key")

	// Nothing is sent: the address is checked first.
	err := client.Account.Update(context.Background(), sendloop.AccountUpdateParams{Email: "not an address"})
	var ve *sendloop.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Code, ve.Fields)
	}
	fmt.Println(errors.Is(err, sendloop.ErrInvalidEmailFormat))
	// Output:
	// 111 (invalid email address format) [Email]
	// true
}

func ExampleDate() {
	var d sendloop.Date
	_ = d.UnmarshalJSON([]byte(`"0000-00-00"`))
	fmt.Println(d.IsZero(), d)
	_ = d.UnmarshalJSON([]byte(`"2026-11-21"`))
	fmt.Println(d.Weekday(), d)
	// Output:
	// true 0000-00-00
	// Saturday 2026-11-21
}

// ExampleInt decodes, with Call, an answer whose numbers come as strings or as numbers:
// the tolerant scalars read both.
func ExampleInt() {
	srv := sendlooptest.NewServer(nil)
	defer srv.Close()
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if _, err := client.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle}); err != nil {
		fmt.Println(err)
		return
	}
	var out struct {
		Success sendloop.Bool
		Lists   []struct {
			ListID            sendloop.Int
			Name              string
			ActiveSubscribers sendloop.Int
		}
	}
	if err := client.Call(ctx, "list.getlist", nil, &out); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range out.Lists {
		fmt.Println(out.Success, l.ListID, l.Name, l.ActiveSubscribers)
	}
	// Output: true 1 News 0
}

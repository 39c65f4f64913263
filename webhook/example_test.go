package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-sendloop/sendloop/webhook"
)

func ExampleNewHandler() {
	h := webhook.NewHandler(func(ctx context.Context, ev *webhook.Event) error {
		s := ev.Subscriber
		fmt.Println(ev.Kind, ev.Time.Format("2006-01-02 15:04:05 MST"), "list", ev.ListID)
		fmt.Println(s.ID, s.EmailAddress, s.SubscriptionStatus, s.BounceType)
		fmt.Println("subscribed", s.SubscriptionDate.Format("2006-01-02"), "from", s.SubscriptionIP)
		fmt.Println("unsubscribed", s.UnsubscriptionDate.IsZero(), s.UnsubscriptionIP == "")
		fmt.Println("name", s.CustomFields[7])
		return nil // make this idempotent: deliveries may repeat
	}, webhook.WithToken("s3cret"))

	srv := httptest.NewServer(h)
	defer srv.Close()

	// The list's WebServiceSubscriptionURL would be srv.URL + "?token=s3cret".
	body := `<?xml version="1.0" encoding="UTF-8"?>
<Webhook>
  <Action>Subscription</Action>
  <Timestamp>1763700000</Timestamp>
  <ListID>3</ListID>
  <Subscriber>
    <SubscriberID>12</SubscriberID>
    <EmailAddress>ann@example.com</EmailAddress>
    <BounceType>Not Bounced</BounceType>
    <SubscriptionStatus>Subscribed</SubscriptionStatus>
    <SubscriptionDate>2026-11-21</SubscriptionDate>
    <SubscriptionIP>127.0.0.1</SubscriptionIP>
    <UnsubscriptionDate>0000-00-00</UnsubscriptionDate>
    <UnsubscriptionIP>0.0.0.0</UnsubscriptionIP>
    <OptInDate>2026-11-21</OptInDate>
    <CustomField7>Ann</CustomField7>
  </Subscriber>
</Webhook>`
	resp, err := http.Post(srv.URL+"?token=s3cret", "text/xml", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	// Output:
	// Subscription 2025-11-21 04:40:00 UTC list 3
	// 12 ann@example.com Subscribed Not Bounced
	// subscribed 2026-11-21 from 127.0.0.1
	// unsubscribed true true
	// name Ann
	// 200 OK
}

func ExampleParseBody() {
	body := "Action=unsubscribe&Timestamp=1763700000" +
		"&Subscriber[SubscriberID]=12&Subscriber[EmailAddress]=ann%40example.com&Subscriber[CustomField7]=Ann"
	ev, err := webhook.ParseBody("application/x-www-form-urlencoded", []byte(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ev.Kind, ev.Subscriber.ID, ev.Subscriber.EmailAddress, ev.Subscriber.CustomFields)

	_, err = webhook.ParseBody("application/json", []byte(`{"Action":"bounce","Subscriber":{"EmailAddress":"ann@example.com"}}`))
	fmt.Println(err, errors.Is(err, webhook.ErrUnknownAction))

	// Output:
	// Unsubscription 12 ann@example.com map[7:Ann]
	// webhook: json body: Action: unknown action true
}

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
	h, err := webhook.NewHandler(func(ctx context.Context, ev *webhook.Event) error {
		s := ev.Subscriber
		fmt.Println(ev.Kind, ev.Time.Format("2006-01-02 15:04:05 MST"), "list", ev.ListID)
		fmt.Println(s.SubscriberID, s.EmailAddress, s.SubscriptionStatus, s.BounceType)
		fmt.Println("subscribed", s.SubscriptionDate.Format("2006-01-02"), "from", s.SubscriptionIP)
		fmt.Println("unsubscribed", s.UnsubscriptionDate.IsZero(), s.UnsubscriptionIP)
		fmt.Println("name", s.CustomFields[7], "order", ev.Extra["order_id"])
		return nil // make this idempotent: deliveries may repeat
	}, webhook.WithToken("s3cret"), webhook.WithListIDParam("list"))
	if err != nil {
		fmt.Println(err)
		return
	}

	srv := httptest.NewServer(h)
	defer srv.Close()

	// List 3's WebServiceSubscriptionURL would be srv.URL + "?token=s3cret&list=3". The
	// service posts this document (labelled as a form, which does not matter: the body
	// decides).
	body := `<?xml version="1.0" encoding="UTF-8"?>
<sendloop_webservice>
  <action>Subscription</action>
  <action_timestamp>1763700000</action_timestamp>
  <subscriber>
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
  </subscriber>
  <order_id>1017</order_id>
</sendloop_webservice>`
	resp, err := http.Post(srv.URL+"?token=s3cret&list=3", "application/x-www-form-urlencoded", strings.NewReader(body))
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
	// unsubscribed true 0.0.0.0
	// name Ann order 1017
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
	fmt.Println(ev.Kind, ev.Subscriber.SubscriberID, ev.Subscriber.EmailAddress, ev.Subscriber.CustomFields)

	_, err = webhook.ParseBody("application/json", []byte(`{"Action":"bounce","Subscriber":{"EmailAddress":"ann@example.com"}}`))
	fmt.Println(err, errors.Is(err, webhook.ErrUnknownAction))

	// Output:
	// Unsubscription 12 ann@example.com map[7:Ann]
	// webhook: json body: action: unknown action true
}

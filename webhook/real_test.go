package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/webhook"
)

// realCallback is the document the service posts, as PHP's curl sends a string body: labelled
// as a form.
const realCallback = `<?xml version="1.0" encoding="UTF-8"?>
<sendloop_webservice>
  <action>Subscription</action>
  <action_timestamp>1763700000</action_timestamp>
  <subscriber>
    <SubscriberID>12</SubscriberID>
    <EmailAddress>ann@example.com</EmailAddress>
    <SubscriptionStatus>Subscribed</SubscriptionStatus>
    <BounceType>Not Bounced</BounceType>
    <SubscriptionDate>2026-11-21</SubscriptionDate>
    <SubscriptionIP>203.0.113.7</SubscriptionIP>
    <CustomField7>Ann</CustomField7>
  </subscriber>
  <order_id>1017</order_id>
</sendloop_webservice>`

func TestRealCallback(t *testing.T) {
	t.Parallel()
	upper := strings.NewReplacer("sendloop_webservice", "SENDLOOP_WEBSERVICE", "<action>", "<ACTION>", "</action>", "</ACTION>",
		"action_timestamp", "ACTION_TIMESTAMP", "subscriber>", "SUBSCRIBER>").Replace(realCallback)
	mixed := strings.NewReplacer("sendloop_webservice", "SendLoop_WebService", "action_timestamp", "Action_Timestamp",
		"<EmailAddress>", "<emailaddress>", "</EmailAddress>", "</emailaddress>").Replace(realCallback)
	tests := []struct {
		name, body, query string
		opts              []webhook.Option
		wantCode          int
		check             func(t *testing.T, ev *webhook.Event)
	}{
		{name: "as posted", body: realCallback, query: "?list=3", opts: []webhook.Option{webhook.WithListIDParam("list")}, wantCode: 200,
			check: func(t *testing.T, ev *webhook.Event) {
				if ev.Kind != webhook.KindSubscription || !ev.Time.Equal(time.Unix(1763700000, 0)) || ev.ListID != 3 {
					t.Errorf("kind %q, time %v, list %d", ev.Kind, ev.Time, ev.ListID)
				}
				s := ev.Subscriber
				if s.SubscriberID != 12 || s.EmailAddress != "ann@example.com" || s.CustomFields[7] != "Ann" || s.SubscriptionIP != "203.0.113.7" {
					t.Errorf("subscriber %+v", s)
				}
				if ev.Extra["order_id"] != "1017" || s.Extra["order_id"] != "" {
					t.Errorf("the top-level member belongs to the event: event %v, subscriber %v", ev.Extra, s.Extra)
				}
			}},
		{name: "upper-case names", body: upper, wantCode: 200, check: func(t *testing.T, ev *webhook.Event) {
			if ev.Time.IsZero() || ev.Subscriber.EmailAddress != "ann@example.com" || ev.ListID != 0 {
				t.Errorf("%+v", ev)
			}
		}},
		{name: "mixed-case names", body: mixed, wantCode: 200, check: func(t *testing.T, ev *webhook.Event) {
			if ev.Time.IsZero() || ev.Subscriber.EmailAddress != "ann@example.com" {
				t.Errorf("%+v", ev)
			}
		}},
		{name: "no timestamp: zero time", body: strings.Replace(realCallback, "<action_timestamp>1763700000</action_timestamp>", "", 1), wantCode: 200,
			check: func(t *testing.T, ev *webhook.Event) {
				if !ev.Time.IsZero() {
					t.Errorf("time %v", ev.Time)
				}
			}},
		{name: "non-numeric timestamp", body: strings.Replace(realCallback, "1763700000", "yesterday", 1), wantCode: 400},
		{name: "empty subscriber", body: `<sendloop_webservice><action>Unsubscription</action><subscriber></subscriber></sendloop_webservice>`, wantCode: 400},
		{name: "bad list parameter", body: realCallback, query: "?list=x", opts: []webhook.Option{webhook.WithListIDParam("list")}, wantCode: 400},
		{name: "2 MiB body", body: "<sendloop_webservice>" + strings.Repeat(" ", 2<<20) + "</sendloop_webservice>", wantCode: 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got *webhook.Event
			h := mustHandler(t, func(_ context.Context, ev *webhook.Event) error { got = ev; return nil }, tt.opts...)
			r := httptest.NewRequest(http.MethodPost, "/hook"+tt.query, strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded") // the body decides
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.wantCode {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.wantCode, w.Body)
			}
			if tt.wantCode != 200 {
				if got != nil {
					t.Fatal("a refused callback reached the callback")
				}
				return
			}
			tt.check(t, got)
		})
	}
}

package sendlooptest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWebhookDeliveryPrintsItsBody checks that a recorded delivery prints its body as text,
// whatever the verb, and says how it went.
func TestWebhookDeliveryPrintsItsBody(t *testing.T) {
	t.Parallel()
	body := []byte("<sendloop_webservice><action>Subscription</action></sendloop_webservice>")
	tests := []struct {
		name string
		d    WebhookDelivery
		want string // the first line
	}{
		{"delivered", WebhookDelivery{URL: "http://h/x?list=1", Action: "Subscription", Body: body, Attempts: 1, StatusCode: 200, Delivered: true},
			"Subscription webhook to http://h/x?list=1: delivered, 1 attempt, status 200"},
		{"refused", WebhookDelivery{URL: "http://h/x", Action: "Unsubscription", Body: body, Attempts: 3, StatusCode: 400, Err: "HTTP 400"},
			"Unsubscription webhook to http://h/x: not delivered (HTTP 400), 3 attempts, status 400"},
		{"no answer", WebhookDelivery{URL: "http://h/x", Action: "Subscription", Body: body, Attempts: 2},
			"Subscription webhook to http://h/x: not delivered, 2 attempts, status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, verb := range []string{"%v", "%+v", "%s"} {
				got := fmt.Sprintf(verb, tt.d)
				assert.Equal(t, tt.want+"\n"+string(body), got, verb)
			}
			assert.Contains(t, fmt.Sprintf("%+v", []WebhookDelivery{tt.d}), string(body), "in a slice too")
		})
	}
}

// TestWebhookDeliveryAsPosted prints a real delivery of the fake: the sendloop_webservice
// document, readable.
func TestWebhookDeliveryAsPosted(t *testing.T) {
	t.Parallel()
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	srv := NewServer(t, WithAPIKey("k"))
	require.Contains(t, v3Command(t, srv, "list.create", "Name", "news", "OptInMode", "Double"), `"ListID":1`)
	require.Equal(t, `{"Success":true}`, v3Command(t, srv, "list.settings.update", "ListID", "1", "WebServiceSubscriptionURL", hook.URL+"?list=1"))
	require.Contains(t, v3Command(t, srv, "subscriber.subscribe", "ListID", "1", "EmailAddress", "ann@example.com", "SubscriptionIP", "192.0.2.1"), `"Success":true`)
	require.NoError(t, srv.Confirm(1, "ann@example.com"))
	deliveries := srv.Webhooks()
	require.Len(t, deliveries, 1)
	got := fmt.Sprintf("%+v", deliveries[0])
	for _, want := range []string{"Subscription webhook to " + hook.URL + "?list=1: delivered", "<sendloop_webservice>",
		"<action>Subscription</action>", "<EmailAddress>ann@example.com</EmailAddress>"} {
		assert.Contains(t, got, want)
	}
	assert.False(t, strings.Contains(got, "[60 "), "the body is not printed as numbers: %s", got)
}

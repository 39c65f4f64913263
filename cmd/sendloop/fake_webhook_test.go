package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFakeActionsExitCodesAndRedactedURLs: confirm, event and delete exit 1 when a
// webhook the action posted was not delivered (after saying what was done), 0 when all
// were; text output shows a webhook URL with its query's values REDACTED, --json whole;
// a missing list is 404.
func TestFakeActionsExitCodesAndRedactedURLs(t *testing.T) {
	t.Parallel()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(receiver.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + closed.Addr().String()
	require.NoError(t, closed.Close()) // a receiver that is down: connection refused

	p := startFake(t, false, "--empty")
	call := func(args ...string) {
		t.Helper()
		r := invocation{args: append([]string{"call"}, args...), env: p.env}.run(t)
		expect(t, r, exitOK, nil, nil)
	}
	call("list.create", "Name=Up", "OptInMode=Double")
	call("list.create", "Name=Down", "OptInMode=Double")
	call("list.settings.update", "ListID=1", "WebServiceSubscriptionURL="+receiver.URL+"/sub?token=s3cret&list=1",
		"WebServiceUnsubscriptionURL="+receiver.URL+"/broken?token=s3cret")
	call("list.settings.update", "ListID=2", "WebServiceSubscriptionURL="+down+"/sub?token=s3cret")
	for _, list := range []string{"1", "2"} {
		call("subscriber.subscribe", "ListID="+list, "EmailAddress=ann@example.com", "SubscriptionIP=192.0.2.1")
	}

	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr []string
	}{
		{"delivered", []string{"confirm", "ann@example.com", "--list", "1"}, exitOK,
			[]string{"Confirmed ann@example.com in list 1\nSubscription webhook to " + receiver.URL + "/sub?token=REDACTED&list=REDACTED: delivered (HTTP 200)\n"}, nil},
		{"refused by the receiver", []string{"event", "unsubscribe", "ann@example.com", "--list", "1"}, exitFailure,
			[]string{"Recorded an unsubscription of ann@example.com\nUnsubscription webhook to " + receiver.URL + "/broken?token=REDACTED: not delivered: HTTP 500\n"},
			[]string{"1 webhook of 1 not delivered (the action was done; see the webhook deliveries: GET $SENDLOOP_FAKE_URL/webhooks)"}},
		{"receiver down", []string{"confirm", "ann@example.com", "--list", "2"}, exitFailure,
			[]string{"Confirmed ann@example.com in list 2\nSubscription webhook to " + down + "/sub?token=REDACTED: not delivered: ", "connection refused"},
			[]string{"1 webhook of 1 not delivered"}},
		{"missing list", []string{"confirm", "ann@example.com", "--list", "99"}, exitFailure, nil,
			[]string{"the fake answered 404 Not Found: no list 99"}},
		{"delete", []string{"delete", "ann@example.com", "--list", "2"}, exitOK, []string{"Deleted ann@example.com from list 2\n"}, nil},
		{"delete again", []string{"delete", "ann@example.com", "--list", "2"}, exitFailure, nil,
			[]string{"the fake answered 404 Not Found: ann@example.com is not in list 2"}},
	}
	for _, tt := range tests { // in order: each acts on the fake
		r := invocation{args: append([]string{"fake"}, tt.args...), env: p.env}.run(t)
		expect(t, r, tt.code, tt.stdout, tt.stderr)
		assert.NotContains(t, r.stdout+r.stderr, "s3cret", tt.name)
	}

	call("subscriber.subscribe", "ListID=2", "EmailAddress=bob@example.com", "SubscriptionIP=192.0.2.1")
	r := invocation{args: []string{"fake", "confirm", "bob@example.com", "--list", "2", "--json"}, env: p.env}.run(t)
	expect(t, r, exitFailure, []string{`"url": "` + down + `/sub?token=s3cret"`, `"delivered": false`}, []string{"1 webhook of 1 not delivered"})

	assert.NotContains(t, p.stderr.String(), "s3cret", "the fake's own log")
}

func TestWithArticle(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]string{"open": "an open", "click": "a click", "unsubscription": "an unsubscription",
		"hard bounce": "a hard bounce", "browser view": "a browser view", "forward": "a forward", "spam complaint": "a spam complaint"} {
		assert.Equal(t, want, withArticle(kind))
	}
}

func TestRedactedURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"http://h/sub", "http://h/sub"},
		{"http://h/sub?token=s3cret", "http://h/sub?token=REDACTED"},
		{"http://h/sub?token=s3cret&list=1#frag", "http://h/sub?token=REDACTED&list=REDACTED"},
		{"https://user:pw@h/sub", "https://user:REDACTED@h/sub"},
		{"http://h/sub?s3cret", "http://h/sub?REDACTED"},
		{"::not a url?token=s3cret", "::not a url?REDACTED"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, redactedURL(tt.in), tt.in)
	}
}

package sendloop_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
)

// answering is an http.RoundTripper that answers every request with one status and body.
type answering struct {
	status int
	body   []byte
}

func (a answering) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: a.status, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}, nil
}

// FuzzTypedAnswers feeds any answer to every v3 and person command through its typed
// method (typedCalls): the method ends in a value or an error, never a panic, whatever the
// service sends. Its seeds hold a success and a failure answer for every command of the
// registry.
func FuzzTypedAnswers(f *testing.F) {
	for _, spec := range commands.All() {
		if spec.API == commands.Legacy {
			continue
		}
		f.Add(spec.Name, 200, []byte(`{"Success":true,"Status":"Okay"}`))
		f.Add(spec.Name, 200, []byte(`{"Success":false,"ErrorCode":106,"ErrorMessage":"not found","ErrorFields":["ListID"]}`))
	}
	f.Add(commands.ListGet, 200, []byte(`{"Success":true,"List":{"ListID":"3","Name":"N","CustomFields":[{"CustomFieldID":1}]}}`))
	f.Add(commands.SystemSystemDateGet, 200, []byte(`{"Success":true,"SystemDate":"2026-11-21 08:00:00","SystemTimeZone":"UTC"}`))
	f.Add(commands.SubscriberBrowse, 503, []byte(`<html>busy</html>`))
	f.Fuzz(func(t *testing.T, command string, status int, body []byte) {
		call := typedCalls[command]
		if call == nil || status < 100 || status > 599 {
			return
		}
		c, err := sendloop.NewClient("fuzz-key", sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}),
			sendloop.WithHTTPClient(&http.Client{Transport: answering{status: status, body: body}}))
		if err != nil {
			t.Fatal(err)
		}
		w := &writeWorld{c: c, listID: 1, member: "ann@example.com", outsider: "bob@example.com", campaign: 1, field: 1}
		_ = call(context.Background(), w)
	})
}

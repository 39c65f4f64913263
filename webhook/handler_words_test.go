package webhook_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends body to h and returns the answer.
func post(t *testing.T, h http.Handler, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestHandlerMessages pins the Handler's answers word for word: a member is named one way,
// as the service's body names it, and text that is no callback says so.
func TestHandlerMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, contentType, body string
		want                    string
	}{
		{"plain text", "", "hello world", "webhook: not a webhook body"},
		{"plain text labelled a form", "application/x-www-form-urlencoded", "hello world", "webhook: not a webhook body"},
		{"plain text labelled json", "application/json", "hello world", "webhook: not a webhook body"},
		{"a form of other members", "", "hello=world", "webhook: not a webhook body"},
		{"Action unknown", "", "Action=Bounce&EmailAddress=a%40example.com", "webhook: form body: action: unknown action"},
		{"action unknown", "", "action=Bounce&EmailAddress=a%40example.com", "webhook: form body: action: unknown action"},
		{"action missing", "", "EmailAddress=a%40example.com", "webhook: form body: action: missing action"},
		{"xml Action unknown", "", "<W><Action>Bounce</Action></W>", "webhook: xml body: action: unknown action"},
		{"json subscriber missing", "", `{"Action":"Subscription"}`, "webhook: json body: subscriber: missing subscriber"},
		{"emailaddress missing", "", "action=Subscription&subscriber[subscriberid]=3", "webhook: form body: EmailAddress: missing email address"},
		{"Timestamp invalid", "", "Action=Subscription&Timestamp=soon&EmailAddress=a%40example.com", "webhook: form body: action_timestamp: invalid value"},
		{"listid invalid", "", "Action=Subscription&listid=x&EmailAddress=a%40example.com", "webhook: form body: ListID: invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			w := post(t, mustHandler(t, rec.handle), tt.contentType, tt.body)
			assert.Equal(t, http.StatusBadRequest, w.Code)
			assert.Equal(t, tt.want+"\n", w.Body.String())
			assert.Zero(t, rec.count(), "a refused delivery reached the callback")
		})
	}
}

// TestHandlerAddresses: an event whose address is not one is passed on and answered 200 by
// default, marked by AddressValid; WithRejectInvalidAddress answers 400 instead.
func TestHandlerAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, address string
		valid         bool
		reason        string // with WithRejectInvalidAddress
	}{
		{"an address", "ann@example.com", true, ""},
		{"an internationalised address", "ann@bücher.example", true, ""},
		{"the issue's example", "not an email", false, "it has no @"},
		{"no @ nor space", "ann.example.com", false, "it has no @"},
		{"domain without a dot", "ann@localhost", false, "the domain has no dot"},
		{"display name", "Ann <ann@example.com>", false, "it is not a bare address: give name@example.com without a display name or angle brackets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, err := json.Marshal(tt.address)
			require.NoError(t, err)
			body := `{"action":"Subscription","subscriber":{"EmailAddress":` + string(addr) + `}}`
			assert.Equal(t, tt.valid, sendloop.CheckAddress(tt.address) == nil, "the case disagrees with CheckAddress")

			// By default: passed on, 200, marked.
			rec := &recorder{}
			w := post(t, mustHandler(t, rec.handle), "application/json", body)
			assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Equal(t, 1, rec.count())
			assert.Equal(t, tt.address, rec.events[0].Subscriber.EmailAddress)
			assert.Equal(t, tt.valid, rec.events[0].AddressValid)

			ev, err := webhook.ParseBody("", []byte(body))
			require.NoError(t, err)
			assert.Equal(t, tt.valid, ev.AddressValid, "ParseBody marks the event too")

			// Strict: 400 for an invalid address, the callback not called; the address
			// itself is never repeated.
			rec = &recorder{}
			w = post(t, mustHandler(t, rec.handle, webhook.WithRejectInvalidAddress()), "application/json", body)
			if tt.valid {
				assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
				assert.Equal(t, 1, rec.count())
				return
			}
			assert.Equal(t, http.StatusBadRequest, w.Code)
			const prefix = "webhook: EmailAddress: not an email address: "
			assert.Equal(t, prefix+tt.reason+"\n", w.Body.String())
			assert.NotContains(t, strings.TrimPrefix(w.Body.String(), prefix), tt.address)
			assert.Zero(t, rec.count())
		})
	}
}

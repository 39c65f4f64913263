package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestNewClientValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		opts    []legacy.Option
		wantErr string
		wantURL string
	}{
		{"default base URL", "test-key", nil, "", legacy.DefaultBaseURL},
		{"empty key", "  ", nil, "API key is empty", ""},
		{"control character in key", "test\nkey", nil, "control characters", ""},
		{"invalid UTF-8 in key", "test\xffkey", nil, "invalid UTF-8", ""},
		{"white space inside the key", "test key", nil, "the API key holds white space", ""},
		{"a one-character key", "k", nil, "the API key is shorter than 8 characters", ""},
		{"an eight-character key, trimmed", " sl-12345 ", nil, "", legacy.DefaultBaseURL},
		{"unparsable URL", "test-key", []legacy.Option{legacy.WithBaseURL("://x")}, "invalid base URL", ""},
		{"not http", "test-key", []legacy.Option{legacy.WithBaseURL("ftp://example.com")}, "absolute http(s) URL", ""},
		{"plain http off loopback", "test-key", []legacy.Option{legacy.WithBaseURL("http://example.com")}, "refusing plain http", ""},
		{"plain http allowed", "test-key", []legacy.Option{legacy.WithBaseURL("http://example.com"), legacy.WithInsecureHTTP()}, "", "http://example.com"},
		{"plain http on loopback", "test-key", []legacy.Option{legacy.WithBaseURL("http://127.0.0.1:8080/")}, "", "http://127.0.0.1:8080"},
		{"plain http on localhost", "test-key", []legacy.Option{legacy.WithBaseURL("http://localhost:8080")}, "", "http://localhost:8080"},
		{"path prefix kept", "test-key", []legacy.Option{legacy.WithBaseURL("https://h.example/prefix/")}, "", "https://h.example/prefix"},
		{"the API's path refused", "test-key", []legacy.Option{legacy.WithBaseURL("https://h.example/prefix/api/index.php")}, "give the host (and any proxy prefix) only, https://h.example/prefix;", ""},
		{"the v3 API's path refused", "test-key", []legacy.Option{legacy.WithBaseURL("https://h.example/api/v3/")}, "give the host (and any proxy prefix) only, https://h.example;", ""},
		{"query refused", "test-key", []legacy.Option{legacy.WithBaseURL("https://h.example/?a=1")}, "query", ""},
		{"credentials refused", "test-key", []legacy.Option{legacy.WithBaseURL("https://u:p@h.example/")}, "credentials", ""},
		{"unknown input form", "test-key", []legacy.Option{legacy.WithInputForm(legacy.InputForm(9))}, "unknown input form", ""},
		{"nil option ignored", "test-key", []legacy.Option{nil}, "", legacy.DefaultBaseURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := legacy.NewClient(tt.key, tt.opts...)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantURL, c.BaseURL())
		})
	}
}

func TestClientPrintsNoKey(t *testing.T) {
	t.Parallel()
	const key = "secret-key-4471"
	c, err := legacy.NewClient(key, legacy.WithInputForm(legacy.GetForm))
	require.NoError(t, err)
	assert.Equal(t, legacy.GetForm, c.InputForm())
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out := fmt.Sprintf(format, c)
		assert.NotContains(t, out, key, format)
		assert.Contains(t, out, "legacy.Client{BaseURL: https://app.sendloop.com, InputForm: get}", format)
	}
	assert.NotContains(t, c.LogValue().String(), key)
	assert.NotContains(t, fmt.Sprintf("%+v", *c), key)
}

func TestInputFormString(t *testing.T) {
	t.Parallel()
	tests := map[legacy.InputForm]string{
		legacy.PostForm: "post", legacy.GetForm: "get", legacy.MessageForm: "message",
		legacy.MessageGetForm: "message-get", legacy.InputForm(7): "form(7)",
	}
	for form, want := range tests {
		assert.Equal(t, want, form.String())
	}
}

// TestInputFormsByteForByte checks the request of each input form exactly, as sent and as
// the fake received it, and that the fake understood it.
func TestInputFormsByteForByte(t *testing.T) {
	t.Parallel()
	const key = "sl&key+/1"
	const doc = `<?xml version="1.0" encoding="UTF-8"?><Entry><Message><APIKey>sl&amp;key+/1</APIKey>` +
		`<Command>Subscriber.Add</Command><Fields><CustomField1>Ann &amp; Co &lt;x&gt;</CustomField1>` +
		`<CustomField2>b</CustomField2><EmailAddress>ann+news@example.com</EmailAddress></Fields>` +
		`<ListID>1</ListID><SubscriptionIP>203.0.113.7</SubscriptionIP></Message></Entry>`
	tests := []struct {
		form      legacy.InputForm
		method    string
		body      string
		rawQuery  string
		wantForm  url.Values
		wantCType string
	}{
		{
			form:   legacy.PostForm,
			method: http.MethodPost,
			body: "FormValue_APIKey=sl%26key%2B%2F1&FormValue_Command=Subscriber.Add" +
				"&FormValue_Fields%5BCustomField1%5D=Ann+%26+Co+%3Cx%3E&FormValue_Fields%5BCustomField2%5D=b" +
				"&FormValue_Fields%5BEmailAddress%5D=ann%2Bnews%40example.com&FormValue_ListID=1" +
				"&FormValue_SubscriptionIP=203.0.113.7",
			wantCType: "application/x-www-form-urlencoded",
		},
		{
			form:   legacy.GetForm,
			method: http.MethodGet,
			rawQuery: "APIKey=sl%26key%2B%2F1&Command=Subscriber.Add" +
				"&Fields%5BCustomField1%5D=Ann+%26+Co+%3Cx%3E&Fields%5BCustomField2%5D=b" +
				"&Fields%5BEmailAddress%5D=ann%2Bnews%40example.com&ListID=1&SubscriptionIP=203.0.113.7",
			wantForm: url.Values{"APIKey": {key}, "Command": {"Subscriber.Add"}, "Fields[CustomField1]": {"Ann & Co <x>"},
				"Fields[CustomField2]": {"b"}, "Fields[EmailAddress]": {"ann+news@example.com"}, "ListID": {"1"},
				"SubscriptionIP": {"203.0.113.7"}},
		},
		{
			form:      legacy.MessageForm,
			method:    http.MethodPost,
			body:      "FormValue_Message=" + url.QueryEscape(doc),
			wantForm:  url.Values{"FormValue_Message": {doc}},
			wantCType: "application/x-www-form-urlencoded",
		},
		{
			form:     legacy.MessageGetForm,
			method:   http.MethodGet,
			rawQuery: "FormValue_Message=" + url.QueryEscape(doc),
			wantForm: url.Values{"FormValue_Message": {doc}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.form.String(), func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t, sendlooptest.WithAPIKey(key))
			listID := createList(t, srv, "Single")
			for _, name := range []string{"Company", "Plan"} {
				_, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: name})
				require.NoError(t, err)
			}
			rec := &recorder{}
			c := newClient(t, srv, tt.form, legacy.WithHTTPClient(&http.Client{Transport: rec}))
			res, err := c.SubscriberAdd(context.Background(), listID, legacy.SubscriberAddParams{EmailAddress: "ann+news@example.com", SubscriptionIP: "203.0.113.7", CustomFields: map[int]string{1: "Ann & Co <x>", 2: "b"}})
			require.NoError(t, err)
			assert.Equal(t, legacy.StatusSubscribed, res.Status)
			assert.Equal(t, 1, res.SubscriberID)
			assert.Equal(t, srv.URL+"/subscribe/1/thanks", res.RedirectURL)

			sent := rec.last()
			require.NotNil(t, sent)
			assert.Equal(t, tt.method, sent.Method)
			assert.Equal(t, "/api/index.php", sent.URL.Path)
			assert.Equal(t, tt.rawQuery, sent.URL.RawQuery)
			assert.Equal(t, tt.wantCType, sent.Header.Get("Content-Type"))
			assert.Equal(t, "text/xml", sent.Header.Get("Accept"))
			assert.Equal(t, "sendloop-go/legacy", sent.Header.Get("User-Agent"))

			got := srv.LastRequest()
			assert.Equal(t, tt.method, got.Method)
			assert.Equal(t, "/api/index.php", got.Path)
			assert.Equal(t, "Subscriber.Add", got.Command)
			assert.Equal(t, tt.body, string(got.Body))
			if tt.wantForm != nil {
				assert.Equal(t, tt.wantForm, got.Form)
			}
			assert.Equal(t, 1, srv.Executions("Subscriber.Add"))

			// The fake stored what each form carried.
			st, err := c.Call(context.Background(), "Subscriber.Get", url.Values{"ListID": {"1"}, "EmailAddress": {"ann+news@example.com"}})
			require.NoError(t, err)
			assert.Equal(t, "Ann & Co <x>", st.Text("CustomField1"))
			assert.Equal(t, "b", st.Text("CustomField2"))
			assert.Equal(t, "203.0.113.7", st.Text("SubscriptionIP"))
		})
	}
}

func TestUserAgentProduct(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c := newClient(t, srv, legacy.PostForm, legacy.WithUserAgent(" sync/2.0 "))
	_, err := c.MediaBrowse(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "sync/2.0 sendloop-go/legacy", srv.LastRequest().Header.Get("User-Agent"))
}

func TestHTTPClientIsCopied(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	rec := &recorder{}
	hc := &http.Client{Transport: rec}
	c := newClient(t, srv, legacy.PostForm, legacy.WithHTTPClient(hc))
	hc.Transport = http.DefaultTransport // a later change does not reach the client
	_, err := c.MediaBrowse(context.Background())
	require.NoError(t, err)
	assert.NotNil(t, rec.last())
}

// TestRefusedBeforeSending checks parameters that fail before any request.
func TestRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		form     legacy.InputForm
		call     func(c *legacy.Client) error
		wantCode legacy.ErrorCode
		field    string
	}{
		{"APIKey as a parameter", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"APIKey": "x"})
			return err
		}, 0, "APIKey"},
		{"Command as a parameter", legacy.GetForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"Command": "x"})
			return err
		}, 0, "Command"},
		{"Message in the POST form", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"Message": "x"})
			return err
		}, 0, "Message"},
		{"FormValue_Message in the GET form", legacy.GetForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"FormValue_Message": "x"})
			return err
		}, 0, "FormValue_Message"},
		{"a character XML cannot carry", legacy.MessageForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"EmailAddress": "a\x01b"})
			return err
		}, 0, "EmailAddress"},
		{"invalid UTF-8 in the message form", legacy.MessageGetForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", map[string]string{"EmailAddress": "a\xffb"})
			return err
		}, 0, "EmailAddress"},
		{"empty command", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "", nil)
			return err
		}, 0, "Command"},
		{"command with a space", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber Get", nil)
			return err
		}, 0, "Command"},
		{"unencodable parameters", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.Call(ctx, "Subscriber.Get", 42)
			return err
		}, 0, ""},
		{"list ID zero", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 0, legacy.SubscriberAddParams{EmailAddress: "a@example.com", SubscriptionIP: "1.2.3.4"})
			return err
		}, legacy.ErrListNotFound, "ListID"},
		{"email missing", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: " ", SubscriptionIP: "1.2.3.4"})
			return err
		}, legacy.ErrEmailMissing, "Fields[EmailAddress]"},
		{"email with a display name", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "Ann <a@example.com>", SubscriptionIP: "1.2.3.4"})
			return err
		}, legacy.ErrEmailFormat, "Fields[EmailAddress]"},
		{"email with white space around it", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: " a@example.com", SubscriptionIP: "1.2.3.4"})
			if err != nil && !strings.Contains(err.Error(), `" a@example.com" is not valid: it has white space around it`) {
				return errors.New("the reason is not said: " + err.Error()) // no *ValidationError: the row fails
			}
			return err
		}, legacy.ErrEmailFormat, "Fields[EmailAddress]"},
		{"subscription IP missing", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "a@example.com"})
			return err
		}, 0, "SubscriptionIP"},
		{"negative custom field ID", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "a@example.com", SubscriptionIP: "1.2.3.4", CustomFields: map[int]string{-1: "x"}})
			return err
		}, 0, "Fields"},
		{"unsubscribe email format", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberUnsubscribe(ctx, 1, legacy.SubscriberUnsubscribeParams{EmailAddress: "nope", UnsubscriptionIP: "1.2.3.4"})
			return err
		}, legacy.ErrEmailFormat, "EmailAddress"},
		{"unsubscription IP missing", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.SubscriberUnsubscribe(ctx, 1, legacy.SubscriberUnsubscribeParams{EmailAddress: "a@example.com"})
			return err
		}, 0, "UnsubscriptionIP"},
		{"chart list ID negative", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.ChartListActivity(ctx, -2, legacy.ChartListActivityParams{Start: today, Days: 1})
			return err
		}, legacy.ErrListNotFound, "ListID"},
		{"chart start missing", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Days: 1})
			return err
		}, 0, "Start"},
		{"chart days zero", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today})
			return err
		}, 0, "Days"},
		{"chart days over the bound", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: legacy.DefaultMaxChartDays + 1})
			return err
		}, 0, "Days"},
		{"empty media", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{MediaType: "image/gif"})
			return err
		}, 0, "MediaData"},
		{"media over the maximum", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: make([]byte, legacy.DefaultMaxMediaSize+1), MediaType: "image/gif"})
			return err
		}, legacy.ErrMediaTooLarge, "MediaData"},
		{"media type not an image", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("%PDF-1.4"), MediaType: "application/pdf"})
			return err
		}, 0, "MediaType"},
		{"sniffed media type not an image", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: []byte("plain words")})
			return err
		}, 0, "MediaType"},
		{"malformed media type", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif, MediaType: "image/"})
			return err
		}, 0, "MediaType"},
		{"tag with a comma", legacy.PostForm, func(c *legacy.Client) error {
			_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif, Tags: []string{"a,b"}})
			return err
		}, 0, "Tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			err := tt.call(newClient(t, srv, tt.form))
			var ve *legacy.ValidationError
			require.True(t, errors.As(err, &ve), "got %v", err)
			assert.Equal(t, tt.wantCode, ve.Code)
			assert.Equal(t, tt.field, ve.Field)
			if tt.wantCode != 0 {
				assert.ErrorIs(t, err, tt.wantCode)
			}
			assert.Empty(t, srv.Requests(), "nothing is sent")
		})
	}
}

func TestNilContext(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c := newClient(t, srv, legacy.PostForm)
	//lint:ignore SA1012 a nil context is the point of the test
	_, err := c.MediaBrowse(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil context")
}

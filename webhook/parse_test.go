package webhook_test

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/webhook"
)

const canonicalXML = `<?xml version="1.0" encoding="UTF-8"?>
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
</Webhook>
`

const canonicalForm = "Action=Subscription&Timestamp=1763700000&ListID=3" +
	"&Subscriber%5BSubscriberID%5D=12&Subscriber%5BEmailAddress%5D=ann%40example.com" +
	"&Subscriber%5BBounceType%5D=Not+Bounced&Subscriber%5BSubscriptionStatus%5D=Subscribed" +
	"&Subscriber%5BSubscriptionDate%5D=2026-11-21&Subscriber%5BSubscriptionIP%5D=127.0.0.1" +
	"&Subscriber%5BUnsubscriptionDate%5D=0000-00-00&Subscriber%5BUnsubscriptionIP%5D=0.0.0.0" +
	"&Subscriber%5BOptInDate%5D=2026-11-21&Subscriber%5BCustomField7%5D=Ann"

const canonicalJSON = `{"Action":"Subscription","Timestamp":1763700000,"ListID":"3","Subscriber":{
 "SubscriberID":12,"EmailAddress":"ann@example.com","BounceType":"Not Bounced",
 "SubscriptionStatus":"Subscribed","SubscriptionDate":"2026-11-21","SubscriptionIP":"127.0.0.1",
 "UnsubscriptionDate":"0000-00-00","UnsubscriptionIP":"0.0.0.0","OptInDate":"2026-11-21",
 "CustomField7":"Ann"}}`

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// canonicalEvent is what every canonical body parses to.
func canonicalEvent() *webhook.Event {
	return &webhook.Event{
		Kind:   webhook.KindSubscription,
		Time:   time.Unix(1763700000, 0).UTC(),
		ListID: 3,
		Subscriber: sendloop.Subscriber{
			SubscriberID:       12,
			EmailAddress:       "ann@example.com",
			BounceType:         sendloop.BounceNone,
			SubscriptionStatus: sendloop.StatusSubscribed,
			SubscriptionIP:     "127.0.0.1",
			UnsubscriptionIP:   "0.0.0.0", // the unset IP, kept as sent
			SubscriptionDate:   sendloop.Date{Time: day(2026, time.November, 21)},
			OptInDate:          sendloop.Date{Time: day(2026, time.November, 21)},
			CustomFields:       map[int]string{7: "Ann"},
		},
		AddressValid: true,
	}
}

func multipartBody(t testing.TB, pairs ...string) (contentType string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i < len(pairs); i += 2 {
		if err := mw.WriteField(pairs[i], pairs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

func assertEvent(t *testing.T, got, want *webhook.Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("event mismatch\n got: %+v\nwant: %+v", got, want)
	}
}

func TestParseBodyFormats(t *testing.T) {
	t.Parallel()
	mpType, mpBody := multipartBody(t,
		"Action", "Subscription", "Timestamp", "1763700000", "ListID", "3",
		"Subscriber[SubscriberID]", "12", "Subscriber[EmailAddress]", "ann@example.com",
		"Subscriber[BounceType]", "Not Bounced", "Subscriber[SubscriptionStatus]", "Subscribed",
		"Subscriber[SubscriptionDate]", "2026-11-21", "Subscriber[SubscriptionIP]", "127.0.0.1",
		"Subscriber[UnsubscriptionDate]", "0000-00-00", "Subscriber[UnsubscriptionIP]", "0.0.0.0",
		"Subscriber[OptInDate]", "2026-11-21", "Subscriber[CustomField7]", "Ann",
	)

	tests := []struct {
		name        string
		contentType string
		body        string
	}{
		{"xml text/xml", "text/xml", canonicalXML},
		{"xml application/xml with charset", "application/xml; charset=utf-8", canonicalXML},
		{"xml +xml suffix", "application/vnd.sendloop+xml", canonicalXML},
		{"xml sniffed without content type", "", canonicalXML},
		{"xml sniffed under text/plain", "text/plain", canonicalXML},
		{"xml sniffed under malformed content type", ";;;", canonicalXML},
		{"xml with byte order mark", "text/xml", "\xEF\xBB\xBF" + canonicalXML},
		{"xml lower-case names and other root", "text/xml", strings.NewReplacer(
			"Webhook>", "event>", "Action>", "action>", "Subscriber>", "SUBSCRIBER>",
			"EmailAddress>", "emailaddress>", "CustomField7>", "customfield7>",
		).Replace(canonicalXML)},
		{"xml without declaration, with attributes, comments and CDATA", "text/xml",
			`<Root version="2"><!-- hi --><ACTION>Subscription</ACTION><Timestamp> 1763700000 </Timestamp><ListID>3</ListID>` +
				`<Meta><Nested>x</Nested></Meta>` +
				`<Subscriber id="9"><SubscriberID>12</SubscriberID><EmailAddress><![CDATA[ann@example.com]]></EmailAddress>` +
				`<BounceType>not bounced</BounceType><SubscriptionStatus>SUBSCRIBED</SubscriptionStatus>` +
				`<SubscriptionDate>2026-11-21</SubscriptionDate><SubscriptionIP>127.0.0.1</SubscriptionIP>` +
				`<UnsubscriptionDate/><UnsubscriptionIP>0.0.0.0</UnsubscriptionIP>` +
				`<OptInDate>2026-11-21 00:00:00</OptInDate><CustomField7>Ann</CustomField7></Subscriber></Root>trailing`},
		{"xml latin1", "text/xml", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" +
			strings.TrimPrefix(canonicalXML, `<?xml version="1.0" encoding="UTF-8"?>`)},
		{"form", "application/x-www-form-urlencoded", canonicalForm},
		{"form sniffed", "", canonicalForm},
		{"form unprefixed subscriber keys", "application/x-www-form-urlencoded",
			"action=subscribe&timestamp=1763700000&listid=3&SubscriberID=12&EmailAddress=ann%40example.com" +
				"&BounceType=Not+Bounced&SubscriptionStatus=Subscribed&SubscriptionDate=2026-11-21" +
				"&SubscriptionIP=127.0.0.1&UnsubscriptionDate=0000-00-00&UnsubscriptionIP=0.0.0.0" +
				"&OptInDate=2026-11-21&CustomField7=Ann"},
		{"form lower-case prefix", "application/x-www-form-urlencoded",
			strings.ReplaceAll(canonicalForm, "Subscriber%5B", "subscriber%5B")},
		{"multipart", mpType, string(mpBody)},
		{"json", "application/json", canonicalJSON},
		{"json string timestamp and numbers as strings", "application/json; charset=utf-8",
			strings.NewReplacer(`1763700000`, `"1763700000"`, `"SubscriberID":12`, `"SubscriberID":"12"`, `"ListID":"3"`, `"ListID":3`).Replace(canonicalJSON)},
		{"json sniffed", "", "\n\t " + canonicalJSON},
		{"json lower-case keys", "text/json", strings.NewReplacer(`"Subscriber"`, `"subscriber"`, `"Action"`, `"ACTION"`, `"EmailAddress"`, `"emailaddress"`).Replace(canonicalJSON)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := webhook.ParseBody(tt.contentType, []byte(tt.body))
			if err != nil {
				t.Fatalf("ParseBody: %v", err)
			}
			assertEvent(t, ev, canonicalEvent())
		})
	}
}

func TestParseBodyFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want func(*webhook.Event)
	}{
		{
			name: "unsubscription with zero dates and unset IPs",
			body: `<W><Action>Unsubscription</Action><Subscriber><EmailAddress>bob@example.com</EmailAddress>` +
				`<SubscriptionDate>0000-00-00</SubscriptionDate><UnsubscriptionDate>2026-11-22</UnsubscriptionDate>` +
				`<OptInDate></OptInDate><SubscriptionIP>0.0.0.0</SubscriptionIP><UnsubscriptionIP>10.0.0.1</UnsubscriptionIP>` +
				`<SubscriptionStatus>Unsubscribed</SubscriptionStatus></Subscriber></W>`,
			want: func(ev *webhook.Event) {
				ev.Kind = webhook.KindUnsubscription
				ev.Subscriber = sendloop.Subscriber{
					EmailAddress:       "bob@example.com",
					UnsubscriptionDate: sendloop.Date{Time: day(2026, time.November, 22)},
					SubscriptionIP:     "0.0.0.0", // kept as sent
					UnsubscriptionIP:   "10.0.0.1",
					SubscriptionStatus: sendloop.StatusUnsubscribed,
				}
			},
		},
		{
			name: "custom fields, extra keys, ListID in the record, unknown status kept",
			body: `<W><Action>subscribed</Action><Subscriber><EmailAddress> c@example.com </EmailAddress><ListID>5</ListID>` +
				`<CustomField1> spaced </CustomField1><CUSTOMFIELD22>x</CUSTOMFIELD22><CustomFieldName>n</CustomFieldName>` +
				`<Referrer>ad</Referrer><SubscriptionStatus>On Hold</SubscriptionStatus><BounceType>hard</BounceType></Subscriber>` +
				`<Source>api</Source></W>`,
			want: func(ev *webhook.Event) {
				ev.ListID = 5
				ev.Subscriber = sendloop.Subscriber{
					EmailAddress:       "c@example.com",
					CustomFields:       map[int]string{1: " spaced ", 22: "x"},
					Extra:              map[string]string{"CustomFieldName": "n", "Referrer": "ad"},
					SubscriptionStatus: "On Hold",
					BounceType:         sendloop.BounceHard,
				}
				ev.Extra = map[string]string{"Source": "api"} // a top-level member: the event's, not the subscriber's
			},
		},
		{
			name: "container wins over unprefixed key, first duplicate wins",
			body: `<W><Action>Subscribe</Action><EmailAddress>top@example.com</EmailAddress>` +
				`<Subscriber><EmailAddress>sub@example.com</EmailAddress><emailaddress>dup@example.com</emailaddress>` +
				`<SubscriptionDate>2026-11-21T10:30:00+02:00</SubscriptionDate></Subscriber></W>`,
			want: func(ev *webhook.Event) {
				ev.Subscriber = sendloop.Subscriber{
					EmailAddress:     "sub@example.com",
					SubscriptionDate: sendloop.Date{Time: day(2026, time.November, 21)}, // a date-time: its date
				}
			},
		},
		{
			name: "subscriber only at the top level, no timestamp",
			body: `<Subscriber><Action>Unsubscribe</Action><EmailAddress>d@example.com</EmailAddress><SubscriberID>4</SubscriberID></Subscriber>`,
			want: func(ev *webhook.Event) {
				ev.Kind = webhook.KindUnsubscription
				ev.Subscriber = sendloop.Subscriber{SubscriberID: 4, EmailAddress: "d@example.com"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := webhook.ParseBody("text/xml", []byte(tt.body))
			if err != nil {
				t.Fatalf("ParseBody: %v", err)
			}
			want := &webhook.Event{Kind: webhook.KindSubscription, AddressValid: true}
			tt.want(want)
			assertEvent(t, ev, want)
		})
	}
}

func TestParseBodyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		wantErr     error // sentinel, or nil to check only the type
		wantFormat  string
		wantField   string
	}{
		{"empty", "text/xml", "", webhook.ErrEmptyBody, "", ""},
		{"white space", "", " \r\n\t", webhook.ErrEmptyBody, "", ""},
		// A member is named as the service's body names it, whatever the case it came in.
		{"unknown action", "text/xml", `<W><Action>Bounce</Action><Subscriber><EmailAddress>a@b</EmailAddress></Subscriber></W>`, webhook.ErrUnknownAction, "xml", "action"},
		{"unknown action, upper case", "", `ACTION=Bounce&EmailAddress=a%40b`, webhook.ErrUnknownAction, "form", "action"},
		{"missing action", "application/json", `{"Subscriber":{"EmailAddress":"a@b"}}`, webhook.ErrMissingAction, "json", "action"},
		{"empty action", "", `action=&EmailAddress=a%40b`, webhook.ErrMissingAction, "form", "action"},
		{"missing subscriber", "text/xml", `<W><Action>Subscription</Action><Timestamp>1</Timestamp></W>`, webhook.ErrMissingSubscriber, "xml", "subscriber"},
		{"missing email", "text/xml", `<W><Action>Subscription</Action><Subscriber><SubscriberID>1</SubscriberID></Subscriber></W>`, webhook.ErrMissingEmailAddress, "xml", "EmailAddress"},
		{"empty subscriber", "application/json", `{"Action":"Subscription","Subscriber":{}}`, webhook.ErrMissingEmailAddress, "json", "EmailAddress"},
		{"invalid subscriber id", "", `Action=Subscription&Subscriber[EmailAddress]=a@b&Subscriber[SubscriberID]=x12`, webhook.ErrInvalidValue, "form", "SubscriberID"},
		{"invalid subscriber id, lower case", "", `action=Subscription&subscriber[emailaddress]=a@b&subscriber[subscriberid]=x12`, webhook.ErrInvalidValue, "form", "SubscriberID"},
		{"negative subscriber id", "", `action=Subscription&subscriber[emailaddress]=a@b&subscriber[SUBSCRIBERID]=-1`, webhook.ErrInvalidValue, "form", "SubscriberID"},
		{"negative list id", "", `Action=Subscription&Subscriber[EmailAddress]=a@b&listID=-1`, webhook.ErrInvalidValue, "form", "ListID"},
		{"invalid date", "text/xml", `<W><Action>Subscription</Action><Subscriber><EmailAddress>a@b</EmailAddress><optindate>21/11/2026</optindate></Subscriber></W>`, webhook.ErrInvalidValue, "xml", "OptInDate"},
		{"invalid timestamp", "application/json", `{"Action":"Subscription","Timestamp":1.5,"Subscriber":{"EmailAddress":"a@b"}}`, webhook.ErrInvalidValue, "json", "action_timestamp"},
		{"json subscriber not an object", "application/json", `{"Action":"Subscription","Subscriber":"a@b"}`, webhook.ErrInvalidValue, "json", "subscriber"},
		// The body decides the format: text that names no member of the callback is none.
		{"plain text", "", `hello world`, webhook.ErrNotWebhookBody, "", ""},
		{"plain text labelled a form", "application/x-www-form-urlencoded", "hello world\n", webhook.ErrNotWebhookBody, "", ""},
		{"a form of other members", "", `hello=world&a=b`, webhook.ErrNotWebhookBody, "", ""},
		{"text with a bad escape", "", `100% sure`, webhook.ErrNotWebhookBody, "", ""},
		{"json array", "application/json", `[1,2]`, webhook.ErrNotWebhookBody, "", ""},
		{"json null", "application/json", `null`, webhook.ErrNotWebhookBody, "", ""},
		{"json trailing garbage", "", `{"a":1} x`, nil, "json", ""},
		{"json trailing data", "application/json", `{"Action":"Subscription"}{}`, nil, "json", ""},
		{"xml syntax", "text/xml", `<W><Action>Subscription</W>`, nil, "xml", ""},
		{"xml truncated", "", `<W><Action>Subscription</Action>`, nil, "xml", ""},
		{"xml no root", "text/xml", `<?xml version="1.0"?><!-- nothing -->`, nil, "xml", ""},
		{"xml unsupported charset", "", `<?xml version="1.0" encoding="EBCDIC"?><W/>`, nil, "xml", ""},
		{"form bad escape", "application/x-www-form-urlencoded", `Action=Subscription&EmailAddress=%zz`, nil, "form", ""},
		{"multipart broken", "multipart/form-data; boundary=xyz", "--xyz\r\nno end", nil, "multipart", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := webhook.ParseBody(tt.contentType, []byte(tt.body))
			if err == nil {
				t.Fatalf("ParseBody = %+v, want error", ev)
			}
			if ev != nil {
				t.Errorf("ParseBody returned an event with the error")
			}
			var pe *webhook.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q does not match %q", err, tt.wantErr)
			}
			if pe.Format != tt.wantFormat || pe.Field != tt.wantField {
				t.Errorf("Format, Field = %q, %q; want %q, %q", pe.Format, pe.Field, tt.wantFormat, tt.wantField)
			}
			if !strings.HasPrefix(err.Error(), "webhook: ") {
				t.Errorf("message %q lacks the package prefix", err)
			}
			for _, secret := range []string{"a@b", "x12", "21/11/2026"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("message %q repeats the value %q", err, secret)
				}
			}
		})
	}
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    webhook.Kind
		wantErr error
	}{
		{"Subscription", webhook.KindSubscription, nil},
		{" subscribe ", webhook.KindSubscription, nil},
		{"SUBSCRIBED", webhook.KindSubscription, nil},
		{"Unsubscription", webhook.KindUnsubscription, nil},
		{"unsubscribe", webhook.KindUnsubscription, nil},
		{"Unsubscribed", webhook.KindUnsubscription, nil},
		{"", "", webhook.ErrMissingAction},
		{"optin", "", webhook.ErrUnknownAction},
	}
	for _, tt := range tests {
		got, err := webhook.ParseKind(tt.in)
		if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("ParseKind(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if got != "" && !got.Valid() {
			t.Errorf("ParseKind(%q) = %q, not Valid", tt.in, got)
		}
	}
	if webhook.Kind("Bounce").Valid() {
		t.Error(`Kind("Bounce").Valid() = true`)
	}
}

func TestParseRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		header  string
		wantErr error
	}{
		{"xml", canonicalXML, "text/xml", nil},
		{"json", canonicalJSON, "application/json", nil},
		{"at the limit", canonicalXML + strings.Repeat(" ", webhook.DefaultMaxBodyBytes-len(canonicalXML)), "text/xml", nil},
		{"over the limit", canonicalXML + strings.Repeat(" ", webhook.DefaultMaxBodyBytes-len(canonicalXML)+1), "text/xml", webhook.ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/hook?token=s3cret&Action=Unsubscription", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.header)
			ev, err := webhook.Parse(r)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Parse error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			assertEvent(t, ev, canonicalEvent())
		})
	}

	r := httptest.NewRequest("POST", "/hook", nil)
	r.Body = nil
	if _, err := webhook.Parse(r); !errors.Is(err, webhook.ErrEmptyBody) {
		t.Errorf("Parse with nil body: %v, want ErrEmptyBody", err)
	}
}

func FuzzParseBody(f *testing.F) {
	mpType, mpBody := multipartBody(f, "Action", "Unsubscribe", "Subscriber[EmailAddress]", "a@b")
	f.Add("text/xml", []byte(canonicalXML))
	f.Add("", []byte(canonicalXML))
	f.Add("application/x-www-form-urlencoded", []byte(canonicalForm))
	f.Add("", []byte("Action=Unsubscribe&EmailAddress=a%40b&CustomField3=x&Subscriber[OptInDate]=0000-00-00"))
	f.Add("application/json", []byte(canonicalJSON))
	f.Add("", []byte(`{"action":"subscribed","subscriber":{"emailaddress":"a@b","SubscriberID":"1"}}`))
	f.Add(mpType, mpBody)
	f.Add("application/x-www-form-urlencoded", []byte(realCallback))
	f.Add("", []byte(`action=Unsubscription&action_timestamp=1763700000&subscriber[EmailAddress]=a%40b&subscriber[CustomField3]=x&source=api`))
	f.Add("", []byte(`{"action":"Subscription","action_timestamp":"1763700000","subscriber":{"EmailAddress":"a@b","SubscriberID":7},"order":9}`))
	f.Add("text/plain", []byte("<a><b><c>d</c></b></a>"))
	f.Add("", []byte("hello world"))
	f.Add("application/json", []byte("[1,2]"))
	f.Add("", []byte(`{"action":"Subscription","subscriber":{"EmailAddress":"not an email"}}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		ev, err := webhook.ParseBody(contentType, body)
		if err != nil {
			var pe *webhook.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			if ev != nil {
				t.Fatal("event returned with an error")
			}
			// Only what would be read as a form can be no webhook body: XML and JSON
			// are reported as such.
			trimmed := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), " \t\r\n")
			if errors.Is(err, webhook.ErrNotWebhookBody) && (pe.Format != "" || trimmed[0] == '<' || trimmed[0] == '{') {
				t.Fatalf("%q: not a webhook body, as %q", body, pe.Format)
			}
			return
		}
		if ev == nil {
			t.Fatal("nil event without an error")
		}
		if !ev.Kind.Valid() {
			t.Fatalf("unknown Kind %q", ev.Kind)
		}
		if ev.Subscriber.EmailAddress == "" {
			t.Fatal("empty EmailAddress without an error")
		}
		if !ev.Time.IsZero() && ev.Time.Location() != time.UTC {
			t.Fatal("Time not in UTC")
		}
		if ev.AddressValid != (sendloop.CheckAddress(ev.Subscriber.EmailAddress) == nil) {
			t.Fatalf("AddressValid %t disagrees with CheckAddress for %q", ev.AddressValid, ev.Subscriber.EmailAddress)
		}
		// decode → encode → decode is stable.
		first := encodeEvent(ev)
		back, err := webhook.ParseBody("application/x-www-form-urlencoded", first)
		if err != nil {
			t.Fatalf("%q parsed, encoded as %s, does not parse: %v", body, first, err)
		}
		if second := encodeEvent(back); string(second) != string(first) {
			t.Fatalf("%q: encoded %s, then %s", body, first, second)
		}
		if back.AddressValid != ev.AddressValid {
			t.Fatalf("%q: AddressValid %t, then %t", body, ev.AddressValid, back.AddressValid)
		}
	})
}

func BenchmarkParseBodyXML(b *testing.B) {
	body := []byte(canonicalXML)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		if _, err := webhook.ParseBody("text/xml", body); err != nil {
			b.Fatal(err)
		}
	}
}

// encodeEvent writes ev back as the form body the package reads, for the decode → encode →
// decode check.
func encodeEvent(ev *webhook.Event) []byte {
	form := url.Values{"Action": {string(ev.Kind)}}
	if !ev.Time.IsZero() {
		form.Set("Timestamp", strconv.FormatInt(ev.Time.Unix(), 10))
	}
	if ev.ListID != 0 {
		form.Set("ListID", strconv.Itoa(ev.ListID))
	}
	s := ev.Subscriber
	set := func(key, value string) {
		if value != "" {
			form.Set("Subscriber["+key+"]", value)
		}
	}
	date := func(d sendloop.Date) string {
		if d.IsZero() {
			return ""
		}
		return d.String()
	}
	if s.SubscriberID != 0 {
		set("SubscriberID", strconv.Itoa(s.SubscriberID))
	}
	set("EmailAddress", s.EmailAddress)
	set("BounceType", string(s.BounceType))
	set("SubscriptionStatus", string(s.SubscriptionStatus))
	set("SubscriptionIP", s.SubscriptionIP)
	set("UnsubscriptionIP", s.UnsubscriptionIP)
	set("SubscriptionDate", date(s.SubscriptionDate))
	set("UnsubscriptionDate", date(s.UnsubscriptionDate))
	set("OptInDate", date(s.OptInDate))
	for id, v := range s.CustomFields {
		form.Set("Subscriber[CustomField"+strconv.Itoa(id)+"]", v)
	}
	for k, v := range s.Extra {
		form.Set("Subscriber["+k+"]", v)
	}
	return []byte(form.Encode())
}

package sendlooptest

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacyDo sends a raw request to the legacy endpoint and returns the status and body.
func legacyDo(t *testing.T, srv *Server, method, query, contentType, body string) (int, string) {
	t.Helper()
	target := srv.URL + LegacyPath
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := srv.hs.Client().Do(req) // not http.DefaultClient: parallel tests close its connections
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

const (
	legacyFormType     = "application/x-www-form-urlencoded"
	legacyHead         = `<?xml version="1.0" encoding="UTF-8"?>` + "\n<methodResponse><params><param><value>"
	legacyTail         = "</value></param></params></methodResponse>\n"
	legacyBrowseAnswer = legacyHead + `<struct><member><name>Status</name><value><string>Completed</string></value></member></struct>` + legacyTail
)

// legacyFailureBody is the answer carrying a legacy error code.
func legacyFailureBody(code int) string {
	return legacyHead + `<struct><member><name>APIError</name><value><string>` + legacyMessages[code] +
		`</string></value></member><member><name>APIErrorCode</name><value><string>` + strconv.Itoa(code) +
		`</string></value></member></struct>` + legacyTail
}

func legacyFaultBody(code int, message string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n<methodResponse><fault><value><struct><member><name>faultCode</name>" +
		`<value><int>` + strconv.Itoa(code) + `</int></value></member><member><name>faultString</name><value><string>` +
		message + "</string></value></member></struct></value></fault></methodResponse>\n"
}

func legacyMessageForm(inner string) string {
	return url.Values{"FormValue_Message": {`<?xml version="1.0"?><Entry><Message>` + inner + `</Message></Entry>`}}.Encode()
}

func TestLegacyInputForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, query, contentType, body string
	}{
		{"POST with FormValue_ fields", http.MethodPost, "", legacyFormType, "FormValue_APIKey=k&FormValue_Command=Media.Browse"},
		{"POST with a charset", http.MethodPost, "", legacyFormType + "; charset=UTF-8", "FormValue_APIKey=k&FormValue_Command=Media.Browse"},
		{"POST ignores bare fields", http.MethodPost, "", legacyFormType, "FormValue_APIKey=k&FormValue_Command=Media.Browse&Command=Nope"},
		{"GET with bare names", http.MethodGet, "APIKey=k&Command=Media.Browse", "", ""},
		{"GET ignores prefixed names", http.MethodGet, "APIKey=k&Command=Media.Browse&FormValue_Command=Nope", "", ""},
		{"POST message", http.MethodPost, "", legacyFormType, legacyMessageForm("<APIKey>k</APIKey><Command>Media.Browse</Command>")},
		{"GET message", http.MethodGet, legacyMessageForm("<APIKey>k</APIKey><Command>Media.Browse</Command>"), "", ""},
		{"pretty message with comments", http.MethodPost, "", legacyFormType, url.Values{"FormValue_Message": {
			"<?xml version=\"1.0\"?>\n<!-- request -->\n<Entry>\n  <Message>\n    <APIKey>k</APIKey>\n    <Command>Media.Browse</Command>\n  </Message>\n</Entry>\n"}}.Encode()},
		{"command in any case", http.MethodGet, "APIKey=k&Command=media.browse", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithAPIKey("k"))
			status, body := legacyDo(t, srv, tt.method, tt.query, tt.contentType, tt.body)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, legacyBrowseAnswer, body)
			assert.Equal(t, 1, srv.Executions("Media.Browse"))
			assert.Equal(t, LegacyPath, srv.LastRequest().Path)
		})
	}
}

func TestLegacyUnreadableInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, query, contentType, body string
		wantName                               string
	}{
		{"PUT", http.MethodPut, "", legacyFormType, "FormValue_APIKey=k&FormValue_Command=Media.Browse", "Media.Browse"},
		{"POST with bare names", http.MethodPost, "", legacyFormType, "APIKey=k&Command=Media.Browse", "Media.Browse"},
		{"GET with prefixed names", http.MethodGet, "FormValue_APIKey=k&FormValue_Command=Media.Browse", "", "", "Media.Browse"},
		{"POST of JSON", http.MethodPost, "", "application/json", `{"APIKey":"k"}`, ""},
		{"POST without a content type", http.MethodPost, "", "", "FormValue_APIKey=k&FormValue_Command=Media.Browse", "Media.Browse"},
		{"empty GET", http.MethodGet, "", "", "", ""},
		{"message that is no XML", http.MethodPost, "", legacyFormType, "FormValue_Message=" + url.QueryEscape("APIKey=k"), ""},
		{"message with another root", http.MethodPost, "", legacyFormType,
			"FormValue_Message=" + url.QueryEscape("<Request><Message><APIKey>k</APIKey></Message></Request>"), ""},
		{"message without Message", http.MethodPost, "", legacyFormType,
			"FormValue_Message=" + url.QueryEscape("<Entry><APIKey>k</APIKey></Entry>"), ""},
		{"message with mixed content", http.MethodPost, "", legacyFormType,
			legacyMessageForm("<APIKey>k</APIKey><Command>Media.Browse</Command><Fields>x<A>1</A></Fields>"), ""},
		{"message with text between parameters", http.MethodPost, "", legacyFormType,
			legacyMessageForm("<APIKey>k</APIKey>stray<Command>Media.Browse</Command>"), ""},
		{"message cut short", http.MethodPost, "", legacyFormType,
			"FormValue_Message=" + url.QueryEscape("<Entry><Message><APIKey>k</APIKey><Command>Media.Browse"), ""},
		{"message nested too deep", http.MethodPost, "", legacyFormType,
			legacyMessageForm("<APIKey>k</APIKey><Command>Media.Browse</Command>" + strings.Repeat("<a>", 20) + "x" + strings.Repeat("</a>", 20)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithAPIKey("k"))
			status, body := legacyDo(t, srv, tt.method, tt.query, tt.contentType, tt.body)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, legacyFailureBody(1), body)
			assert.Zero(t, srv.Executions("Media.Browse"))
			assert.Equal(t, tt.wantName, srv.LastRequest().Command)
		})
	}
}

func TestLegacyKeyAndAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		query   string
		allowed []string
		want    string
	}{
		{"no key", "Command=Media.Browse", nil, legacyFailureBody(2)},
		{"wrong key", "APIKey=x&Command=Media.Browse", nil, legacyFailureBody(2)},
		{"address not allowed", "APIKey=k&Command=Media.Browse", []string{"198.51.100.7"}, legacyFailureBody(2)},
		{"address allowed", "APIKey=k&Command=Media.Browse", []string{"127.0.0.1"}, legacyBrowseAnswer},
		{"the key is checked before the command", "APIKey=x&Command=Nope", nil, legacyFailureBody(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithAPIKey("k"))
			srv.AllowIPs(tt.allowed...)
			_, body := legacyDo(t, srv, http.MethodGet, tt.query, "", "")
			assert.Equal(t, tt.want, body)
		})
	}
}

func TestLegacyCommandFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, query, want string
	}{
		{"unknown command", "APIKey=k&Command=Nope.Nothing", legacyFaultBody(-32601, `unknown command &#34;Nope.Nothing&#34;`)},
		{"no command", "APIKey=k", legacyFaultBody(-32601, "no Command given")},
		{"listed but not simulated", "APIKey=k&Command=Report.Campaign.BounceDetail&CampaignID=1",
			legacyFaultBody(-32601, "Report.Campaign.BounceDetail is not simulated by sendlooptest")},
		{"list report not simulated", "APIKey=k&Command=report.list.activities",
			legacyFaultBody(-32601, "report.list.activities is not simulated by sendlooptest")},
		{"subscription IP missing", "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=a%40example.com",
			legacyFaultBody(-32602, "missing parameter SubscriptionIP")},
		{"custom field ID not numeric", "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=a%40example.com&SubscriptionIP=1.2.3.4&Fields%5BCustomFieldX%5D=1",
			legacyFaultBody(-32602, "a Fields[CustomField&lt;id&gt;] parameter has no numeric ID")},
		{"unknown custom field", "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=a%40example.com&SubscriptionIP=1.2.3.4&Fields%5BCustomField9%5D=1",
			legacyFaultBody(-32602, "a custom field does not exist in the list")},
		{"unknown custom field on update", "APIKey=k&Command=Subscriber.Update&ListID=1&EmailAddress=taken%40example.com&Fields%5BCustomField9%5D=1",
			legacyFaultBody(-32602, "a custom field does not exist in the list")},
		{"unsubscription IP missing", "APIKey=k&Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=taken%40example.com",
			legacyFaultBody(-32602, "missing parameter UnsubscriptionIP")},
		{"chart start missing", "APIKey=k&Command=Chart.ListActivity&ListID=1&Days=1", legacyFaultBody(-32602, "missing parameter Start")},
		{"chart start not a date", "APIKey=k&Command=Chart.ListActivity&ListID=1&Start=03%2F10%2F2025&Days=1",
			legacyFaultBody(-32602, "Start must be a date YYYY-MM-DD")},
		{"chart days missing", "APIKey=k&Command=Chart.ListActivity&ListID=1&Start=2025-03-10", legacyFaultBody(-32602, "missing parameter Days")},
		{"chart days zero", "APIKey=k&Command=Chart.ListActivity&ListID=1&Start=2025-03-10&Days=0",
			legacyFaultBody(-32602, "Days must be a whole number from 1 to 3660")},
		{"chart days too many", "APIKey=k&Command=Chart.ListActivity&ListID=1&Start=2025-03-10&Days=3661",
			legacyFaultBody(-32602, "Days must be a whole number from 1 to 3660")},
		{"media missing", "APIKey=k&Command=Media.Upload&MediaType=image%2Fgif", legacyFaultBody(-32602, "missing parameter MediaData")},
		{"media not base64", "APIKey=k&Command=Media.Upload&MediaData=%21%21&MediaType=image%2Fgif", legacyFaultBody(-32602, "MediaData is not base64")},
		{"media type missing", "APIKey=k&Command=Media.Upload&MediaData=R0lGODlh", legacyFaultBody(-32602, "missing parameter MediaType")},
		{"media type not an image", "APIKey=k&Command=Media.Upload&MediaData=R0lGODlh&MediaType=text%2Fplain",
			legacyFaultBody(-32602, "MediaType must be an image type")},
		{"media type malformed", "APIKey=k&Command=Media.Upload&MediaData=R0lGODlh&MediaType=image%2F",
			legacyFaultBody(-32602, "MediaType must be an image type")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithAPIKey("k"))
			seedLegacyList(t, srv)
			_, body := legacyDo(t, srv, http.MethodGet, tt.query, "", "")
			assert.Equal(t, tt.want, body)
			assert.Equal(t, 1, srv.SubscriberCount(1), "nothing changed")
			assert.Empty(t, srv.MediaItems())
		})
	}
}

// seedLegacyList makes list 1 (single opt-in) holding taken@example.com.
func seedLegacyList(t *testing.T, srv *Server) {
	t.Helper()
	srv.mu.Lock()
	l := srv.state.newList("L", "Single", srv.now())
	_, f := srv.state.subscribe(l, "taken@example.com", "192.0.2.1", nil, srv.now(), false)
	srv.mu.Unlock()
	require.Equal(t, ok, f)
}

func TestLegacyCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, query string
		code        int
	}{
		{"3 list not numeric", "Command=Subscriber.Add&ListID=x&Fields%5BEmailAddress%5D=a%40example.com&SubscriptionIP=1.2.3.4", 3},
		{"3 list missing", "Command=Subscriber.Unsubscribe&EmailAddress=a%40example.com&UnsubscriptionIP=1.2.3.4", 3},
		{"3 list checked before the address", "Command=Subscriber.Add&ListID=9&SubscriptionIP=1.2.3.4", 3},
		{"3 chart of no list", "Command=Chart.ListActivity&ListID=9&Start=2025-03-10&Days=1", 3},
		{"3 get from no list", "Command=Subscriber.Get&ListID=9&EmailAddress=a%40example.com", 3},
		{"4 address missing", "Command=Subscriber.Add&ListID=1&SubscriptionIP=1.2.3.4", 4},
		{"4 address blank", "Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=+&UnsubscriptionIP=1.2.3.4", 4},
		{"5 address illegal", "Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=a%40b&SubscriptionIP=1.2.3.4", 5},
		{"5 address illegal to get", "Command=Subscriber.Get&ListID=1&EmailAddress=nope", 5},
		{"6 address exists", "Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=TAKEN%40example.com&SubscriptionIP=1.2.3.4", 6},
		{"7 address suppressed", "Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=blocked%40example.com&SubscriptionIP=1.2.3.4", 7},
		{"8 address not in the list", "Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=other%40example.com&UnsubscriptionIP=1.2.3.4", 8},
		{"8 address already unsubscribed", "Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=gone%40example.com&UnsubscriptionIP=1.2.3.4", 8},
		{"8 delete of no subscriber", "Command=Subscriber.Delete&ListID=1&EmailAddress=other%40example.com", 8},
		{"8 update of no subscriber", "Command=Subscriber.Update&ListID=1&EmailAddress=other%40example.com", 8},
		{"9 media too large", "Command=Media.Upload&MediaData=" + url.QueryEscape(base64.StdEncoding.EncodeToString(make([]byte, 11))) + "&MediaType=image%2Fpng", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithAPIKey("k"))
			seedLegacyList(t, srv)
			_, err := srv.Suppress(1, "blocked@example.com", "Manual")
			require.NoError(t, err)
			srv.SetMaxMediaSize(10)
			_, body := legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=gone%40example.com&SubscriptionIP=1.2.3.4", "", "")
			require.Contains(t, body, "Subscribed")
			_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=gone%40example.com&UnsubscriptionIP=1.2.3.4", "", "")
			require.Contains(t, body, "Unsubscribed")

			_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&"+tt.query, "", "")
			assert.Equal(t, legacyFailureBody(tt.code), body)
		})
	}
}

func TestLegacyMessageParameters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		inner string
		want  url.Values
	}{
		{"flat", "<ListID>3</ListID><EmailAddress>a@b.c</EmailAddress>", url.Values{"ListID": {"3"}, "EmailAddress": {"a@b.c"}}},
		{"nested fields", "<Fields><EmailAddress>a@b.c</EmailAddress><CustomField7>x &amp; y</CustomField7></Fields>",
			url.Values{"Fields[EmailAddress]": {"a@b.c"}, "Fields[CustomField7]": {"x & y"}}},
		{"keyed and bare items", `<Subscribers><item key="0"><EmailAddress>a@b.c</EmailAddress></item></Subscribers><Tags><item>a</item><item>b</item></Tags><item key="a b">1</item>`,
			url.Values{"Subscribers[0][EmailAddress]": {"a@b.c"}, "Tags[]": {"a", "b"}, "a b": {"1"}}},
		{"a repeated element", "<A>1</A><A>2</A>", url.Values{"A": {"1", "2"}}},
		{"a leaf keeps its spaces", "<A>  x y  </A><B/>", url.Values{"A": {"  x y  "}, "B": {""}}},
		{"CDATA", "<A><![CDATA[<b>]]></A>", url.Values{"A": {"<b>"}}},
		{"siblings after a nested child", "<A><b>1</b><c><d>2</d></c><e>3</e></A>", url.Values{"A[b]": {"1"}, "A[c][d]": {"2"}, "A[e]": {"3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in, readable := parseLegacyMessage("<Entry><Message><APIKey>k</APIKey><Command>C</Command>" + tt.inner + "</Message></Entry>")
			require.True(t, readable)
			assert.Equal(t, "k", in.key)
			assert.Equal(t, "C", in.command)
			assert.Equal(t, tt.want, in.params)
		})
	}
}

func TestLegacyFaultInjection(t *testing.T) {
	t.Parallel()
	t.Run("error code with a status, keyed by the command inside a message", func(t *testing.T) {
		t.Parallel()
		srv := NewServer(t, WithAPIKey("k"))
		srv.InjectFault("media.browse", Fault{ErrorCode: 9, Status: http.StatusInternalServerError})
		status, body := legacyDo(t, srv, http.MethodPost, "", legacyFormType, legacyMessageForm("<APIKey>k</APIKey><Command>Media.Browse</Command>"))
		assert.Equal(t, http.StatusInternalServerError, status)
		assert.Equal(t, strings.Replace(legacyFailureBody(9), legacyMessages[9], "Injected error", 1), body)
		assert.Zero(t, srv.Executions("Media.Browse"))
		assert.Equal(t, "Media.Browse", srv.LastRequest().Command)
	})
	t.Run("status before execution", func(t *testing.T) {
		t.Parallel()
		srv := NewServer(t, WithAPIKey("k"))
		srv.InjectFault("Media.Browse", Fault{Status: http.StatusServiceUnavailable, RetryAfter: "2"})
		resp, err := srv.hs.Client().Get(srv.URL + LegacyPath + "?APIKey=k&Command=Media.Browse")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "2", resp.Header.Get("Retry-After"))
		assert.Zero(t, srv.Executions("Media.Browse"))
	})
	t.Run("reset after execution", func(t *testing.T) {
		t.Parallel()
		srv := NewServer(t, WithAPIKey("k"))
		srv.InjectFault("Media.Upload", Fault{Reset: ResetAfterExecution})
		_, err := srv.hs.Client().PostForm(srv.URL+LegacyPath, url.Values{"FormValue_APIKey": {"k"}, "FormValue_Command": {"Media.Upload"},
			"FormValue_MediaData": {"R0lGODlh"}, "FormValue_MediaType": {"image/gif"}})
		require.Error(t, err)
		assert.Equal(t, 1, srv.Executions("Media.Upload"))
		assert.Len(t, srv.MediaItems(), 1)
	})
	t.Run("delay", func(t *testing.T) {
		t.Parallel()
		srv := NewServer(t, WithAPIKey("k"))
		srv.InjectFault("Media.Browse", Fault{Delay: 20 * time.Millisecond})
		start := time.Now()
		_, body := legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Media.Browse", "", "")
		assert.Equal(t, legacyBrowseAnswer, body)
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	})
}

func TestLegacyChartDocument(t *testing.T) {
	t.Parallel()
	day := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	srv := NewServer(t, WithAPIKey("k"), WithClock(func() time.Time { return day }))
	seedLegacyList(t, srv)
	_, body := legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Unsubscribe&ListID=1&EmailAddress=taken%40example.com&UnsubscriptionIP=1.2.3.4", "", "")
	require.Contains(t, body, "Unsubscribed")
	srv.SetClock(func() time.Time { return day.AddDate(0, 0, 1) })
	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=new%40example.com&SubscriptionIP=1.2.3.4", "", "")
	require.Contains(t, body, "Subscribed")

	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Chart.ListActivity&ListID=1&Start=2025-03-10&Days=2", "", "")
	chart := `<data><tooltip>Activity of list L from 2025-03-10, 2 days</tooltip>` +
		`<xaxis><xaxislabel>2025-03-10</xaxislabel><xaxislabel>2025-03-11</xaxislabel></xaxis><yaxis>Subscribers</yaxis><series>` +
		`<set label="Subscription"><serie><value>1</value><tooltip>1 subscription on 2025-03-10</tooltip></serie>` +
		`<serie><value>1</value><tooltip>1 subscription on 2025-03-11</tooltip></serie></set>` +
		`<set label="Unsubscription"><serie><value>1</value><tooltip>1 unsubscription on 2025-03-10</tooltip></serie>` +
		`<serie><value>0</value><tooltip>0 unsubscriptions on 2025-03-11</tooltip></serie></set></series></data>`
	assert.Equal(t, legacyHead+`<struct><member><name>Chart</name><value><string>`+string(appendXMLText(nil, chart))+
		`</string></value></member></struct>`+legacyTail, body)
}

func TestLegacyMediaLibrary(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithAPIKey("k"))
	data := []byte("GIF89a\xfb\xff\xfe")
	encoded := base64.StdEncoding.EncodeToString(data) // holds '+' and '/'
	require.Contains(t, encoded, "+")
	// A '+' left unescaped arrives as a space; line breaks are ignored.
	raw := "FormValue_APIKey=k&FormValue_Command=Media.Upload&FormValue_MediaType=image%2Fsvg%2Bxml%3B+charset%3Dutf-8" +
		"&FormValue_Tags=logo%2C+header%2C%2C&FormValue_MediaData=" + strings.ReplaceAll(url.QueryEscape(encoded[:4]+"\r\n"+encoded[4:]), "%2B", "+")
	_, body := legacyDo(t, srv, http.MethodPost, "", legacyFormType, raw)
	assert.Equal(t, legacyHead+`<struct><member><name>Status</name><value><string>Completed</string></value></member>`+
		`<member><name>MediaID</name><value><string>1</string></value></member></struct>`+legacyTail, body)
	items := srv.MediaItems()
	require.Len(t, items, 1)
	assert.Equal(t, data, items[0].Data)
	assert.Equal(t, "image/svg+xml", items[0].MediaType)
	assert.Equal(t, []string{"logo", "header"}, items[0].Tags)
	assert.Equal(t, srv.URL+"/media/1.svg", items[0].URL)

	items[0].Data[0] = 'X' // a copy
	assert.Equal(t, data, srv.MediaItems()[0].Data)

	srv.SetMaxMediaSize(int64(len(data) - 1))
	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Media.Upload&MediaType=image%2Fgif&MediaData="+url.QueryEscape(encoded), "", "")
	assert.Equal(t, legacyFailureBody(9), body)
	srv.SetMaxMediaSize(0) // back to the default
	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Media.Upload&MediaType=image%2Fgif&MediaData="+url.QueryEscape(encoded), "", "")
	assert.Contains(t, body, "<string>2</string>")

	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Media.Browse", "", "")
	assert.Equal(t, legacyHead+`<struct><member><name>Status</name><value><string>Completed</string></value></member>`+
		`<member><name>MediaURL1</name><value><string>`+srv.URL+`/media/1.svg</string></value></member>`+
		`<member><name>MediaURL2</name><value><string>`+srv.URL+`/media/2.gif</string></value></member></struct>`+legacyTail, body)
}

func TestMediaExtension(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"image/gif": "gif", "image/jpeg": "jpg", "image/pjpeg": "jpg", "image/png": "png", "image/svg+xml": "svg",
		"image/x-icon": "ico", "image/vnd.microsoft.icon": "ico", "image/webp": "webp", "image/x-ms-bmp": "xmsbmp", "image/---": "img",
	}
	for in, want := range tests {
		assert.Equal(t, want, mediaExtension(in), in)
	}
}

func TestLegacySubscriberRecords(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithAPIKey("k"), WithClock(func() time.Time { return time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC) }))
	srv.mu.Lock()
	l := srv.state.newList("D", "Double", srv.now())
	srv.mu.Unlock()
	fieldID, err := srv.DefineCustomField(l.ID, CustomField{Name: "Plan"})
	require.NoError(t, err)
	_, body := legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Add&ListID=1&Fields%5BEmailAddress%5D=ann%40example.com&SubscriptionIP=1.2.3.4&Fields%5BCustomField1%5D=gold", "", "")
	assert.Equal(t, legacyHead+`<struct><member><name>Status</name><value><string>Waiting For Opt-In Confirmation</string></value></member>`+
		`<member><name>SubscriberID</name><value><string>1</string></value></member>`+
		`<member><name>RedirectURL</name><value><string>`+srv.URL+`/subscribe/1/thanks</string></value></member></struct>`+legacyTail, body)

	record := func(status string) string {
		return `<struct><member><name>SubscriberID</name><value><string>1</string></value></member>` +
			`<member><name>EmailAddress</name><value><string>ann@example.com</string></value></member>` +
			`<member><name>BounceType</name><value><string>Not Bounced</string></value></member>` +
			`<member><name>SubscriptionStatus</name><value><string>` + status + `</string></value></member>` +
			`<member><name>SubscriptionDate</name><value><string>2025-03-10</string></value></member>` +
			`<member><name>SubscriptionIP</name><value><string>1.2.3.4</string></value></member>` +
			`<member><name>UnsubscriptionDate</name><value><string>0000-00-00</string></value></member>` +
			`<member><name>UnsubscriptionIP</name><value><string>0.0.0.0</string></value></member>` +
			`<member><name>OptInDate</name><value><string>` + map[bool]string{true: "0000-00-00", false: "2025-03-10"}[status != "Subscribed"] + `</string></value></member>` +
			`<member><name>CustomField` + strconv.Itoa(fieldID) + `</name><value><string>gold</string></value></member></struct>`
	}
	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Get&ListID=1&EmailAddress=ann%40example.com", "", "")
	assert.Equal(t, legacyHead+record("Waiting For Opt-In Confirmation")+legacyTail, body)

	require.NoError(t, srv.Confirm(1, "ann@example.com"))
	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscribers.Get&ListID=1", "", "")
	assert.Equal(t, legacyHead+`<struct><member><name>Subscribers</name><value><array><data><value>`+record("Subscribed")+
		`</value></data></array></value></member></struct>`+legacyTail, body)

	_, body = legacyDo(t, srv, http.MethodGet, "APIKey=k&Command=Subscriber.Delete&ListID=1&EmailAddress=ANN%40example.com", "", "")
	assert.Contains(t, body, "Completed")
	assert.Zero(t, srv.SubscriberCount(1))
	_, found := srv.SubscriberStatus(1, "ann@example.com")
	assert.False(t, found)
}

func TestAppendXMLRPC(t *testing.T) {
	t.Parallel()
	got := string(appendXMLRPC(nil, object{{"s", "a<&>\"'\n"}, {"i", -3}, {"t", true}, {"f", false}, {"d", 1.5},
		{"o", []object{{{"x", "y"}}}}, {"l", []string{"p", "q"}}}))
	assert.Equal(t, `<struct><member><name>s</name><value><string>a&lt;&amp;&gt;&#34;&#39;&#xA;</string></value></member>`+
		`<member><name>i</name><value><int>-3</int></value></member>`+
		`<member><name>t</name><value><boolean>1</boolean></value></member>`+
		`<member><name>f</name><value><boolean>0</boolean></value></member>`+
		`<member><name>d</name><value><double>1.5</double></value></member>`+
		`<member><name>o</name><value><array><data><value><struct><member><name>x</name><value><string>y</string></value></member></struct></value></data></array></value></member>`+
		`<member><name>l</name><value><array><data><value><string>p</string></value><value><string>q</string></value></data></array></value></member></struct>`, got)
	assert.Panics(t, func() { appendXMLRPC(nil, struct{}{}) })
}

package sendlooptest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/smtp"
)

// controlFake is a fake with its relay and control API, for the control tests.
type controlFake struct {
	srv     *Server
	relay   *Relay
	ctl     *Control
	hc      *http.Client
	reseeds int // calls of Reseed
	mu      sync.Mutex
}

func newControlFake(t *testing.T, relayOpts ...RelayOption) *controlFake {
	t.Helper()
	f := &controlFake{srv: NewServer(t, WithAPIKey("k"))}
	var err error
	f.relay, err = f.srv.StartRelay(t, relayOpts...)
	require.NoError(t, err)
	f.ctl, err = f.srv.StartControl(ControlOptions{Key: "ctl", Relay: f.relay, Hosts: []string{"fake.test"},
		Reseed: func(_ context.Context, s *Server) error {
			f.mu.Lock()
			f.reseeds++
			f.mu.Unlock()
			_, err := s.DefineCustomField(s.state.newList("Seeded", "Single", s.now()).ID, CustomField{Name: "First"})
			return err
		}})
	require.NoError(t, err)
	f.hc = f.srv.hs.Client()
	return f
}

// do sends a control request with the key (unless key is "-") and returns the status and body.
func (f *controlFake) do(t *testing.T, method, path string, form url.Values, key string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, f.ctl.URL+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "-" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := f.hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// get is an authorised GET decoded into v.
func (f *controlFake) get(t *testing.T, path string, v any) {
	t.Helper()
	status, body := f.do(t, http.MethodGet, path, nil, "ctl")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), v), body)
}

// send sends personalised messages through the relay, one per recipient, in order.
func (f *controlFake) send(t *testing.T, msgs ...*smtp.Message) []string {
	t.Helper()
	user, password := f.srv.RelayCredentials()
	sender, err := smtp.NewRelay(f.relay.Addr(), smtp.Auth{Username: user, Password: password},
		smtp.WithTLSConfig(f.relay.ClientTLSConfig()), smtp.WithRetry(0, 0))
	require.NoError(t, err)
	defer sender.Close()
	var ids []string
	for _, m := range msgs {
		res, err := sender.Send(context.Background(), m)
		require.NoError(t, err)
		ids = append(ids, strings.Trim(res.MessageID, "<>"))
	}
	return ids
}

func greeting(to, first string) *smtp.Message {
	return &smtp.Message{From: "Shop <shop@example.com>", To: []string{to}, Subject: "Hi {{FIRST}}",
		Text: "Dear {{FIRST}}, news.", HTML: "<p>Dear {{FIRST}}</p>",
		Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"FIRST": first}), Tags: []string{"news"}}}
}

func TestControlRefusesWithoutKeyOrForeignHost(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	port := f.srv.URL[strings.LastIndex(f.srv.URL, ":")+1:]
	tests := []struct {
		name   string
		host   string // "" keeps the URL's
		auth   string
		status int
	}{
		{"key", "", "Bearer ctl", http.StatusOK},
		{"key, any case of scheme", "", "bearer ctl", http.StatusOK},
		{"no key", "", "", http.StatusUnauthorized},
		{"the service's key", "", "Bearer k", http.StatusUnauthorized},
		{"basic", "", "Basic Y3RsOg==", http.StatusUnauthorized},
		{"localhost", "localhost:" + port, "Bearer ctl", http.StatusOK},
		{"[::1]", "[::1]:" + port, "Bearer ctl", http.StatusOK},
		{"an added host", "FAKE.test:" + port, "Bearer ctl", http.StatusOK},
		{"a rebound name", "attacker.example:" + port, "Bearer ctl", http.StatusForbidden},
		{"a rebound name without a key", "attacker.example", "", http.StatusForbidden},
		{"localhost as a subdomain", "localhost.attacker.example", "Bearer ctl", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodGet, f.ctl.URL+"/api/v1/messages", nil)
			require.NoError(t, err)
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := f.hc.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
		})
	}
	t.Run("every endpoint wants the key", func(t *testing.T) {
		t.Parallel()
		for _, ep := range []struct{ method, path string }{
			{"GET", "/api/v1/messages"}, {"DELETE", "/api/v1/messages"}, {"GET", "/api/v1/message/1"},
			{"GET", "/api/v1/message/1/raw"}, {"GET", "/webhooks"}, {"GET", "/lists"}, {"GET", "/lists/1/members"},
			{"POST", "/lists/1/confirm"}, {"POST", "/events"}, {"POST", "/reset"}, {"POST", "/inbox/token"},
			{"GET", "/inbox/"}, {"GET", "/nothing"},
		} {
			status, _ := f.do(t, ep.method, ep.path, url.Values{}, "-")
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s", ep.method, ep.path)
		}
	})
	t.Run("the service is untouched", func(t *testing.T) {
		t.Parallel()
		assert.Contains(t, v3Command(t, f.srv, "system.systemdate.get"), "SystemDate")
	})
}

func TestControlMessagesInMailpitShape(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	before := time.Now().Add(-time.Second)
	ids := f.send(t, greeting("ann@example.com", "Ann"), greeting("bob@example.com", "Bob"),
		&smtp.Message{From: "shop@example.com", To: []string{"carol@example.com"}, Bcc: []string{"dan@example.com"},
			Subject: "Grüße, {{FIRST}}", Text: "Hallo {{FIRST}}",
			Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"FIRST": "Carol"}), TrackOpens: true}})

	var page messagesPage
	f.get(t, "/api/v1/messages", &page)
	require.Len(t, page.Messages, 3)
	assert.Equal(t, 3, page.Total)
	assert.Equal(t, 3, page.MessagesCount)
	assert.Equal(t, 0, page.Dropped)
	assert.Equal(t, []string{"news"}, page.Tags)
	newest := page.Messages[0]
	assert.Equal(t, "Grüße, Carol", newest.Subject, "rendered")
	assert.Equal(t, ids[2], newest.MessageID)
	assert.Equal(t, []mailpitAddress{{Address: "dan@example.com"}}, newest.Bcc)
	assert.Equal(t, "Hallo Carol", newest.Snippet)
	assert.Equal(t, "Hi Ann", page.Messages[2].Subject)
	assert.Equal(t, &mailpitAddress{Name: "Shop", Address: "shop@example.com"}, page.Messages[2].From)
	assert.Equal(t, []mailpitAddress{{Address: "ann@example.com"}}, page.Messages[2].To)

	var raw map[string]any
	f.get(t, "/api/v1/messages", &raw)
	for _, key := range []string{"total", "unread", "count", "messages_count", "start", "tags", "messages"} {
		assert.Contains(t, raw, key, "Mailpit's member")
	}
	first := raw["messages"].([]any)[0].(map[string]any)
	for _, key := range []string{"ID", "MessageID", "Read", "From", "To", "Cc", "Bcc", "ReplyTo", "Subject", "Created",
		"Tags", "Size", "Attachments", "Snippet"} {
		assert.Contains(t, first, key, "Mailpit's message member")
	}

	searches := []struct {
		query string
		want  []string // subjects
	}{
		{"start=1&limit=1", []string{"Hi Bob"}},
		{"limit=0", []string{"Grüße, Carol", "Hi Bob", "Hi Ann"}},
		{"to=BOB@", []string{"Hi Bob"}},
		{"to=dan@example.com", []string{"Grüße, Carol"}},
		{"subject=hi", []string{"Hi Bob", "Hi Ann"}},
		{"since=" + url.QueryEscape(before.UTC().Format(time.RFC3339)), []string{"Grüße, Carol", "Hi Bob", "Hi Ann"}},
		{"since=2999-01-01T00:00:00Z", nil},
	}
	for _, s := range searches {
		var p messagesPage
		f.get(t, "/api/v1/messages?"+s.query, &p)
		var got []string
		for _, m := range p.Messages {
			got = append(got, m.Subject)
		}
		assert.Equal(t, s.want, got, s.query)
	}
	for _, bad := range []string{"start=-1", "limit=x", "since=yesterday"} {
		status, body := f.do(t, http.MethodGet, "/api/v1/messages?"+bad, nil, "ctl")
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Contains(t, body, `"error"`)
	}

	var d messageDetail
	f.get(t, "/api/v1/message/"+page.Messages[2].ID, &d)
	assert.Equal(t, "Hi Ann", d.Subject)
	assert.Equal(t, "Dear Ann, news.", d.Text)
	assert.Equal(t, "<p>Dear Ann</p>", d.HTML)
	assert.Equal(t, templateInfo{Subject: "Hi {{FIRST}}", Text: "Dear {{FIRST}}, news.", HTML: "<p>Dear {{FIRST}}</p>"}, d.Template)
	assert.Equal(t, envelopeInfo{From: "shop@example.com", To: []string{"ann@example.com"}}, d.Envelope)
	assert.Equal(t, map[string]any{"FIRST": "Ann", "%FIRST%": "Ann"}, d.Sendloop.MergeVars)
	assert.Equal(t, []string{"news"}, d.Sendloop.Tags)
	assert.Equal(t, "shop@example.com", d.ReturnPath)
	assert.NotEmpty(t, d.Headers["X-Sl-Merge-Vars"], "headers: %v", d.Headers)

	status, body := f.do(t, http.MethodGet, "/api/v1/message/"+page.Messages[2].ID+"/raw", nil, "ctl")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "Subject: Hi {{FIRST}}\r\n")
	assert.Contains(t, body, "Message-ID: <"+ids[0]+">")
	var headers map[string][]string
	f.get(t, "/api/v1/message/"+page.Messages[2].ID+"/headers", &headers)
	assert.Equal(t, []string{"Hi {{FIRST}}"}, headers["Subject"])

	status, _ = f.do(t, http.MethodGet, "/api/v1/message/404", nil, "ctl")
	assert.Equal(t, http.StatusNotFound, status)
	status, _ = f.do(t, http.MethodDelete, "/api/v1/messages", nil, "ctl")
	assert.Equal(t, http.StatusOK, status)
	f.get(t, "/api/v1/messages", &page)
	assert.Empty(t, page.Messages)
	assert.Equal(t, 0, page.Total)
}

func TestControlKeepsTheNewestMessages(t *testing.T) {
	t.Parallel()
	f := newControlFake(t, RelayKeepMessages(2))
	f.send(t, greeting("a@example.com", "A"), greeting("b@example.com", "B"), greeting("c@example.com", "C"))
	var page messagesPage
	f.get(t, "/api/v1/messages", &page)
	require.Len(t, page.Messages, 2)
	assert.Equal(t, "Hi C", page.Messages[0].Subject)
	assert.Equal(t, "Hi B", page.Messages[1].Subject)
	assert.Equal(t, 1, page.Dropped)
	assert.Equal(t, 2, page.Total)
	status, _ := f.do(t, http.MethodGet, "/api/v1/message/1", nil, "ctl")
	assert.Equal(t, http.StatusNotFound, status, "the oldest was dropped")
	assert.Len(t, f.relay.Messages(), 2)
}

// hookReceiver records the webhooks posted to it.
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

func TestControlConfirmPostsTheSubscriptionWebhook(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	hook := newHookReceiver(t)
	require.Contains(t, v3Command(t, f.srv, "list.create", "Name", "news", "OptInMode", "Double"), `"ListID":1`)
	require.Equal(t, `{"Success":true}`, v3Command(t, f.srv, "list.settings.update", "ListID", "1",
		"WebServiceSubscriptionURL", hook.URL+"/sub", "WebServiceUnsubscriptionURL", hook.URL+"/unsub"))
	require.Contains(t, v3Command(t, f.srv, "subscriber.subscribe", "ListID", "1", "EmailAddress", "ann@example.com",
		"SubscriptionIP", "192.0.2.1"), `"Success":true`)

	var lists struct{ Lists []listInfo }
	f.get(t, "/lists", &lists)
	require.Len(t, lists.Lists, 1)
	assert.Equal(t, listInfo{ID: 1, Name: "news", OptInMode: "Double", CustomFields: []fieldInfo{}, Subscribers: 1,
		SubscriptionURL: hook.URL + "/sub", UnsubscriptionURL: hook.URL + "/unsub"}, lists.Lists[0])
	var members struct {
		Total   int
		Members []map[string]string
	}
	f.get(t, "/lists/1/members", &members)
	require.Len(t, members.Members, 1)
	assert.Equal(t, "Confirmation Pending", members.Members[0]["SubscriptionStatus"])

	status, body := f.do(t, http.MethodPost, "/lists/1/confirm", url.Values{"email": {"ann@example.com"}}, "ctl")
	require.Equal(t, http.StatusOK, status, body)
	var answer struct {
		Status   string
		Webhooks []webhookInfo
	}
	require.NoError(t, json.Unmarshal([]byte(body), &answer))
	assert.Equal(t, "Subscribed", answer.Status)
	require.Len(t, answer.Webhooks, 1)
	assert.True(t, answer.Webhooks[0].Delivered)
	got := hook.received()
	require.Len(t, got, 1, "posted before the answer")
	assert.Contains(t, got[0], "<action>Subscription</action>")
	assert.Contains(t, got[0], "<EmailAddress>ann@example.com</EmailAddress>")

	var hooks struct{ Webhooks []webhookInfo }
	f.get(t, "/webhooks", &hooks)
	require.Len(t, hooks.Webhooks, 1)
	assert.Equal(t, hook.URL+"/sub", hooks.Webhooks[0].URL)

	refusals := []struct {
		path   string
		form   url.Values
		status int
	}{
		{"/lists/1/confirm", url.Values{"email": {"ann@example.com"}}, http.StatusConflict},
		{"/lists/2/confirm", url.Values{"email": {"ann@example.com"}}, http.StatusNotFound}, // no list 2
		{"/lists/1/confirm", url.Values{}, http.StatusConflict},
		{"/lists/x/confirm", url.Values{"email": {"ann@example.com"}}, http.StatusNotFound},
	}
	for _, r := range refusals {
		status, body := f.do(t, http.MethodPost, r.path, r.form, "ctl")
		assert.Equal(t, r.status, status, "%s %v: %s", r.path, r.form, body)
	}
	status, body = f.do(t, http.MethodGet, "/lists/9/members", nil, "ctl")
	assert.Equal(t, http.StatusNotFound, status, body)
}

func TestControlEvents(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	hook := newHookReceiver(t)
	_, emails := fakeList(t, f.srv, "n", 3)
	require.Equal(t, `{"Success":true}`, v3Command(t, f.srv, "list.settings.update", "ListID", "1",
		"WebServiceUnsubscriptionURL", hook.URL+"/unsub"))
	event := func(pairs ...string) (int, map[string]any) {
		form := url.Values{}
		for i := 0; i+1 < len(pairs); i += 2 {
			form.Set(pairs[i], pairs[i+1])
		}
		status, body := f.do(t, http.MethodPost, "/events", form, "ctl")
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &v), body)
		return status, v
	}

	// Without a campaign: what applies to the list member.
	status, v := event("kind", "unsubscribe", "email", emails[0], "list", "1")
	require.Equal(t, http.StatusOK, status, v)
	st, _ := f.srv.SubscriberStatus(1, emails[0])
	assert.Equal(t, "Unsubscribed", st)
	require.Len(t, hook.received(), 1)
	assert.Contains(t, hook.received()[0], "<action>Unsubscription</action>")
	status, v = event("kind", "bounce", "email", emails[1], "list", "1")
	require.Equal(t, http.StatusOK, status, v)
	status, v = event("kind", "soft-bounce", "email", emails[1], "list", "1")
	require.Equal(t, http.StatusOK, status, v)
	status, v = event("kind", "open", "email", emails[2], "list", "1")
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, v["error"], "needs one")

	// With a delivered campaign: SimulateEvents.
	require.Contains(t, v3Command(t, f.srv, "campaign.create", campaignPairs()...), `"CampaignID":1`)
	status, body := f.do(t, http.MethodPost, "/campaigns/1/send", url.Values{}, "ctl")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, emails[2])
	assert.NotContains(t, body, emails[1], "hard-bounced: not delivered")
	status, v = event("kind", "open", "email", emails[2])
	require.Equal(t, http.StatusOK, status, v)
	assert.EqualValues(t, 1, v["campaign_id"])
	status, v = event("kind", "complaint", "email", emails[2], "campaign", "1")
	require.Equal(t, http.StatusOK, status, v)
	assert.Equal(t, 1, len(f.srv.state.activityOf(1, EventOpen)))

	for _, bad := range [][]string{
		{"kind", "sneeze", "email", emails[2]},
		{"kind", "open"},
		{"kind", "open", "email", emails[2], "campaign", "x"},
	} {
		status, v := event(bad...)
		assert.Equal(t, http.StatusBadRequest, status, "%v: %v", bad, v)
	}
	status, v = event("kind", "open", "email", emails[2], "campaign", "7")
	assert.Equal(t, http.StatusNotFound, status, v)
	status, v = event("kind", "unsubscribe", "email", "nobody@example.com", "list", "1")
	assert.Equal(t, http.StatusNotFound, status, v)
	status, v = event("kind", "unsubscribe", "email", "nobody@example.com", "list", "9")
	assert.Equal(t, http.StatusNotFound, status, v)
	assert.Equal(t, "no list 9", v["error"])
}

func TestParseEventKind(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]CampaignEventKind{
		"open": EventOpen, "Click": EventClick, "browser-view": EventBrowserView, "forward": EventForward,
		"unsubscribe": EventUnsubscription, "unsubscription": EventUnsubscription, "bounce": EventHardBounce,
		"hard_bounce": EventHardBounce, "soft-bounce": EventSoftBounce, "complaint": EventSpamComplaint,
		"spam complaint": EventSpamComplaint,
	} {
		got, err := ParseEventKind(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ParseEventKind("sneeze")
	assert.ErrorContains(t, err, "unknown event kind")
}

func TestControlResetGoesBackToTheSeed(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	fakeList(t, f.srv, "n", 2)
	f.send(t, greeting("a@example.com", "A"))
	status, body := f.do(t, http.MethodPost, "/reset", url.Values{}, "ctl")
	require.Equal(t, http.StatusOK, status, body)
	var lists struct{ Lists []listInfo }
	f.get(t, "/lists", &lists)
	require.Len(t, lists.Lists, 1)
	assert.Equal(t, "Seeded", lists.Lists[0].Name)
	assert.Equal(t, 1, lists.Lists[0].ID, "IDs start again")
	assert.Empty(t, f.relay.Messages())
	f.mu.Lock()
	assert.Equal(t, 1, f.reseeds)
	f.mu.Unlock()
	assert.Contains(t, v3Command(t, f.srv, "list.getlist"), `"Seeded"`, "the service sees the seed")
}

func TestControlInboxLogin(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	hc := &http.Client{Transport: f.hc.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := f.ctl.InboxURL()
	resp, err := hc.Get(login)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, ControlPrefix+"/inbox/", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	assert.True(t, cookies[0].HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
	assert.Equal(t, ControlPrefix+"/", cookies[0].Path)

	resp, err = hc.Get(login)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the token works once")

	resp, err = hc.Get(f.ctl.URL + "/api/v1/messages")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the cookie opens the API")

	resp, err = hc.PostForm(f.ctl.URL+"/reset", url.Values{})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a POST with the cookie needs the form token")
	resp, err = hc.PostForm(f.ctl.URL+"/reset", url.Values{"form_token": {"wrong"}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, err = hc.PostForm(f.ctl.URL+"/inbox/token", url.Values{"form_token": {f.ctl.sessionToken(t)}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a new login URL needs the key")
	resp, err = hc.PostForm(f.ctl.URL+"/reset", url.Values{"form_token": {f.ctl.sessionToken(t)}})
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	var tok struct{ URL string }
	status, body := f.do(t, http.MethodPost, "/inbox/token", url.Values{}, "ctl")
	require.Equal(t, http.StatusOK, status)
	require.NoError(t, json.Unmarshal([]byte(body), &tok))
	assert.True(t, strings.HasPrefix(tok.URL, f.ctl.URL+inboxLoginPath+"?token="), tok.URL)
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]bool{
		"/_fake/inbox/":                    true,
		"/_fake/inbox/message/3":           true,
		"/_fake/inbox/?to=a%40b":           true,
		"//evil.example/_fake/inbox/":      false,
		"http://evil.example/_fake/inbox/": false,
		"/_fake/inbox/../reset":            false,
		"/_fake/lists":                     false,
		"/_fake/inbox/\\evil":              false,
		"":                                 false,
	} {
		assert.Equal(t, want, safeNext(next), next)
	}
}

// sessionToken returns the form token of the only session.
func (c *Control) sessionToken(t *testing.T) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.sessions, 1)
	for _, s := range c.sessions {
		return s.csrf
	}
	return ""
}

// FuzzControlParams feeds the control API's readers of queries and forms: they refuse or
// accept, never panic, and what they accept holds.
func FuzzControlParams(f *testing.F) {
	for _, seed := range []string{"start=1&limit=2", "since=2026-01-02T15:04:05Z&to=a", "limit=-1", "since=x",
		"/_fake/inbox/", "//x/_fake/inbox/", "/_fake/inbox/../x", "hard_bounce", "Soft-Bounce", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if q, err := url.ParseQuery(s); err == nil {
			if flt, err := readFilter(q, 50); err == nil {
				assert.GreaterOrEqual(t, flt.start, 0)
				assert.GreaterOrEqual(t, flt.limit, 0)
			}
		}
		if safeNext(s) {
			u, err := url.Parse(s)
			require.NoError(t, err)
			assert.Empty(t, u.Host)
			assert.True(t, strings.HasPrefix(u.Path, ControlPrefix+"/inbox/"))
			assert.NotContains(t, "/"+u.Path+"/", "/../")
		}
		if kind, err := ParseEventKind(s); err == nil {
			assert.Contains(t, knownEventKinds, kind)
		}
	})
}

package sendlooptest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/smtp"
)

// browser is a client logged in to a fake's inbox.
type browser struct {
	hc  *http.Client
	ctl *Control
}

func login(t *testing.T, f *controlFake) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &browser{hc: &http.Client{Transport: f.hc.Transport, Jar: jar}, ctl: f.ctl}
	resp, err := b.hc.Get(f.ctl.InboxURL())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return b
}

// get fetches an inbox path and returns the answer and its body.
func (b *browser) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	resp, err := b.hc.Get(b.ctl.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// post submits a form of the inbox, with the session's form token unless noToken.
func (b *browser) post(t *testing.T, path string, form url.Values, noToken bool) (*http.Response, string) {
	t.Helper()
	if !noToken {
		form.Set("form_token", b.ctl.sessionToken(t))
	}
	resp, err := b.hc.PostForm(b.ctl.URL+path, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

const hostileHTML = `<p>Hi {{FIRST}}</p><script>document.title="ran"</script><img src="http://203.0.113.9/x.png" onerror="document.title='ran'">`

func TestInboxShowsMessagesEscapedAndHTMLOnlySandboxed(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	f.send(t, greeting("ann@example.com", "Ann"), &smtp.Message{From: "shop@example.com", To: []string{"eve@example.com"},
		Subject: `<b>Grüße</b> {{FIRST}}`, Text: "Hallo {{FIRST}}", HTML: hostileHTML,
		Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"FIRST": "Eve"})}})
	b := login(t, f)

	resp, page := b.get(t, "/inbox/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "script-src")
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.Contains(t, page, "Hi Ann")
	assert.Contains(t, page, "&lt;b&gt;Grüße&lt;/b&gt; Eve", "the rendered subject, escaped")
	assert.NotContains(t, page, "<b>Grüße")
	assert.NotContains(t, page, "<script", "the pages have no script")
	assert.Equal(t, 2, strings.Count(page, `class="message"`))
	assert.Less(t, strings.Index(page, "Grüße"), strings.Index(page, "Hi Ann"), "newest first")

	resp, page = b.get(t, "/inbox")
	assert.Equal(t, "/_fake/inbox/", resp.Request.URL.Path, "redirected")
	assert.Equal(t, 2, strings.Count(page, `class="message"`))
	_, page = b.get(t, "/inbox/?to=ann")
	assert.Equal(t, 1, strings.Count(page, `class="message"`))
	assert.Contains(t, page, "Hi Ann")

	resp, page = b.get(t, "/inbox/message/2")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	frames := regexp.MustCompile(`<iframe[^>]*>`).FindAllString(page, -1)
	require.Len(t, frames, 1)
	assert.Regexp(t, `\ssandbox[\s>]`, frames[0], "sandboxed, with no allow-* at all")
	assert.NotContains(t, frames[0], "allow-")
	assert.Contains(t, frames[0], `src="/_fake/inbox/message/2/html"`)
	assert.NotContains(t, page, "<script", "the HTML is never inline")
	assert.NotContains(t, page, "<img")
	assert.Contains(t, page, "&lt;script&gt;", "the source, escaped")
	assert.Contains(t, page, "Hallo Eve", "the rendered text")

	resp, html := b.get(t, "/inbox/message/2/html")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, html, "<p>Hi Eve</p>", "rendered")
	csp = resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "sandbox", "form-action 'none'", "base-uri 'none'"} {
		assert.Contains(t, csp, want)
	}
	assert.NotContains(t, csp, "script-src")
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))

	resp, _ = b.get(t, "/inbox/message/99")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestInboxListsWebhooksAndActions(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	hook := newHookReceiver(t)
	require.Contains(t, v3Command(t, f.srv, "list.create", "Name", "<News>", "OptInMode", "Double"), `"ListID":1`)
	require.Equal(t, `{"Success":true}`, v3Command(t, f.srv, "list.settings.update", "ListID", "1",
		"WebServiceSubscriptionURL", hook.URL+"/sub"))
	require.Contains(t, v3Command(t, f.srv, "subscriber.subscribe", "ListID", "1", "EmailAddress", "ann@example.com",
		"SubscriptionIP", "192.0.2.1"), `"Success":true`)
	b := login(t, f)

	_, page := b.get(t, "/inbox/lists")
	assert.Contains(t, page, "&lt;News&gt;")
	assert.Contains(t, page, "ann@example.com")
	assert.Contains(t, page, "Confirmation Pending")
	assert.Contains(t, page, `action="/_fake/inbox/confirm"`)

	resp, _ := b.post(t, "/inbox/confirm", url.Values{"list": {"1"}, "email": {"ann@example.com"}}, true)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "no form token")
	assert.Empty(t, hook.received())

	resp, page = b.post(t, "/inbox/confirm", url.Values{"list": {"1"}, "email": {"ann@example.com"}}, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/_fake/inbox/lists", resp.Request.URL.Path, "back to the lists")
	assert.Contains(t, page, "Confirmed ann@example.com")
	require.Len(t, hook.received(), 1)

	_, page = b.get(t, "/inbox/webhooks")
	assert.Contains(t, page, "Subscription")
	assert.Contains(t, page, hook.URL+"/sub")
	assert.Contains(t, page, "&lt;action&gt;Subscription&lt;/action&gt;")

	_, page = b.post(t, "/inbox/event", url.Values{"list": {"1"}, "email": {"ann@example.com"}, "kind": {"open"}}, false)
	assert.Contains(t, page, `class="flash error"`, "an open needs a campaign")

	f.send(t, greeting("ann@example.com", "Ann"))
	resp, page = b.post(t, "/inbox/delete", url.Values{}, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "No message.")
	_, page = b.post(t, "/inbox/reset", url.Values{}, false)
	assert.Contains(t, page, "back to its seed")
	_, page = b.get(t, "/inbox/lists")
	assert.Contains(t, page, "Seeded")
}

func TestInboxSaysHowManyMessagesItDropped(t *testing.T) {
	t.Parallel()
	f := newControlFake(t, RelayKeepMessages(1))
	f.send(t, greeting("a@example.com", "A"), greeting("b@example.com", "B"), greeting("c@example.com", "C"))
	b := login(t, f)
	_, page := b.get(t, "/inbox/")
	assert.Contains(t, page, "2 older messages dropped")
	assert.Contains(t, page, "Hi C")
	assert.NotContains(t, page, "Hi A")
}

func TestInboxWithoutSession(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	resp, err := f.hc.Get(f.ctl.URL + "/inbox/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, string(body), "SENDLOOP_FAKE_INBOX")
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// sendPersonalised sends one message per row through the fake's relay, with a {{FIRST}}
// subject, and returns the rows' addresses.
func sendPersonalised(t *testing.T, p *fakeProcess, subject, html string, rows ...[2]string) {
	t.Helper()
	csv := "EmailAddress,FIRST\n"
	for _, r := range rows {
		csv += r[0] + "," + r[1] + "\n"
	}
	file := filepath.Join(t.TempDir(), "recipients.csv")
	require.NoError(t, os.WriteFile(file, []byte(csv), 0o600))
	args := []string{"send", "--from", "shop@example.com", "--no-unsubscribe", "--recipients", file, "--journal", filepath.Join(t.TempDir(), "journal"), "--subject", subject, "--text", "-"}
	if html != "" {
		hf := filepath.Join(t.TempDir(), "body.html")
		require.NoError(t, os.WriteFile(hf, []byte(html), 0o600))
		args = append(args, "--html", hf)
	}
	r := invocation{args: args, env: p.env, stdin: "Dear {{FIRST}}"}.run(t)
	expect(t, r, exitOK, nil, nil)
}

// controlGet is a GET of the fake's control API with the given Authorization.
func controlGet(t *testing.T, p *fakeProcess, path, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.get(envFakeURL)+path, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Transport: testkit.Transport()}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestFakePrintsTheControlSettings(t *testing.T) {
	t.Parallel()
	for _, jsonOut := range []bool{false, true} {
		p := startFake(t, jsonOut, "--empty")
		base := p.get(envBaseURL)
		assert.Equal(t, base+"/_fake", p.get(envFakeURL), "json %v", jsonOut)
		assert.NotEmpty(t, p.get(envFakeKey))
		assert.NotEqual(t, p.get(envAPIKey), p.get(envFakeKey), "a key of its own")
		assert.True(t, strings.HasPrefix(p.get(envFakeInbox), base+"/_fake/inbox/login?token="), p.get(envFakeInbox))
	}
}

func TestFakeControlFromOutside(t *testing.T) {
	t.Parallel()
	p := startFake(t, false)
	sendPersonalised(t, p, "News for {{FIRST}}", "", [2]string{"ann@example.com", "Ann"}, [2]string{"bob@example.com", "Bob"},
		[2]string{"zoe@example.com", "Zoë"})
	key := "Bearer " + p.get(envFakeKey)

	status, body := controlGet(t, p, "/api/v1/messages", key)
	require.Equal(t, http.StatusOK, status, body)
	var page struct {
		Total    int `json:"total"`
		Messages []struct{ ID, MessageID, Subject string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Messages, 3)
	// The rows go out side by side: the order is the relay's, the IDs descending.
	bySubject := map[string]int{}
	for i, m := range page.Messages {
		assert.NotEmpty(t, m.MessageID)
		bySubject[m.Subject] = i
		if i > 0 {
			assert.Less(t, m.ID, page.Messages[i-1].ID, "newest first")
		}
	}
	require.Len(t, bySubject, 3)
	zoe, bob := page.Messages[bySubject["News for Zoë"]], page.Messages[bySubject["News for Bob"]]
	require.Contains(t, bySubject, "News for Ann", "rendered")
	waitFor(t, "the relay's log line", func() bool {
		return strings.Contains(p.stderr.String(), `"News for Zoë" (ID `+zoe.ID+`, Message-ID <`+zoe.MessageID+`>)`)
	})

	for _, auth := range []string{"", "Bearer " + p.get(envAPIKey), "Bearer wrong"} {
		status, _ := controlGet(t, p, "/api/v1/messages", auth)
		assert.Equal(t, http.StatusUnauthorized, status, "%q", auth)
	}

	t.Run("messages --json prints the API's answer", func(t *testing.T) {
		r := invocation{args: []string{"fake", "messages", "--json"}, env: p.env}.run(t)
		expect(t, r, exitOK, nil, nil)
		_, viaAPI := controlGet(t, p, "/api/v1/messages?limit=0", key)
		assert.JSONEq(t, viaAPI, r.stdout)
	})
	t.Run("messages as a table", func(t *testing.T) {
		r := invocation{args: []string{"fake", "messages", "--to", "bob@"}, env: p.env}.run(t)
		expect(t, r, exitOK, []string{"ID", "MESSAGE-ID", "bob@example.com", "News for Bob", bob.MessageID}, nil)
		assert.NotContains(t, r.stdout, "ann@example.com")
	})
	t.Run("message", func(t *testing.T) {
		r := invocation{args: []string{"fake", "message", zoe.ID}, env: p.env}.run(t)
		expect(t, r, exitOK, []string{"Subject: News for Zoë", "To: zoe@example.com", "Dear Zoë", `"FIRST":"Zoë"`}, nil)
		r = invocation{args: []string{"fake", "message", zoe.ID, "--raw"}, env: p.env}.run(t)
		expect(t, r, exitOK, []string{"Message-ID: <" + zoe.MessageID + ">", "X-SL-Merge-Vars:"}, nil)
		r = invocation{args: []string{"fake", "message", "999"}, env: p.env}.run(t)
		expect(t, r, exitFailure, nil, []string{"404", "no message"})
	})
	t.Run("without the environment", func(t *testing.T) {
		r := invocation{args: []string{"fake", "messages"}, env: []string{}}.run(t)
		expect(t, r, exitUsage, nil, []string{envFakeURL, envFakeKey, "not set"})
		env := append(append([]string(nil), p.env...), envFakeKey+"=wrong")
		r = invocation{args: []string{"fake", "reset"}, env: env}.run(t)
		expect(t, r, exitUsage, nil, []string{"refused", "401"})
	})
}

func TestFakeConfirmPostsTheSubscriptionCallback(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	p := startFake(t, false, "--empty")
	call := func(args ...string) {
		t.Helper()
		r := invocation{args: append([]string{"call"}, args...), env: p.env}.run(t)
		expect(t, r, exitOK, nil, nil)
	}
	call("list.create", "Name=News", "OptInMode=Double")
	call("list.settings.update", "ListID=1", "WebServiceSubscriptionURL="+receiver.URL+"/sub",
		"WebServiceUnsubscriptionURL="+receiver.URL+"/unsub")
	call("subscriber.subscribe", "ListID=1", "EmailAddress=ann@example.com", "SubscriptionIP=192.0.2.1")

	r := invocation{args: []string{"fake", "confirm", "ann@example.com", "--list", "1"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"Confirmed ann@example.com in list 1", "Subscription webhook to " + receiver.URL + "/sub: delivered (HTTP 200)"}, nil)
	mu.Lock()
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "/sub ")
	assert.Contains(t, got[0], "<action>Subscription</action>")
	mu.Unlock()

	r = invocation{args: []string{"fake", "event", "unsubscribe", "ann@example.com", "--list", "1", "--json"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{`"unsubscription"`, `"action": "Unsubscription"`}, nil)
	mu.Lock()
	require.Len(t, got, 2)
	assert.Contains(t, got[1], "/unsub ")
	mu.Unlock()

	r = invocation{args: []string{"fake", "inbox"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{p.get(envFakeURL) + "/inbox/login?token="}, nil)
	r = invocation{args: []string{"fake", "reset"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"back to its seed"}, nil)
	r = invocation{args: []string{"--json", "lists"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"[]"}, nil)
}

func TestFakeSubcommandUsage(t *testing.T) {
	t.Parallel()
	env := []string{envFakeURL + "=http://127.0.0.1:1/_fake", envFakeKey + "=k"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fake", "sneeze"}, `unknown subcommand "sneeze"`},
		{[]string{"fake", "messages", "x"}, "fake messages takes no arguments"},
		{[]string{"fake", "message"}, "fake message takes a message ID"},
		{[]string{"fake", "confirm", "a@example.com"}, "fake confirm needs --list ID"},
		{[]string{"fake", "delete", "a@example.com"}, "fake delete needs --list ID"},
		{[]string{"fake", "delete"}, "fake delete takes an EMAIL"},
		{[]string{"fake", "event", "open"}, "fake event takes a KIND and an EMAIL"},
		{[]string{"fake", "event", "sneeze", "a@example.com"}, `unknown event kind "sneeze"`},
		{[]string{"fake", "messages", "--raw"}, "--raw has no meaning with fake messages"},
		{[]string{"fake", "reset", "--addr", "127.0.0.1:0"}, "--addr has no meaning with fake reset"},
		{[]string{"fake", "--to", "a@example.com"}, "--to goes with a subcommand"},
		{[]string{"fake", "--keep-messages", "-1"}, "--keep-messages cannot be negative"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := invocation{args: tt.args, env: env}.run(t)
			expect(t, r, exitUsage, nil, []string{tt.want, "sendloop help fake"})
		})
	}
	r := invocation{args: []string{"fake", "messages"}, env: []string{envFakeURL + "=ftp://x", envFakeKey + "=k"}}.run(t)
	expect(t, r, exitUsage, nil, []string{"is not an http URL"})
}

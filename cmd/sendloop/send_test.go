package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSendFake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	textPath := writeFile(t, dir, "body.txt", "Hi {{NAME}},\nyour plan is %PLAN%.\n")
	logoPath := writeFile(t, dir, "logo.png", "\x89PNG\r\n\x1a\nlogo")
	tests := []struct {
		golden string
		global []string
	}{
		{"send_fake", nil},
		{"send_fake_json", []string{"--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			args := append(tt.global, "--fake", "send", "--from", "Shop <shop@example.com>", "--to", "ann@example.net",
				"--to", "bob@example.net,carl@example.net", "--subject", "Hello %PLAN%", "--text", textPath, "--html", "-",
				"--merge-vars", `{"NAME":"Zoë & co","%PLAN%":"pro"}`, "--custom-args", `{"order":17,"ref":"17","vip":true,"note":null}`,
				"--tags", "welcome, onboarding", "--track-opens", "--track-clicks", "--track-ga",
				"--message-id", "welcome-1@example.com", "--inline", "logo@example.com="+logoPath,
				"--header", "In-Reply-To: <order-17@example.com>", "--header", "X-Campaign: été, spring",
				"--list-unsubscribe", "https://example.com/u?id=1", "--list-unsubscribe", "mailto:u@example.com", "--one-click")
			r := invocation{args: args, stdin: `<p>Hi {{NAME}}</p><img src="cid:logo@example.com">`, env: []string{}}.run(t)
			expect(t, r, exitOK, nil, nil)
			golden(t, tt.golden, r.stdout)
		})
	}
}

// relayEnv starts a relay for the fake and returns the environment send needs to reach it.
func relayEnv(t *testing.T, f *fake) (*sendlooptest.Relay, []string) {
	t.Helper()
	relay, err := f.srv.StartRelay(t)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := relayCA(relay)
	if err != nil {
		t.Fatal(err)
	}
	caFile := writeFile(t, t.TempDir(), "ca.pem", string(ca))
	user, password := f.srv.RelayCredentials()
	// The fake's API too: a bulk send reads the suppression list through it.
	return relay, append([]string{envSMTPHost + "=" + relay.Host(), envSMTPPort + "=" + strconv.Itoa(relay.Port()),
		envSMTPUser + "=" + user, envSMTPPassword + "=" + password, envSMTPCAFile + "=" + caFile}, f.env...)
}

func TestSendRelay(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	args := []string{"send", "--from", "shop@example.com", "--to", "ann@example.net", "--subject", "Receipt", "--text", "-",
		"--merge-vars", `{"N":1}`, "--tags", "receipts", "--track-clicks"}
	r := invocation{args: args, env: env, stdin: "Total: {{N}}"}.run(t)
	expect(t, r, exitOK, []string{`Sent "Receipt" to ann@example.net through 127.0.0.1:`, "Message-ID: <"}, nil)
	msgs := relay.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.RenderedText != "Total: 1" || m.SLHeaders.Tags[0] != "receipts" || !m.SLHeaders.TrackClicks || m.SLHeaders.TrackOpens {
		t.Errorf("captured %+v", m)
	}

	r = invocation{args: append([]string{"--json"}, args...), env: env, stdin: "x"}.run(t)
	expect(t, r, exitOK, []string{`"relay": "127.0.0.1:`, `"to": [`, `"message_id": "<`, `"reply": "250 2.0.0 OK: queued"`}, nil)
	msgs = relay.Messages()
	var out struct {
		MessageID string `json:"message_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.MessageID != "<"+msgs[len(msgs)-1].MessageID+">" {
		t.Errorf("printed Message-ID %q (%v), the relay got %q", out.MessageID, err, msgs[len(msgs)-1].MessageID)
	}
}

func TestSendHeadersInlineAndListUnsubscribe(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	logo := "\x89PNG\r\n\x1a\n\x00logo"
	logoPath := writeFile(t, dir, "logo.png", logo)
	attachPath := writeFile(t, dir, "terms.pdf", "%PDF-1.4 terms")
	args := []string{"send", "--from", "news@example.com", "--to", "ann@example.net", "--bcc", "audit@example.com",
		"--subject", "Spring news", "--text", "-", "--html", writeFile(t, dir, "news.html", `<img src="cid:logo@example.com"> News`),
		"--inline", "logo@example.com=" + logoPath, "--attach", attachPath,
		"--header", "In-Reply-To: <prev-1@example.com>", "--header", "X-Campaign: Frühling",
		"--list-unsubscribe", "https://example.com/u?id=ann", "--list-unsubscribe", "mailto:leave@example.com", "--one-click",
		"--custom-args", `{"order":17,"price":12.50,"vip":true,"ref":"17"}`, "--merge-vars", `{"%NAME%":"Ann","NAME":"Ann"}`}
	r := invocation{args: args, env: env, stdin: "News for %NAME% and {{NAME}}"}.run(t)
	expect(t, r, exitOK, []string{"Message-ID: <"}, nil)
	msgs := relay.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	campaign, _ := m.Header.Text("X-Campaign")
	checks := []struct{ name, got, want string }{
		{"structure", m.Structure, "multipart/mixed(multipart/alternative(text/plain, multipart/related(text/html, image/png)), application/pdf)"},
		{"List-Unsubscribe", m.Header.Get("List-Unsubscribe"), "<https://example.com/u?id=ann>, <mailto:leave@example.com>"},
		{"List-Unsubscribe-Post", m.Header.Get("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click"},
		{"In-Reply-To", m.Header.Get("In-Reply-To"), "<prev-1@example.com>"},
		{"X-Campaign", campaign, "Frühling"},
		{"inline", m.Inline[0].ContentID + " " + string(m.Inline[0].Data), "logo@example.com " + logo},
		{"attachment", m.Attachments[0].Filename + " " + string(m.Attachments[0].Data), "terms.pdf %PDF-1.4 terms"},
		{"rendered text", m.RenderedText, "News for Ann and Ann"},
		{"envelope", strings.Join(m.EnvelopeTo, ","), "ann@example.net,audit@example.com"},
		{"Bcc header", m.Header.Get("Bcc"), ""},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	// Custom arguments keep their JSON type.
	want := map[string]any{"order": json.Number("17"), "price": json.Number("12.50"), "vip": true, "ref": "17"}
	if !reflect.DeepEqual(m.SLHeaders.CustomArgs, want) {
		t.Errorf("custom args = %#v, want %#v", m.SLHeaders.CustomArgs, want)
	}
	if raw := m.Header.Get("X-Sl-Custom-Args"); raw != `{"order":17,"price":12.50,"ref":"17","vip":true}` {
		t.Errorf("X-SL-Custom-Args = %s", raw)
	}
}

func TestSendRefusedRecipient(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	relay.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "gone@example.net", Code: 550, Message: "5.1.1 no such user", Times: 10})
	args := []string{"send", "--from", "shop@example.com", "--to", "ann@example.net,gone@example.net", "--subject", "S", "--text", "-"}
	r := invocation{args: args, env: env, stdin: "x"}.run(t)
	expect(t, r, exitFailure, []string{`Sent "S" to ann@example.net through`, "Message-ID: <"}, []string{"gone@example.net", "550 5.1.1 no such user"})
	if n := len(relay.Messages()); n != 1 {
		t.Errorf("%d messages, want 1 (to ann@)", n)
	}
	r = invocation{args: append([]string{"--json"}, args...), env: env, stdin: "x"}.run(t)
	expect(t, r, exitFailure, []string{`"accepted": [`, `"recipient": "gone@example.net"`, `"code": 550`}, nil)
}

func TestSendUsageErrors(t *testing.T) {
	t.Parallel()
	base := []string{"--fake", "send", "--from", "shop@example.com", "--to", "ann@example.net", "--subject", "S", "--text", "-"}
	dir := t.TempDir()
	png := writeFile(t, dir, "a.png", "x")
	tests := []struct {
		name   string
		extra  []string
		stderr string
	}{
		{"header without colon", []string{"--header", "X-A"}, "--header"},
		{"header with a line break", []string{"--header", "X-A: 1\nBcc: evil@example.com"}, "X-A"},
		{"reserved header", []string{"--header", "Bcc: evil@example.com"}, "Bcc"},
		{"inline by its file name, without HTML", []string{"--inline", png}, "HTML"},
		{"inline without HTML", []string{"--inline", "a@example.com=" + png}, "inline"},
		{"missing inline file", []string{"--html", png, "--inline", "a@example.com=" + png + ".nope"}, "--inline"},
		{"bad unsubscribe URL", []string{"--list-unsubscribe", "javascript:alert(1)"}, "List-Unsubscribe"},
		{"one-click without https", []string{"--list-unsubscribe", "mailto:u@example.com", "--one-click"}, "https"},
		{"bad message id", []string{"--message-id", "no at sign"}, "Message-ID"},
		{"custom args not scalar", []string{"--custom-args", `{"a":[1]}`}, "--custom-args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := invocation{args: append(append([]string{}, base...), tt.extra...), env: []string{}, stdin: "x"}.run(t)
			expect(t, r, exitUsage, nil, []string{tt.stderr})
		})
	}
}

func TestSendRelayFailures(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	_, env := relayEnv(t, f)
	_, password := f.srv.RelayCredentials()
	args := []string{"send", "--from", "shop@example.com", "--to", "ann@example.net", "--subject", "S", "--text", "-"}
	replace := func(env []string, key, value string) []string {
		out := []string{key + "=" + value}
		for _, e := range env {
			if !strings.HasPrefix(e, key+"=") {
				out = append(out, e)
			}
		}
		return out
	}
	tests := []struct {
		name   string
		env    []string
		code   int
		stderr string
	}{
		{"wrong password", replace(env, envSMTPPassword, password+"x"), exitUsage, "535"}, // relay credentials refused: exit 2
		{"untrusted certificate", replace(env, envSMTPCAFile, ""), exitFailure, "certificate"},
		{"missing CA file", replace(env, envSMTPCAFile, filepath.Join(t.TempDir(), "nope.pem")), exitUsage, "SENDLOOP_SMTP_CA_FILE"},
		{"CA file without PEM", replace(env, envSMTPCAFile, writeFile(t, t.TempDir(), "x.pem", "nothing")), exitUsage, "holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := invocation{args: args, env: tt.env, stdin: "x"}.run(t)
			expect(t, r, tt.code, nil, []string{tt.stderr})
			if strings.Contains(r.stdout+r.stderr, password) {
				t.Errorf("the relay password was printed:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}

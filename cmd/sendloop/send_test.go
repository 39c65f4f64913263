package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSendFake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	textPath := writeFile(t, dir, "body.txt", "Hi {{NAME}},\nyour plan is %PLAN%.\n")
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
				"--merge-vars", `{"NAME":"Zoë & co","%PLAN%":"pro"}`, "--custom-args", `{"order":"17"}`,
				"--tags", "welcome, onboarding", "--track-opens", "--track-clicks", "--track-ga")
			r := invocation{args: args, stdin: "<p>Hi {{NAME}}</p>", env: []string{}}.run(t)
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
	return relay, []string{envSMTPHost + "=" + relay.Host(), envSMTPPort + "=" + strconv.Itoa(relay.Port()),
		envSMTPUser + "=" + user, envSMTPPassword + "=" + password, envSMTPCAFile + "=" + caFile}
}

func TestSendRelay(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	args := []string{"send", "--from", "shop@example.com", "--to", "ann@example.net", "--subject", "Receipt", "--text", "-",
		"--merge-vars", `{"N":1}`, "--tags", "receipts", "--track-clicks"}
	r := invocation{args: args, env: env, stdin: "Total: {{N}}"}.run(t)
	expect(t, r, exitOK, []string{`Sent "Receipt" to ann@example.net through 127.0.0.1:`}, nil)
	msgs := relay.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if !m.TLS || m.RenderedText != "Total: 1" || m.SLHeaders.Tags[0] != "receipts" || !m.SLHeaders.TrackClicks || m.SLHeaders.TrackOpens {
		t.Errorf("captured %+v", m)
	}

	r = invocation{args: append([]string{"--json"}, args...), env: env, stdin: "x"}.run(t)
	expect(t, r, exitOK, []string{`"relay": "127.0.0.1:`, `"to": [`}, nil)
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

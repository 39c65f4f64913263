package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestSecretsNeverPrinted runs the commands, failing and succeeding, verbose, with a marker
// API key and relay password, and looks for them in everything printed.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const key = "MARKERKEY0123456789abcdef"
	srv := sendlooptest.NewServer(t, sendlooptest.WithAPIKey(key))
	if err := seedDemo(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	f := &fake{srv: srv, env: []string{envAPIKey + "=" + key, envBaseURL + "=" + srv.URL}}
	relay, relayEnv := relayEnv(t, f)
	_, password := srv.RelayCredentials()
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "s.csv", "EmailAddress,Plan\nann@example.com,x\nnew@example.com,y\nbad,z\n")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String()
	ln.Close()
	other := sendlooptest.NewServer(t) // accepts another key: every call fails with 104

	type run struct {
		name  string
		env   []string
		args  []string
		setup func()
	}
	withEnv := func(env []string, extra ...string) []string { return append(append([]string{}, env...), extra...) }
	runs := []run{
		{name: "lists", env: f.env, args: []string{"--verbose", "lists"}},
		{name: "call", env: f.env, args: []string{"--verbose", "call", "list.get", "ListID=1", "GetCustomFields=1"}},
		{name: "call answering with the key", env: f.env, args: []string{"call", "list.getlist"}, setup: func() {
			srv.InjectFault("list.getlist", sendlooptest.Fault{Status: 200, Body: `{"Success":true,"Echo":"` + key + `"}`})
		}},
		{name: "error page with the key", env: f.env, args: []string{"lists"}, setup: func() {
			srv.InjectFault("list.getlist", sendlooptest.Fault{Status: 502, Times: 10, Body: "<html>bad gateway for APIKey=" + key + "</html>"})
		}},
		{name: "export", env: f.env, args: []string{"--verbose", "export", "--list", "1"}},
		{name: "report", env: f.env, args: []string{"--verbose", "report", "campaign", "1"}},
		{name: "sync", env: f.env, args: []string{"--verbose", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing"}},
		{name: "sync of an unknown list", env: f.env, args: []string{"sync", "--list", "99", "--csv", csvPath}},
		{name: "wrong key", env: []string{envAPIKey + "=" + key, envBaseURL + "=" + other.URL}, args: []string{"--verbose", "lists"}},
		{name: "wrong key in sync", env: []string{envAPIKey + "=" + key, envBaseURL + "=" + other.URL}, args: []string{"sync", "--list", "1", "--csv", csvPath}},
		{name: "service down", env: []string{envAPIKey + "=" + key, envBaseURL + "=" + closedURL}, args: []string{"--verbose", "--timeout", "5s", "lists"}},
		{name: "bad base URL", env: []string{envAPIKey + "=" + key, envBaseURL + "=http://example.com/" + key}, args: []string{"lists"}},
		{name: "send", env: withEnv(relayEnv), args: []string{"--verbose", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "s", "--text", "-"}},
		{name: "send refused", env: withEnv(relayEnv), args: []string{"--verbose", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "s", "--text", "-"},
			setup: func() { relay.FailNext("MAIL", 550, "no: "+password) }},
		{name: "send with a wrong password", env: withEnv(relayEnv, envSMTPPassword+"="+password+"!"),
			args: []string{"--verbose", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "s", "--text", "-"}},
	}
	for _, r := range runs {
		// Sequential: the faults are queued on shared servers.
		if r.setup != nil {
			r.setup()
		}
		res := invocation{args: r.args, env: r.env, stdin: "body"}.run(t)
		srv.ClearFaults()
		out := res.stdout + res.stderr
		if strings.Contains(out, key) {
			t.Errorf("%s: the API key was printed:\n%s", r.name, out)
		}
		if strings.Contains(out, password) {
			t.Errorf("%s: the relay password was printed:\n%s", r.name, out)
		}
		if r.name == "call answering with the key" && !strings.Contains(res.stdout, `"Echo": "[REDACTED]"`) {
			t.Errorf("%s: %s", r.name, out)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestFlagsAnywhere runs commands with their flags and the global ones in every place.
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	tests := []struct {
		name   string
		args   []string
		stdout string
	}{
		{"global before", []string{"--json", "report", "list", "1"}, `"open_performance"`},
		{"global after the command", []string{"report", "--json", "list", "1"}, `"open_performance"`},
		{"global after the arguments", []string{"report", "list", "1", "--json"}, `"open_performance"`},
		{"global=value", []string{"report", "list", "1", "--json=true"}, `"open_performance"`},
		{"global turned off", []string{"report", "list", "1", "--json=false"}, "METRIC"},
		{"one dash", []string{"lists", "-json"}, `"list_id"`},
		{"command flag before the command", []string{"--list", "1", "--json", "export", "--format=csv"}, "EmailAddress,First name"},
		{"command flags after the command", []string{"export", "--format", "json", "--list=1"}, `"email_address":"ann@example.com"`},
		{"-- ends the flags", []string{"call", "--format", "json", "--", "list.get", "ListID=1", "GetCustomFields=0"}, `"Name": "Demo"`},
		{"quiet anywhere", []string{"export", "--list", "1", "--quiet"}, "ann@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.sendloop(t, tt.args...)
			expect(t, r, exitOK, []string{tt.stdout}, nil)
		})
	}
	t.Run("-- keeps a dash argument", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "report", "--", "list", "--json")
		expect(t, r, exitUsage, nil, []string{`list ID "--json" is not a positive number`})
	})
	t.Run("help anywhere", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "export", "--list", "1", "--help")
		expect(t, r, exitOK, []string{"Usage: sendloop [global flags] export"}, nil)
	})
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	newSets := func() (*flag2, *flag2) { return newFlag2("cmd"), newFlag2("global") }
	tests := []struct {
		args       []string
		positional []string
		values     string // cmd's then global's values
		help       bool
		err        string
	}{
		{args: []string{"a", "--n", "3", "b", "--v"}, positional: []string{"a", "b"}, values: "n=3 s= v=true j=false"},
		{args: []string{"--s=x=y", "--j", "--", "--n", "-"}, positional: []string{"--n", "-"}, values: "n=0 s=x=y v=false j=true"},
		{args: []string{"-s", "-5", "-"}, positional: []string{"-"}, values: "n=0 s=-5 v=false j=false"},
		{args: []string{"--v=false", "-h"}, values: "n=0 s= v=false j=false", help: true},
		{args: []string{"---n"}, positional: []string{"---n"}, values: "n=0 s= v=false j=false"},
		{args: []string{"--n", "x"}, err: `invalid value "x" for --n: want a whole number`},
		{args: []string{"--s"}, err: "flag --s needs a value"},
		{args: []string{"--zz"}, err: "unknown flag --zz"},
	}
	for _, tt := range tests {
		cmd, global := newSets()
		positional, help, err := parseFlags(tt.args, cmd.fs, global.fs)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		values := cmd.String() + " " + global.String()
		if err != nil || help != tt.help || strings.Join(positional, "|") != strings.Join(tt.positional, "|") || values != tt.values {
			t.Errorf("%q: %q %v %q %v", tt.args, positional, help, values, err)
		}
	}
}

func TestCommandName(t *testing.T) {
	t.Parallel()
	global := newFlag2("global")
	global.fs.Bool("json", false, "")
	global.fs.Duration("timeout", 0, "")
	tests := []struct {
		args []string
		name string
		at   int
	}{
		{[]string{"lists"}, "lists", 0},
		{[]string{"--json", "lists"}, "lists", 1},
		{[]string{"--timeout", "5s", "lists"}, "lists", 2},
		{[]string{"--list", "12", "--dry-run", "sync"}, "sync", 3}, // sync's flags: --list takes a value, --dry-run none
		{[]string{"--list=12", "export"}, "export", 1},
		{[]string{"-", "lists"}, "lists", 1},
		{[]string{"--", "lists"}, "lists", 1},
		{[]string{"--json"}, "", -1},
		{nil, "", -1},
	}
	for _, tt := range tests {
		if name, at := commandName(tt.args, global.fs); name != tt.name || at != tt.at {
			t.Errorf("commandName(%q) = %q, %d, want %q, %d", tt.args, name, at, tt.name, tt.at)
		}
	}
}

// TestFlagNamesDistinct checks that no command defines a global flag's name, and that a
// name takes a value in every command or in none (commandName relies on it).
func TestFlagNamesDistinct(t *testing.T) {
	t.Parallel()
	globals := map[string]bool{"json": true, "fake": true, "quiet": true, "verbose": true, "timeout": true, "version": true, "h": true, "help": true}
	takes := map[string]bool{}
	seen := map[string]string{}
	for _, c := range commands() {
		fs := newFlag2(c.name).fs
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if globals[f.Name] {
				t.Errorf("%s defines the global flag --%s", c.name, f.Name)
			}
			if prev, ok := seen[f.Name]; ok && takes[f.Name] != !isBoolFlag(f) {
				t.Errorf("--%s takes a value in one of %s and %s only", f.Name, prev, c.name)
			}
			seen[f.Name], takes[f.Name] = c.name, !isBoolFlag(f)
		})
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		code int
		kind string
	}{
		{errors.New("boom"), exitFailure, "failure"},
		{usagef("sync", "bad"), exitUsage, "usage"},
		{fmt.Errorf("wrapped: %w", configError("unset")), exitUsage, "usage"},
		{&sendloop.APIError{Code: sendloop.ErrInvalidAPIKey}, exitUsage, "credentials"},
		{fmt.Errorf("x: %w", &sendloop.APIError{Code: sendloop.ErrIPNotAuthorized}), exitUsage, "credentials"},
		{&sendloop.APIError{Code: sendloop.ErrTrialExpired}, exitUsage, "credentials"},
		{&sendloop.APIError{Code: sendloop.ErrInvalidCredentials}, exitUsage, "credentials"},
		{&sendloop.APIError{Code: sendloop.ErrUserInactive}, exitUsage, "credentials"},
		{&sendloop.APIError{Code: sendloop.ErrListNotFound}, exitFailure, "failure"},
		{&legacy.Error{Code: legacy.ErrInvalidAPIKey}, exitUsage, "credentials"},
		{&legacy.Error{Code: legacy.ErrListNotFound}, exitFailure, "failure"},
		{&smtp.ReplyError{Command: "AUTH", Code: 535}, exitUsage, "credentials"},
		{&smtp.ReplyError{Command: "RCPT", Code: 550}, exitFailure, "failure"},
		{errors.Join(errors.New("3 rows were rejected"), &sendloop.APIError{Code: sendloop.ErrInvalidAPIKey}), exitUsage, "credentials"},
	}
	for _, tt := range tests {
		if code, kind := exitCode(tt.err); code != tt.code || kind != tt.kind {
			t.Errorf("exitCode(%v) = %d %s, want %d %s", tt.err, code, kind, tt.code, tt.kind)
		}
	}
}

func TestCLIMessage(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"sendloop: list.get: error 118":                       "list.get: error 118",
		"sendloop/smtp: AUTH rejected: 535":                   "AUTH rejected: 535",
		"sendloop: sendloop/smtp: dial: refused":              "dial: refused",
		"sending: sendloop/smtp: RCPT rejected":               "sending: RCPT rejected",
		"a\nsendloop/legacy: b":                               "a\nb",
		"ann@sendloop: x":                                     "ann@sendloop: x",
		"3 rows were rejected\nsendloop: list.get: error 104": "3 rows were rejected\nlist.get: error 104",
	}
	for in, want := range tests {
		if got := cliMessage(errors.New(in)); got != want {
			t.Errorf("cliMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCredentialErrors runs commands the service refuses for their key: exit code 2, and
// with --json the error as one JSON object on stderr.
func TestCredentialErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	badKey := []string{envAPIKey + "=sltest_wrong", envBaseURL + "=" + f.srv.URL}
	r := invocation{args: []string{"lists"}, env: badKey}.run(t)
	expect(t, r, exitUsage, nil, []string{"list.getlist: error 104"})
	if strings.Count(r.stderr, "sendloop:") != 1 {
		t.Errorf("doubled prefix: %s", r.stderr)
	}

	r = invocation{args: []string{"lists", "--json"}, env: badKey}.run(t)
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stderr), &got); err != nil || r.code != exitUsage {
		t.Fatalf("exit %d, stderr not one JSON object (%v): %s", r.code, err, r.stderr)
	}
	if got["kind"] != "credentials" || got["exit_code"] != float64(exitUsage) || got["api_error_code"] != float64(104) ||
		got["api_command"] != "list.getlist" || !strings.HasPrefix(got["error"].(string), "list.getlist: error 104") {
		t.Errorf("error object: %v", got)
	}

	ip := newFake(t)
	ip.srv.AllowIPs("192.0.2.1")
	r = ip.sendloop(t, "report", "list", "1")
	expect(t, r, exitUsage, nil, []string{"error 103"})
}

func TestJSONErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	tests := []struct {
		args []string
		env  []string
		want map[string]any
	}{
		{[]string{"--json", "lists"}, []string{}, map[string]any{"kind": "usage", "exit_code": 2.0}},
		{[]string{"--json"}, nil, map[string]any{"kind": "usage", "error": "no command given"}},
		{[]string{"sync", "--list", "x", "--json"}, nil, map[string]any{"kind": "usage", "exit_code": 2.0, "help": "sendloop help sync"}},
		{[]string{"--bogus", "--json", "lists"}, nil, map[string]any{"kind": "usage", "help": "sendloop help lists"}},
		{[]string{"--json", "call", "list.get", "ListID=99", "GetCustomFields=0"}, nil,
			map[string]any{"kind": "failure", "exit_code": 1.0, "api_error_code": 118.0, "api_command": "list.get"}},
	}
	for _, tt := range tests {
		env := tt.env
		if env == nil {
			env = f.env
		}
		r := invocation{args: tt.args, env: env}.run(t)
		var got map[string]any
		if err := json.Unmarshal([]byte(r.stderr), &got); err != nil {
			t.Errorf("%q: stderr is not a JSON object: %v\n%s", tt.args, err, r.stderr)
			continue
		}
		if r.code != int(got["exit_code"].(float64)) || got["error"] == "" {
			t.Errorf("%q: exit %d, object %v", tt.args, r.code, got)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", tt.args, k, got[k], v)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	for _, args := range [][]string{{"version"}, {"--version"}, {"lists", "--version"}} {
		r := f.sendloop(t, args...)
		expect(t, r, exitOK, []string{"sendloop " + sendloop.Version}, nil)
	}
	r := f.sendloop(t, "--version", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v["version"] != sendloop.Version {
		t.Errorf("--version --json: %v %s", err, r.stdout)
	}

	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		stamp stamp
		info  *debug.BuildInfo
		ok    bool
		want  string
	}{
		{stamp{}, nil, false, sendloop.Version},
		// go install …@v1.4.0: no VCS settings.
		{stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, true, "v1.4.0"},
		// A build from a tagged checkout with Go 1.24 or later.
		{stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, true,
			"v1.4.0 (revision 0123456789ab)"},
		// A release build: the linker flags win over the build info.
		{stamp{"1.4.0", rev}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "1.4.0 (revision 0123456789ab)"},
		{stamp{"1.4.0", ""}, nil, false, "1.4.0"},
		{stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, sendloop.Version},
		{stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}}, true,
			sendloop.Version + " (revision 0123456789ab)"},
		{stamp{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, true,
			sendloop.Version + " (revision 0123456789ab, modified)"},
	}
	for _, tt := range tests {
		if got := readVersion(tt.stamp, tt.info, tt.ok).String(); got != tt.want {
			t.Errorf("readVersion = %q, want %q", got, tt.want)
		}
	}
}

func TestSnakeCase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ListID": "list_id", "OptInMode": "opt_in_mode", "TotalSPAMComplaints": "total_spam_complaints",
		"SubscriptionIP": "subscription_ip", "EmailAddress": "email_address", "UniqueOpensRatio": "unique_opens_ratio",
		"Name": "name", "HTMLContent": "html_content", "Field2Value": "field2_value", "already_snake": "already_snake",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClientFromTheEnvironment: the tool builds its client as NewClientFromEnv does, and
// adds what to do to the SDK's refusal of a base URL; nothing it says holds a password.
func TestClientFromTheEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base, insecureEnv string
		err               []string // parts of the error; none for a client
	}{
		{base: ""},
		{base: "https://acme.sendloop.com"},
		{base: "https://proxy.example.com/sendloop"}, // a prefix is kept
		{base: "http://127.0.0.1:8080"},
		{base: "http://app.localhost:8080"},
		{base: "http://fake:8080", err: []string{"SENDLOOP_BASE_URL: refusing plain http to fake:8080", "set SENDLOOP_INSECURE_HTTP=1"}},
		{base: "http://fake:8080", insecureEnv: "1"},
		{base: "http://fake:8080", insecureEnv: "0", err: []string{"refusing plain http"}},
		{base: "http://fake:8080", insecureEnv: "maybe", err: []string{`SENDLOOP_INSECURE_HTTP="maybe" is not a boolean`}},
		{base: "acme.sendloop.com", err: []string{"SENDLOOP_BASE_URL: base URL", "must be an absolute http(s) URL", "e.g. https://acme.sendloop.com"}},
		{base: "https://user:secret@acme.sendloop.com", err: []string{"SENDLOOP_BASE_URL: base URL must not carry credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.base+" "+tt.insecureEnv, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{envAPIKey: "test-key", envBaseURL: tt.base, envInsecureHTTP: tt.insecureEnv}
			a := &app{env: &env{getenv: func(k string) string { return vars[k] }}}
			c, err := a.client(context.Background())
			if len(tt.err) == 0 {
				require.NoError(t, err)
				assert.NotNil(t, c)
				return
			}
			require.Error(t, err)
			code, _ := exitCode(err)
			assert.Equal(t, exitUsage, code)
			for _, part := range tt.err {
				assert.Contains(t, cliMessage(err), part)
			}
			assert.NotContains(t, err.Error(), "secret")
		})
	}
}

// TestExportExcel exports cells that a spreadsheet would run as formulas.
func TestExportExcel(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c, err := sendloop.NewClient(f.srv.APIKey, sendloop.WithBaseURL(f.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	rows := []sendloop.ImportSubscriber{
		{EmailAddress: "eve@example.com", Fields: sendloop.CustomFields{1: `=HYPERLINK("http://x","y")`, 2: "+1"}},
		{EmailAddress: "mal@example.com", Fields: sendloop.CustomFields{1: "@SUM(A1)", 2: "-5"}},
		{EmailAddress: "tab@example.com", Fields: sendloop.CustomFields{1: "\tx", 2: "\ry"}},
	}
	if _, err := c.Subscribers.Import(testContext(t), demoListID, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
		t.Fatal(err)
	}
	// A custom field's name is a header cell: anyone with access to the list names it.
	if _, err := f.srv.DefineCustomField(demoListID, sendlooptest.CustomField{Name: "=SUM(1+1)"}); err != nil {
		t.Fatal(err)
	}
	r := f.sendloop(t, "export", "--list", "1", "--excel")
	expect(t, r, exitOK, nil, nil)
	if !strings.HasPrefix(r.stdout, "\ufeffEmailAddress,First name,Plan,'=SUM(1+1),") {
		t.Errorf("no byte-order mark, or a header cell not neutralised: %q", r.stdout[:60])
	}
	for _, want := range []string{`eve@example.com,"'=HYPERLINK(""http://x"",""y"")",'+1,`, "mal@example.com,'@SUM(A1),'-5,",
		"tab@example.com,'\tx,\"'\ry\",", "ann@example.com,Ann,pro,"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lacks %q:\n%s", want, r.stdout)
		}
	}
	plain := f.sendloop(t, "export", "--list", "1")
	if strings.Contains(plain.stdout, "'") || strings.HasPrefix(plain.stdout, "\ufeff") {
		t.Errorf("the plain export changed: %s", plain.stdout)
	}
}

// TestFakeListenAny serves the fake on every address: a warning, settings for the name given
// with --tls-name, and SENDLOOP_INSECURE_HTTP. The API is then reached by that name through
// an HTTP proxy on loopback (the fake itself), so no packet leaves the machine: without
// SENDLOOP_INSECURE_HTTP the tool refuses plain http to it, with it the tool works.
func TestFakeListenAny(t *testing.T) {
	t.Parallel()
	p := startFake(t, true, "--listen-any", "--addr", "0.0.0.0:0", "--smtp-addr", "0.0.0.0:0", "--tls-name", "sendloop-fake.test")
	settings := map[string]string{}
	for _, kv := range p.env {
		k, v, _ := strings.Cut(kv, "=")
		settings[k] = v
	}
	base := settings[envBaseURL]
	if !strings.HasPrefix(base, "http://sendloop-fake.test:") || settings[envSMTPHost] != "sendloop-fake.test" || settings[envInsecureHTTP] != "1" {
		t.Fatalf("settings: %v", settings)
	}
	waitFor(t, "the warning", func() bool { return strings.Contains(p.stderr.String(), "warning: the fake listens beyond this host") })
	port := strings.TrimPrefix(base, "http://sendloop-fake.test:")
	env := []string{envAPIKey + "=" + settings[envAPIKey], envBaseURL + "=" + base, "HTTP_PROXY=http://127.0.0.1:" + port}
	r := invocation{args: []string{"lists"}, env: env}.run(t)
	expect(t, r, exitUsage, nil, []string{"refusing plain http to sendloop-fake.test:" + port, envInsecureHTTP + "=1"})
	// A process: net/http reads HTTP_PROXY from the process's environment.
	r = invocation{args: []string{"lists"}, env: append(env, envInsecureHTTP+"=1"), process: true}.run(t)
	expect(t, r, exitOK, []string{"Demo"}, nil)

	// The control API: printed under the --tls-name, which it accepts as a Host; the
	// warning says its key and the inbox cross the network in clear.
	waitFor(t, "the control API's warning", func() bool {
		return strings.Contains(p.stderr.String(), "SENDLOOP_FAKE_KEY) and the inbox URL (SENDLOOP_FAKE_INBOX) cross the network in clear")
	})
	if got, want := settings[envFakeURL], base+"/_fake"; got != want {
		t.Errorf("%s=%q, want %q", envFakeURL, got, want)
	}
	hc := &http.Client{Transport: testkit.Transport()}
	for host, want := range map[string]int{"sendloop-fake.test:" + port: http.StatusOK, "127.0.0.1:" + port: http.StatusOK,
		"rebound.example:" + port: http.StatusForbidden} {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+"/_fake/lists", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+settings[envFakeKey])
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestSyncRealCSVFiles syncs the files spreadsheets write, generated here.
func TestSyncRealCSVFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	utf16le := func(s string) string {
		b := []byte{0xFF, 0xFE}
		for _, r := range s {
			b = append(b, byte(r), byte(r>>8)) // the fixtures are in the BMP
		}
		return string(b)
	}
	latin1 := func(s string) string {
		b := make([]byte, 0, len(s))
		for _, r := range s {
			b = append(b, byte(r))
		}
		return string(b)
	}
	const rows = "dan@example.com;Dané;  pro  \r\nann@example.com;Ann;pro\r\n"
	tests := []struct {
		name    string
		content string
		flags   []string
		code    int
		stdout  []string
		stderr  []string
	}{
		{"UTF-8 with BOM and sep=", "\ufeffsep=;\r\nE-mail;First name;Plan\r\n" + rows, nil, exitOK,
			[]string{`"add": 1`, `"unchanged": 1`}, []string{`utf-8, semicolon-separated, with a byte-order mark, after a "sep=" line`}},
		{"UTF-16LE with CRLF", utf16le("Email Address\tFirst name\tPlan\r\n" + strings.ReplaceAll(rows, ";", "\t")), nil, exitOK,
			[]string{`"add": 1`, `"First name": "Dané"`, `"Plan": "pro"`}, []string{"utf-16le, tab-separated"}},
		{"latin1 refused", latin1("email_address;Prénom\r\n"), nil, exitUsage, nil, []string{"not UTF-8", "--encoding latin1"}},
		{"latin1 named", latin1("email_address;First name;Plan\r\n" + rows), []string{"--encoding", "latin1"}, exitOK,
			[]string{`"First name": "Dané"`}, nil},
		{"--no-trim", "Email;First name;Plan\n" + rows, []string{"--no-trim"}, exitOK, []string{`"Plan": "  pro  "`}, nil},
		{"--column", "Courriel;Prénom;Offre\n" + rows, []string{"--column", "Courriel=EmailAddress", "--column", "Prénom=First name", "--column=Offre=CustomField2"}, exitOK,
			[]string{`"Prénom": "Dané"`}, []string{`"Prénom" is CustomField1 (First name)`}},
		{"unknown column", "Email;First name;Plan;Notes\n" + rows, nil, exitUsage, nil, []string{`unknown column \"Notes\"`, "--ignore-unknown-columns"}},
		{"--ignore-column", "Email;First name;Plan;Notes\ndan@example.com;Dan;pro;x\n", []string{"--ignore-column", "notes"}, exitOK, []string{`"add": 1`}, []string{"ignored: Notes"}},
		{"--ignore-unknown-columns", "Email;First name;Plan;Notes;\ndan@example.com;Dan;pro;x;\n", []string{"--ignore-unknown-columns"}, exitOK, []string{`"add": 1`}, nil},
		{"--delimiter", "Email|Plan\ndan@example.com|pro\n", []string{"--delimiter", "|"}, exitOK, []string{`"add": 1`}, []string{"pipe-separated"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			path := writeFile(t, dir, fmt.Sprintf("list%d.csv", i), tt.content)
			args := append([]string{"--json", "sync", "--list", "1", "--csv", path, "--dry-run"}, tt.flags...)
			r := f.sendloop(t, args...)
			expect(t, r, tt.code, tt.stdout, tt.stderr)
		})
	}
}

// flag2 is a small flag set for the parser's tests: cmd-like (--n int, --s string) or
// global-like (--v, --j bools).
type flag2 struct {
	fs   *flag.FlagSet
	n    *int
	s    *string
	v, j *bool
}

func newFlag2(name string) *flag2 {
	f := &flag2{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	if name == "cmd" {
		f.n, f.s = f.fs.Int("n", 0, ""), f.fs.String("s", "", "")
	} else if name == "global" {
		f.v, f.j = f.fs.Bool("v", false, ""), f.fs.Bool("j", false, "")
	}
	return f
}

func (f *flag2) String() string {
	if f.n != nil {
		return fmt.Sprintf("n=%d s=%s", *f.n, *f.s)
	}
	return fmt.Sprintf("v=%v j=%v", *f.v, *f.j)
}

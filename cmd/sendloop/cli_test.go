package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestHelp(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"overview", []string{"help"}, "help"},
		{"-h", []string{"-h"}, "help"},
		{"--help", []string{"--help"}, "help"},
		{"help help", []string{"help", "help"}, "help"},
	}
	for _, c := range commands() {
		tests = append(tests,
			struct {
				name   string
				args   []string
				golden string
			}{"help " + c.name, []string{"help", c.name}, "help_" + c.name},
			struct {
				name   string
				args   []string
				golden string
			}{c.name + " -h", []string{c.name, "-h"}, "help_" + c.name})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.sendloop(t, tt.args...)
			expect(t, r, exitOK, nil, nil)
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
			golden(t, tt.golden, r.stdout)
		})
	}
}

// TestVersionFlag: --version prints sendloop.Version (a test binary has no release
// version stamped in, nor a revision), so that a release changes the version in one place.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	// A process: main's wiring of the streams and the exit code.
	r := invocation{args: []string{"--version"}, process: true}.run(t)
	expect(t, r, exitOK, nil, nil)
	if want := "sendloop " + sendloop.Version + "\n"; r.stdout != want || r.stderr != "" {
		t.Errorf("stdout %q, stderr %q; want %q and nothing", r.stdout, r.stderr, want)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "a.csv", "EmailAddress\nann@example.com\n")
	tests := []struct {
		name   string
		args   []string
		env    []string // nil: the fake's
		stdin  string
		stderr []string
	}{
		{"no command", nil, nil, "", []string{"Usage:", "Commands:"}},
		{"unknown command", []string{"frobnicate"}, nil, "", []string{`unknown command "frobnicate"`, "sendloop help"}},
		{"unknown global flag", []string{"--bogus", "lists"}, nil, "", []string{"unknown flag --bogus"}},
		{"unknown flag after the arguments", []string{"report", "list", "1", "--bogus"}, nil, "", []string{"unknown flag --bogus", "sendloop help report"}},
		{"flag without its value", []string{"export", "--list"}, nil, "", []string{"flag --list needs a value"}},
		{"version with an argument", []string{"version", "x"}, nil, "", []string{"version takes no arguments"}},
		{"negative timeout", []string{"--timeout", "-1s", "lists"}, nil, "", []string{"--timeout cannot be negative"}},
		{"help for an unknown command", []string{"help", "nope"}, nil, "", []string{`unknown command "nope"`}},
		{"help with two names", []string{"help", "sync", "lists"}, nil, "", []string{"help takes one command name"}},
		{"lists with an argument", []string{"lists", "extra"}, nil, "", []string{"lists takes no arguments"}},
		{"no API key", []string{"lists"}, []string{}, "", []string{"SENDLOOP_API_KEY is not set"}},
		{"a key that cannot be real", []string{"lists"}, []string{"SENDLOOP_API_KEY=k"}, "", []string{"the API key is shorter than 8 characters", "check SENDLOOP_API_KEY"}},
		{"plain http base URL", []string{"lists"}, []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_BASE_URL=http://example.com"}, "", []string{"refusing plain http", "SENDLOOP_INSECURE_HTTP=1"}},
		{"base URL with the API's path", []string{"lists"}, []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_BASE_URL=https://acme.sendloop.com/api/v3/"}, "", []string{"SENDLOOP_BASE_URL: base URL https://acme.sendloop.com/api/v3/ ends in the API's own path", "give the host (and any proxy prefix) only, https://acme.sendloop.com;"}},
		{"base URL of the v4 API", []string{"lists"}, []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_BASE_URL=https://acme.sendloop.com/api/v4"}, "", []string{"give the host (and any proxy prefix) only, https://acme.sendloop.com;"}},
		{"base URL of the legacy API", []string{"lists"}, []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_BASE_URL=https://example.com/proxy/api/index.php"}, "", []string{"give the host (and any proxy prefix) only, https://example.com/proxy;"}},
		{"bad SENDLOOP_INSECURE_HTTP", []string{"lists"}, []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_INSECURE_HTTP=perhaps"}, "", []string{`SENDLOOP_INSECURE_HTTP="perhaps"`}},
		{"export --excel in JSON", []string{"export", "--list", "1", "--excel", "--format", "json"}, nil, "", []string{"--excel writes CSV"}},
		{"fake --tls-name on loopback", []string{"fake", "--tls-name", "x.test"}, nil, "", []string{"--tls-name goes with --listen-any"}},
		{"fake with a bad --tls-name", []string{"fake", "--listen-any", "--tls-name", "a b"}, nil, "", []string{`--tls-name "a b" is not a host name`}},
		{"sync without --list", []string{"sync", "--csv", csvPath}, nil, "", []string{"--list ID is required", "sendloop help sync"}},
		{"sync without --csv", []string{"sync", "--list", "1"}, nil, "", []string{"--csv FILE is required"}},
		{"sync with a bad --list", []string{"sync", "--list", "x", "--csv", csvPath}, nil, "", []string{`invalid value "x" for --list: want a whole number`}},
		{"sync with a bad --encoding", []string{"sync", "--list", "1", "--csv", csvPath, "--encoding", "ebcdic"}, nil, "", []string{`--encoding: unknown encoding "ebcdic"`}},
		{"sync with a bad --delimiter", []string{"sync", "--list", "1", "--csv", csvPath, "--delimiter", "ab"}, nil, "", []string{`--delimiter: "ab" is not a delimiter`}},
		{"sync with a bad --column", []string{"sync", "--list", "1", "--csv", csvPath, "--column", "Mail"}, nil, "", []string{`--column: "Mail" is not SOURCE=TARGET`}},
		{"sync reading stdin", []string{"sync", "--list", "1", "--csv", "-"}, nil, "", []string{"it cannot read stdin"}},
		{"sync with a missing file", []string{"sync", "--list", "1", "--csv", filepath.Join(dir, "nope.csv")}, nil, "", []string{"no such file"}},
		{"sync with an argument", []string{"sync", "--list", "1", "--csv", csvPath, "extra"}, nil, "", []string{`unexpected argument "extra"`}},
		{"sync with a zero batch", []string{"sync", "--list", "1", "--csv", csvPath, "--batch-size", "0"}, nil, "", []string{"--batch-size must be at least 1"}},
		{"sync with rejects onto the CSV", []string{"sync", "--list", "1", "--csv", csvPath, "--rejects", csvPath}, nil, "", []string{"--rejects names the CSV file itself"}},
		{"export without --list", []string{"export"}, nil, "", []string{"--list ID is required"}},
		{"export in xml", []string{"export", "--list", "1", "--format", "xml"}, nil, "", []string{"--format must be csv or json"}},
		{"export with no page at a time", []string{"export", "--list", "1", "--concurrency", "0"}, nil, "", []string{"--concurrency must be at least 1"}},
		{"call without a command", []string{"call"}, nil, "", []string{"call needs a command name"}},
		{"call with a bare parameter", []string{"call", "list.get", "ListID"}, nil, "", []string{`parameter "ListID" is not key=value`}},
		{"call with the key as a parameter", []string{"call", "list.get", "APIKey=x"}, nil, "", []string{"the API key comes from SENDLOOP_API_KEY"}},
		{"call in yaml", []string{"call", "--format", "yaml", "list.getlist"}, nil, "", []string{"--format must be json, xml or php"}},
		{"report without a kind", []string{"report", "7"}, nil, "", []string{"use 'report campaign ID'"}},
		{"report with a bad ID", []string{"report", "campaign", "abc"}, nil, "", []string{`campaign ID "abc" is not a positive number`}},
		{"send without --from", []string{"send", "--to", "b@example.com", "--subject", "s", "--text", "-"}, nil, "x", []string{"--from is required"}},
		{"send without --to", []string{"send", "--from", "a@example.com", "--subject", "s", "--text", "-"}, nil, "x", []string{"--to is required"}},
		{"send without a body", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s"}, nil, "", []string{"give a body"}},
		{"send reading stdin twice", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-", "--html", "-"}, nil, "", []string{"cannot both read stdin"}},
		{"send with bad merge vars", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-", "--merge-vars", "[1]"}, nil, "x", []string{"--merge-vars must be a JSON object"}},
		{"send with bad custom args", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-", "--custom-args", `{"a":[1]}`}, nil, "x", []string{"--custom-args must be a JSON object of scalars"}},
		{"send with a bad address", []string{"--fake", "send", "--from", "nobody", "--to", "b@example.com", "--subject", "s", "--text", "-"}, nil, "x", []string{`invalid From address "nobody"`}},
		{"send with a missing file", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", filepath.Join(dir, "nope.txt")}, nil, "", []string{"--text:", "no such file"}},
		{"send without a relay", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-"}, nil, "x", []string{"SENDLOOP_SMTP_HOST is not set"}},
		{"send with a bad port", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-"}, []string{"SENDLOOP_SMTP_HOST=localhost", "SENDLOOP_SMTP_PORT=smtp"}, "x", []string{`SENDLOOP_SMTP_PORT="smtp" is not a port number`}},
		{"send without relay credentials", []string{"send", "--from", "a@example.com", "--to", "b@example.com", "--subject", "s", "--text", "-"}, []string{"SENDLOOP_SMTP_HOST=localhost"}, "x", []string{"SENDLOOP_SMTP_USER and SENDLOOP_SMTP_PASSWORD must be set"}},
		{"fake on every interface", []string{"fake", "--addr", "0.0.0.0:0"}, nil, "", []string{"loopback addresses only", "unless --listen-any"}},
		{"fake on a public host", []string{"fake", "--smtp-addr", "example.com:25"}, nil, "", []string{"loopback addresses only"}},
		{"fake under --fake", []string{"--fake", "fake"}, nil, "", []string{"--fake has no meaning"}},
		{"fake with a latency that is no duration", []string{"fake", "--latency", "fast"}, nil, "", []string{`--latency: "fast" is not a duration`}},
		{"fake with a jitter that is no duration", []string{"fake", "--latency", "50ms,x"}, nil, "", []string{`--latency: jitter "x" is not a duration`}},
		{"fake with a negative latency", []string{"fake", "--latency", "-5ms"}, nil, "", []string{"a latency cannot be negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := tt.env
			if env == nil {
				env = f.env
			}
			r := invocation{args: tt.args, env: env, stdin: tt.stdin}.run(t)
			expect(t, r, exitUsage, nil, tt.stderr)
			if r.stdout != "" {
				t.Errorf("stdout of a usage error: %s", r.stdout)
			}
			if strings.Contains(r.stderr, "WithInsecureHTTP") || strings.Contains(r.stderr, "sendloop: sendloop") {
				t.Errorf("not in the tool's words: %s", r.stderr)
			}
		})
	}
}

func TestLists(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	if _, err := f.srv.StartRelay(t); err != nil { // unrelated state must not show
		t.Fatal(err)
	}
	for _, json := range []bool{false, true} {
		args, name := []string{"lists"}, "lists"
		if json {
			args, name = []string{"--json", "lists"}, "lists_json"
		}
		r := f.sendloop(t, args...)
		expect(t, r, exitOK, nil, nil)
		golden(t, name, r.stdout)
	}
}

func TestCall(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	t.Run("pretty JSON", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "call", "list.get", "ListID=1", "GetCustomFields=1")
		expect(t, r, exitOK, nil, nil)
		golden(t, "call_list_get", r.stdout)
	})
	t.Run("array parameters and repeated keys", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "call", "campaign.create", "CampaignName=Second", "FromName=Demo", "FromEmail=demo@example.com",
			"ReplyToName=Demo", "ReplyToEmail=demo@example.com", "Subject=Hi", "PlainContent=Hi %Link:Unsubscribe%",
			"TargetListIDs[]=1")
		expect(t, r, exitOK, []string{`"CampaignID": 2`}, nil)
	})
	t.Run("xml", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "call", "--format", "xml", "list.getlist")
		expect(t, r, exitOK, []string{"<Name>Demo</Name>"}, nil)
	})
	t.Run("service error", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "call", "list.get", "ListID=99", "GetCustomFields=0")
		expect(t, r, exitFailure, nil, []string{"sendloop: list.get: error 118"})
		if strings.Count(r.stderr, "sendloop: ") != 1 {
			t.Errorf("the error repeats its prefix: %s", r.stderr)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "call", "list.frobnicate")
		expect(t, r, exitFailure, nil, []string{"error 101"})
	})
}

func TestReport(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"report_campaign", []string{"report", "campaign", "1"}},
		{"report_campaign_json", []string{"--json", "report", "campaign", "1"}},
		{"report_list", []string{"report", "list", "1"}},
		{"report_list_json", []string{"--json", "report", "list", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			r := f.sendloop(t, tt.args...)
			expect(t, r, exitOK, nil, nil)
			golden(t, tt.golden, r.stdout)
		})
	}
	t.Run("unknown campaign", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "report", "campaign", "99")
		expect(t, r, exitFailure, nil, []string{"report.campaign.overall"})
	})
}

func TestExport(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"export_csv", []string{"export", "--list", "1"}},
		{"export_json", []string{"export", "--list", "1", "--format", "json"}},
		{"export_json", []string{"--json", "export", "--list", "1"}},
		{"export_csv", []string{"--json", "export", "--list", "1", "--format", "csv"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := f.sendloop(t, tt.args...)
			expect(t, r, exitOK, nil, []string{"exported 3 subscribers of list 1"})
			golden(t, tt.golden, r.stdout)
		})
	}
	t.Run("unknown list", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "export", "--list", "99")
		expect(t, r, exitFailure, nil, []string{"error 118"})
	})
	t.Run("quiet", func(t *testing.T) {
		t.Parallel()
		r := f.sendloop(t, "--quiet", "export", "--list", "1")
		expect(t, r, exitOK, []string{"ann@example.com"}, nil)
		if r.stderr != "" {
			t.Errorf("--quiet wrote on stderr: %s", r.stderr)
		}
	})
}

// TestExportStreamsPages exports a list of several pages, its fields named so that the
// columns fall back to their keys, and checks every JSON line.
func TestExportStreamsPages(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	c, err := sendloop.NewClient(f.srv.APIKey, sendloop.WithBaseURL(f.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	listID, err := c.Lists.Create(testContext(t), sendloop.ListCreateParams{Name: "Big", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "Name"})
	b, _ := f.srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "name"})
	e, _ := f.srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "EmailAddress"})
	const n = 250
	rows := make([]sendloop.ImportSubscriber, n)
	for i := range rows {
		rows[i] = sendloop.ImportSubscriber{EmailAddress: emailN(i), Fields: sendloop.CustomFields{a: "a", b: "b", e: "e"}}
	}
	if _, err := c.Subscribers.Import(testContext(t), listID, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
		t.Fatal(err)
	}
	r := f.sendloop(t, "--json", "export", "--list", strconv.Itoa(listID))
	expect(t, r, exitOK, nil, []string{"exported 250 subscribers"})
	// Pages read ahead, or one after the other: the same lines in the same order.
	for _, n := range []string{"1", "2", "16"} {
		again := invocation{args: []string{"--json", "export", "--list", strconv.Itoa(listID), "--concurrency", n}, env: f.env}.run(t)
		expect(t, again, exitOK, nil, []string{"exported 250 subscribers"})
		if again.stdout != r.stdout {
			t.Errorf("export --concurrency %s differs from the default's", n)
		}
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, line := range lines {
		var rec struct {
			Email  string            `json:"email_address"`
			Fields map[string]string `json:"custom_fields"`
			ID     int               `json:"subscriber_id"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if rec.Email != emailN(i) || rec.ID == 0 || rec.Fields["CustomField"+strconv.Itoa(a)] != "a" ||
			rec.Fields["CustomField"+strconv.Itoa(b)] != "b" || rec.Fields["CustomField"+strconv.Itoa(e)] != "e" {
			t.Fatalf("line %d: %s", i+1, line)
		}
	}
}

// TestServiceUnreachable runs commands against a closed port.
func TestServiceUnreachable(t *testing.T) {
	t.Parallel()
	env := []string{"SENDLOOP_API_KEY=test-key", "SENDLOOP_BASE_URL=http://" + testkit.RefusingAddr(t)}
	r := invocation{args: []string{"--timeout", "5s", "lists"}, env: env}.run(t)
	expect(t, r, exitFailure, nil, []string{"list.getlist"})
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// listReportJSON is the --json report of send --recipients.
type listReportJSON struct {
	Rows          int            `json:"rows"`
	Sent          int            `json:"sent"`
	Skipped       map[string]int `json:"skipped"`
	Refused       int            `json:"refused"`
	Unknown       int            `json:"unknown"`
	Deferred      int            `json:"deferred"`
	Rejected      int            `json:"rejected"`
	NotAttempted  int            `json:"not_attempted"`
	Suppressed    int            `json:"suppressed"`
	NotSubscribed int            `json:"not_subscribed"`
	NotSent       []listRowJSON  `json:"suppressed_rows"`
	NotMembers    []listRowJSON  `json:"not_subscribed_rows"`
	RefusedRows   []struct {
		Line   int    `json:"line"`
		Email  string `json:"email"`
		Reason string `json:"reason"`
	} `json:"refused_rows"`
	UnknownRows []struct {
		Email string `json:"email"`
	} `json:"unknown_rows"`
}

// listRowJSON is a row a --json report lists.
type listRowJSON struct {
	Line   int    `json:"line"`
	Email  string `json:"email"`
	Reason string `json:"reason"`
}

func (r listReportJSON) total() int {
	n := r.Sent + r.Refused + r.Unknown + r.Deferred + r.Rejected + r.NotAttempted + r.Suppressed + r.NotSubscribed
	for _, c := range r.Skipped {
		n += c
	}
	return n
}

func decodeListReport(t *testing.T, stdout string) listReportJSON {
	t.Helper()
	var rep listReportJSON
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json report: %v\n%s", err, stdout)
	}
	if rep.total() != rep.Rows {
		t.Errorf("the counts add up to %d, not the %d rows: %+v", rep.total(), rep.Rows, rep)
	}
	return rep
}

func TestSendRecipients(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "E-mail;Name;First name;Code\n"+
		"ann@example.net;Ann Lee;Ann;A1\n"+
		"BOB@example.net;;Bob;B 2\n"+
		"not-an-address;;X;X\n"+
		"cat@example.net;;Cat;C3\n"+
		"ann@example.net;;Ann;A4\n")
	text := writeFile(t, dir, "body.txt", "Hi {{FIRST}}, code %Code%, season {{SEASON}}")
	logo := writeFile(t, dir, "logo.png", "\x89PNGlogo")
	journal := filepath.Join(dir, "journal")
	args := []string{"--json", "send", "--from", "news@example.com", "--subject", "News for {{FIRST}}", "--text", text,
		"--html", "-", "--inline", logo, "--no-unsubscribe", "--recipients", csv, "--journal", journal, "--column", "First name=FIRST",
		"--var", "SEASON=spring", "--list-unsubscribe", "https://example.com/u?c={{Code}}&n={{FIRST}}",
		"--header", "X-Code: {{Code}}", "--header", "X-To: {{E-mail}}"}
	html := `<p>Hi {{FIRST}}</p><img src="cid:logo.png">`

	relay.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "cat@example.net", Code: 550, Message: "5.1.1 no such user"})
	// The messages go out on several relay connections at once.
	r := invocation{args: args, env: env, stdin: html}.run(t)
	expect(t, r, exitFailure, nil, []string{"not sent"})
	rep := decodeListReport(t, r.stdout)
	if rep.Rows != 5 || rep.Sent != 2 || rep.Refused != 1 || rep.Rejected != 2 || len(rep.RefusedRows) != 1 || rep.RefusedRows[0].Line != 5 ||
		!strings.Contains(rep.RefusedRows[0].Reason, "550") {
		t.Errorf("first run: %+v", rep)
	}
	msgs := relay.Messages()
	if len(msgs) != 2 {
		t.Fatalf("relay got %d messages, want 2", len(msgs))
	}
	for _, m := range msgs {
		switch m.EnvelopeTo[0] {
		case "ann@example.net":
			if m.RenderedSubject != "News for Ann" || m.RenderedText != "Hi Ann, code A1, season spring" || m.Header.Get("To") != `"Ann Lee" <ann@example.net>` ||
				m.Header.Get("List-Unsubscribe") != "<https://example.com/u?c=A1&n=Ann>" || m.Header.Get("X-Code") != "A1" || m.Header.Get("X-To") != "ann@example.net" ||
				len(m.Inline) != 1 || m.Inline[0].ContentID != "logo.png" {
				t.Errorf("ann's message: subject %q text %q To %q List-Unsubscribe %q X-Code %q inline %+v", m.RenderedSubject, m.RenderedText,
					m.Header.Get("To"), m.Header.Get("List-Unsubscribe"), m.Header.Get("X-Code"), m.Inline)
			}
		case "BOB@example.net":
			if m.Header.Get("List-Unsubscribe") != "<https://example.com/u?c=B%202&n=Bob>" {
				t.Errorf("bob's List-Unsubscribe %q", m.Header.Get("List-Unsubscribe"))
			}
		default:
			t.Errorf("a message to %v", m.EnvelopeTo)
		}
	}

	// The rerun, with a row added: only it is sent; the refused row is skipped until asked.
	csv2 := writeFile(t, dir, "list.csv", strings.Replace(readFileT(t, csv), "cat@", "dan@example.net;;Dan;D5\ncat@", 1))
	args2 := append(append([]string(nil), args...), "--no-unsubscribe", "--recipients", csv2)
	r = invocation{args: args2, env: env, stdin: html}.run(t)
	expect(t, r, exitFailure, nil, nil)
	rep = decodeListReport(t, r.stdout)
	if rep.Rows != 6 || rep.Sent != 1 || rep.Skipped["already_sent"] != 2 || rep.Skipped["refused"] != 1 || rep.Refused != 0 {
		t.Errorf("rerun: %+v", rep)
	}
	r = invocation{args: append(args2, "--resend-refused"), env: env, stdin: html}.run(t)
	rep = decodeListReport(t, r.stdout)
	if rep.Sent != 1 || rep.Skipped["already_sent"] != 3 || rep.Rejected != 2 {
		t.Errorf("resend refused: %+v", rep)
	}
	counts := map[string]int{}
	for _, m := range relay.Messages() {
		counts[strings.ToLower(m.EnvelopeTo[0])]++
	}
	for addr, n := range counts {
		if n != 1 {
			t.Errorf("%s got %d messages", addr, n)
		}
	}
	if len(counts) != 4 {
		t.Errorf("messages to %v, want ann, bob, cat and dan", counts)
	}

	// Another message with the same journal is refused, before anything is sent.
	other := append(append([]string(nil), args2...), "--subject", "Other")
	r = invocation{args: other, env: env, stdin: html}.run(t)
	expect(t, r, exitUsage, nil, []string{"another message"})
	if strings.Contains(r.stderr, "for usage") {
		t.Errorf("a journal of another message is no usage mistake:\n%s", r.stderr)
	}
}

func TestSendRecipientsShards(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", recipientRows(40))
	text := writeFile(t, dir, "body.txt", "Hi")
	sent := 0
	for k := 1; k <= 3; k++ {
		r := invocation{args: []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", text,
			"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, fmt.Sprintf("j%d", k)), "--shard", fmt.Sprintf("%d/3", k)},
			env: env}.run(t) // several relay connections at once
		expect(t, r, exitOK, nil, nil)
		rep := decodeListReport(t, r.stdout)
		sent += rep.Sent
		if rep.Sent+rep.Skipped["shard"] != 40 {
			t.Errorf("shard %d/3: %+v", k, rep)
		}
	}
	counts := map[string]int{}
	for _, m := range relay.Messages() {
		counts[m.EnvelopeTo[0]]++
	}
	if sent != 40 || len(counts) != 40 {
		t.Errorf("3 shards sent %d messages to %d addresses, want 40", sent, len(counts))
	}
	// A journal of shard 1 used for shard 2 is refused.
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "S", "--text", text,
		"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j1"), "--shard", "2/3"}, env: env}.run(t)
	expect(t, r, exitUsage, nil, []string{"shard"})
}

func TestSendRecipientsUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,First name\nann@example.net,Ann\n")
	text := writeFile(t, dir, "body.txt", "Hi")
	base := []string{"--fake", "send", "--from", "news@example.com", "--subject", "S", "--text", text, "--no-unsubscribe", "--recipients", csv}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no journal", nil, "--journal"},
		{"a column with a space", []string{"--journal", filepath.Join(dir, "j")}, "--column 'First name=First_name'"},
		{"bad shard", []string{"--journal", filepath.Join(dir, "j"), "--column", "First name=FIRST", "--shard", "0/3"}, "--shard"},
		{"unknown placeholder", []string{"--journal", filepath.Join(dir, "j"), "--column", "First name=FIRST", "--header", "X-A: {{NOPE}}"}, "{{NOPE}}"},
		{"with --to", []string{"--journal", filepath.Join(dir, "j"), "--to", "b@example.net"}, "--to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := invocation{args: append(append([]string(nil), base...), tt.args...), env: []string{}}.run(t)
			expect(t, r, exitUsage, nil, []string{tt.want})
		})
	}
	r := invocation{args: []string{"--fake", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "S", "--text", text, "--journal", "j"}, env: []string{}}.run(t)
	expect(t, r, exitUsage, nil, []string{"go with --recipients"})
	for _, flags := range [][]string{{"--max-rejects", "3"}, {"--annotations", "github"}} {
		r := invocation{args: append([]string{"--fake", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "S", "--text", text}, flags...), env: []string{}}.run(t)
		expect(t, r, exitUsage, nil, []string{"go with --recipients"})
	}
}

func TestSendRecipientsDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nbob@example.net,Bob\n")
	text := writeFile(t, dir, "body.txt", "Hi {{FIRST}}")
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "For %FIRST%", "--text", text, "--no-unsubscribe", "--recipients", csv, "--dry-run"}, env: []string{}}.run(t)
	expect(t, r, exitOK, []string{"To: ann@example.net\nSubject: For Ann\n\nHi Ann", "To: bob@example.net", "2 messages shown, nothing sent"}, nil)
}

// TestSendRecipientsDryRunOfHTMLOnly: a message with no text part shows the text its HTML
// renders to, with the row's values, and says where the whole message is written.
func TestSendRecipientsDryRunOfHTMLOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\n")
	body := writeFile(t, dir, "body.html", "<html><head><style>p{color:red}</style></head><body><p>Hi <b>{{FIRST}}</b>,</p><p>news &amp; more</p></body></html>")
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "News", "--html", body, "--recipients", csv, "--dry-run"}, env: []string{}}.run(t)
	expect(t, r, exitOK, []string{"Subject: News\n\n(the text the HTML part shows; --preview DIR writes the whole message)\nHi Ann,\nnews & more\n"}, nil)
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSendRecipientsKilled kills `send --recipients` with SIGKILL at random moments, the
// relay holding each message a few milliseconds, then runs it to the end: every address got
// at most one message, and every address that got none is named unknown by the final run.
func TestSendRecipientsKilled(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	relay.InjectFault(sendlooptest.RelayFault{Command: "DATA", Delay: 3 * time.Millisecond, Times: 1 << 30})
	dir := t.TempDir()
	const rows = 400
	csv := writeFile(t, dir, "list.csv", recipientRows(rows))
	text := writeFile(t, dir, "body.txt", "Hi")
	journal := filepath.Join(dir, "journal")
	args := []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", text,
		"--no-unsubscribe", "--recipients", csv, "--journal", journal, "--concurrency", "2"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 26))
	for run := range 20 {
		cmd := exec.Command(binary, args...)
		cmd.Env = childEnv(env)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		before := fileSize(journal)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		// Killed once it writes to the journal (the process takes a while to start), a
		// random moment later. The journal is polled, as the process tells nobody; the
		// minute only bounds how long a failing test waits.
		if !testkit.Eventually(func() bool {
			select {
			case <-exited:
				return true
			default:
				return fileSize(journal) != before
			}
		}, time.Minute) {
			_ = cmd.Process.Kill()
			t.Fatalf("run %d wrote nothing to the journal in a minute", run+1)
		}
		// Not an order of events: every moment is a valid one to be killed at, and what the
		// test checks holds after any of them.
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if <-exited; waitErr == nil {
			t.Logf("run %d ended before the kill", run+1)
		}
		checkNoRace(t, stderr.String())
	}
	r := invocation{args: args, env: env}.run(t)
	rep := decodeListReport(t, r.stdout)
	unknown := map[string]bool{}
	for _, u := range rep.UnknownRows {
		unknown[u.Email] = true
	}
	got := map[string]int{}
	for _, m := range relay.Messages() {
		got[m.EnvelopeTo[0]]++
	}
	for i := range rows {
		addr := fmt.Sprintf("user%d@example.net", i)
		switch n := got[addr]; {
		case n > 1:
			t.Errorf("%s got %d messages", addr, n)
		case n == 0 && !unknown[addr]:
			t.Errorf("%s got no message and the final run does not name it unknown", addr)
		}
	}
	if rep.Rows != rows || rep.Sent+rep.Skipped["already_sent"]+rep.Skipped["unknown"]+rep.Unknown != rows {
		t.Errorf("final run: %+v", rep)
	}
	t.Logf("%d messages delivered, %d rows unknown after 20 kills", len(relay.Messages()), len(unknown))
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// TestSendRecipientsInterrupted stops a run with SIGINT: exit code 130, a report whose counts
// add up, and a rerun that finishes the job.
func TestSendRecipientsInterrupted(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	relay.InjectFault(sendlooptest.RelayFault{Command: "DATA", Delay: 5 * time.Millisecond, Times: 1 << 30})
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", recipientRows(200))
	text := writeFile(t, dir, "body.txt", "Hi")
	journal := filepath.Join(dir, "journal")
	args := []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", text,
		"--no-unsubscribe", "--recipients", csv, "--journal", journal, "--concurrency", "1"}
	cmd := exec.Command(binary, args...)
	cmd.Env = childEnv(env)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Polled, as the process tells nobody; the minute only bounds how long a failing test
	// waits.
	if !testkit.Eventually(func() bool { return fileSize(journal) >= 2000 }, time.Minute) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the journal holds %d bytes after a minute, want 2000 before the interrupt", fileSize(journal))
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	checkNoRace(t, stderr.String())
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitInterrupt {
		t.Fatalf("exit: %v, want %d\n%s", err, exitInterrupt, stdout.String())
	}
	rep := decodeListReport(t, stdout.String())
	if rep.NotAttempted == 0 || rep.Sent == 0 {
		t.Errorf("interrupted run: %+v", rep)
	}
	r := invocation{args: args, env: env}.run(t)
	rep = decodeListReport(t, r.stdout)
	if rep.Unknown+rep.Skipped["unknown"] == 0 {
		expect(t, r, exitOK, nil, nil)
	}
	got := map[string]int{}
	for _, m := range relay.Messages() {
		got[m.EnvelopeTo[0]]++
	}
	for addr, n := range got {
		if n != 1 {
			t.Errorf("%s got %d messages", addr, n)
		}
	}
	if len(got)+rep.Unknown+rep.Skipped["unknown"] < 200 {
		t.Errorf("%d addresses got a message after the rerun: %+v", len(got), rep)
	}
}

// recipientRows is a recipients file of n addresses, user0@example.net and on, under the
// header "email".
func recipientRows(n int) string {
	var b strings.Builder
	b.WriteString("email\n")
	for i := range n {
		fmt.Fprintf(&b, "user%d@example.net\n", i)
	}
	return b.String()
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendRecipientsChecksTagsFirst: a tag naming nothing is refused before any message, in
// a real run and a dry run, while a UTM-tagged, percent-encoded link and "50% off" pass.
func TestSendRecipientsChecksTagsFirst(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nbob@example.net,Bob\n")
	good := writeFile(t, dir, "good.html", `<p>50% off for {{FIRST}}: <a href="https://example.com/?utm_source=news&amp;q=%E2%80%99%20x">shop</a></p>`)
	cases := []struct {
		name, subject, html string
		extra               []string
		code                int
		stderr, stdout      []string
	}{
		{"typo", "Hi {{FRIST}}", good, nil, exitUsage, []string{"{{FRIST}} (subject): no column or --var of that name; did you mean FIRST?", "the columns of " + csv + ": email, FIRST"}, nil},
		{"typo dry run", "Hi {{FRIST}}", good, []string{"--dry-run"}, exitUsage, []string{"did you mean FIRST?"}, nil},
		{"merge tag", "Your code: %CODE%", good, nil, exitUsage, []string{"%CODE% (subject): no column or --var of that name"}, nil},
		{"allowed", "Your code: %CODE%", good, []string{"--allow-tag", "CODE", "--dry-run"}, exitOK, nil, []string{"Subject: Your code: %CODE%"}},
		{"links pass", "Hi {{FIRST}}", good, []string{"--dry-run"}, exitOK, nil,
			[]string{"Subject: Hi Ann", "Note: %E2% (HTML line 1): not a tag, it stands inside a URL", "Dry run: 2 messages shown"}},
	}
	for _, c := range cases {
		args := []string{"send", "--from", "news@example.com", "--subject", c.subject, "--html", c.html,
			"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j-"+strings.ReplaceAll(c.name, " ", "-"))}
		r := invocation{args: append(args, c.extra...), env: env}.run(t)
		expect(t, r, c.code, c.stdout, c.stderr)
		assert.NotContains(t, r.stderr, "Run 'sendloop help", c.name)
	}
	assert.Empty(t, relay.Messages(), "the relay received nothing")
}

// TestSendRecipientsRefusedTemplateSummary: a template the check refuses still writes the
// step summary, which says why and counts no rows.
func TestSendRecipientsRefusedTemplateSummary(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\n")
	summary := filepath.Join(dir, "summary.md")
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "Hi {{FRIST}}", "--text", writeFile(t, dir, "b.txt", "t"),
		"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j"), "--annotations", "github"}, env: env, ciEnv: []string{"GITHUB_STEP_SUMMARY=" + summary}}.run(t)
	expect(t, r, exitUsage, nil, []string{"did you mean FIRST?"})
	md := readFile(t, summary)
	assert.Contains(t, md, "### sendloop send: "+csv+"\n")
	assert.Contains(t, md, "Failed before sending: {{FRIST}} (subject): no column or --var of that name; did you mean FIRST?")
	assert.NotContains(t, md, "| rows |", "no counts: no row was read")
	assert.Empty(t, relay.Messages())
}

// TestSendRecipientsDryRunCountsEmptyValues: the dry run says how many rows an empty value
// would reject.
func TestSendRecipientsDryRunCountsEmptyValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nbob@example.net,\ncat@example.net,\n")
	text := writeFile(t, dir, "body.txt", "Hi {{FIRST}}")
	r := invocation{args: []string{"--fake", "send", "--from", "news@example.com", "--subject", "S", "--text", text,
		"--no-unsubscribe", "--recipients", csv, "--dry-run"}, env: []string{}}.run(t)
	expect(t, r, exitOK, []string{"Rows with an empty value for {{FIRST}} (text line 1) would be rejected: 2", "Dry run: 1 message shown"}, nil)
}

// TestSendRecipientsPreviewAndTestTo: --preview writes N .eml files that net/mail parses;
// --test-to sends N messages to one address; neither touches a journal.
func TestSendRecipientsPreviewAndTestTo(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", recipientRows(8))
	text := writeFile(t, dir, "body.txt", "Hi {{email}}")
	base := []string{"send", "--from", "news@example.com", "--subject", "For {{email}}", "--text", text, "--no-unsubscribe", "--recipients", csv,
		"--list-unsubscribe", "https://example.com/u?e={{email}}", "--track-opens", "--journal", filepath.Join(dir, "journal")}
	preview := filepath.Join(dir, "preview")
	r := invocation{args: append(append([]string(nil), base...), "--preview", preview, "--preview-rows", "4"), env: env}.run(t)
	expect(t, r, exitOK, []string{"Preview: 4 messages written to " + preview + ", nothing sent."}, nil)
	files, err := os.ReadDir(preview)
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(preview, file.Name()))
		require.NoError(t, err)
		m, err := mail.ReadMessage(bytes.NewReader(b))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(m.Header.Get("Subject"), "For user"), m.Header.Get("Subject"))
	}
	assert.Equal(t, "2.eml", files[0].Name())

	r = invocation{args: append(append([]string(nil), base...), "--test-to", "qa@example.org", "--test-rows", "2"), env: env}.run(t)
	expect(t, r, exitOK, []string{"Test: 2 messages sent to qa@example.org only; no journal touched."}, nil)
	msgs := relay.Messages()
	require.Len(t, msgs, 2)
	for _, m := range msgs {
		assert.Equal(t, []string{"qa@example.org"}, m.EnvelopeTo)
		assert.True(t, strings.HasPrefix(m.RenderedSubject, "[test] For user"), m.RenderedSubject)
		assert.Equal(t, "<mailto:qa@example.org>", m.Header.Get("List-Unsubscribe"))
		assert.False(t, m.SLHeaders.TrackOpens)
	}
	_, err = os.Stat(filepath.Join(dir, "journal"))
	assert.True(t, os.IsNotExist(err), "no journal")
	r = invocation{args: append(append([]string(nil), base...), "--test-to", "qa@example.org", "--test-rows", "21"), env: env}.run(t)
	expect(t, r, exitUsage, nil, []string{"--test-rows must be from 1 to 20"})
}

// TestSendRecipientsContinueFrom: a journal refused for a changed message says what to do;
// --continue-from sends the corrected message to the other rows only.
func TestSendRecipientsContinueFrom(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	text := writeFile(t, dir, "body.txt", "Hi")
	old, next := filepath.Join(dir, "old.journal"), filepath.Join(dir, "new.journal")
	send := func(subject string, rows int, extra ...string) result {
		csv := writeFile(t, dir, "list.csv", recipientRows(rows))
		args := []string{"send", "--from", "news@example.com", "--subject", subject, "--text", text, "--no-unsubscribe", "--recipients", csv}
		return invocation{args: append(args, extra...), env: env}.run(t)
	}
	expect(t, send("Sprnig news", 3, "--journal", old), exitOK, nil, nil)
	csvNoAddress := writeFile(t, dir, "bad.csv", "name\nAnn\n")
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "S", "--text", text, "--no-unsubscribe", "--recipients", csvNoAddress, "--journal", old}, env: env}.run(t)
	expect(t, r, exitUsage, nil, []string{"sendloop: " + csvNoAddress + ": no address column"})
	expect(t, send("Spring news", 6, "--journal", old), exitUsage, nil,
		[]string{"--journal " + old + " was written for another message", "--continue-from " + old + " --journal NEW.journal"})
	r = send("Spring news", 6, "--journal", old, "--shard", "1/2")
	expect(t, r, exitUsage, nil, []string{"--journal " + old + " was written by no --shard, not --shard 1/2"})
	assert.NotContains(t, r.stderr, "sendloop help", "a journal of another shard is no usage mistake")
	expect(t, send("Spring news", 6, "--journal", next, "--continue-from", old), exitOK,
		[]string{"3 sent", "3 in the journal continued from"}, nil)
	expect(t, send("Spring news", 6, "--journal", next, "--continue-from", old), exitOK, []string{"0 sent", "3 already sent"}, nil)
	got := map[string]int{}
	for _, m := range relay.Messages() {
		got[m.EnvelopeTo[0]]++
	}
	assert.Len(t, got, 6)
	for addr, n := range got {
		assert.Equal(t, 1, n, addr)
	}
}

// TestSendRecipientsBindingIsTheLibrarys: the CLI binds its journal as the library and as
// sendloop 0.3.0 did (the library's testdata holds 0.3.0's journals of these flags).
func TestSendRecipientsBindingIsTheLibrarys(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	_, env := relayEnv(t, f)
	data := filepath.Join("..", "..", "mailmerge", "testdata", "v0.3.0")
	dir := t.TempDir()
	for _, shard := range []struct{ flag, journal string }{{"", "plain.journal"}, {"2/2", "shard.journal"}} {
		journal := filepath.Join(dir, shard.journal)
		args := []string{"send", "--from", "Shop <shop@example.com>", "--subject", "Hi {{FIRST}}",
			"--text", filepath.Join(data, "body.txt"), "--html", filepath.Join(data, "body.html"),
			"--no-unsubscribe", "--recipients", filepath.Join(data, "first.csv"), "--column", "Last name=LAST", "--var", "CODE=XYZ", "--var", "ALPHA=1",
			"--merge-vars", `{"K":"v"}`, "--custom-args", `{"camp":7}`, "--header", "X-Campaign: spring-{{FIRST}}",
			"--list-unsubscribe", "https://example.com/u?e={{email}}", "--tags", "news", "--track-opens", "--journal", journal}
		if shard.flag != "" {
			args = append(args, "--shard", shard.flag)
		}
		expect(t, invocation{args: args, env: env}.run(t), exitOK, nil, nil)
		got, err := mailmerge.ReadJournal(journal, func(mailmerge.JournalRecord) {})
		require.NoError(t, err)
		want, err := mailmerge.ReadJournal(filepath.Join(data, shard.journal), func(mailmerge.JournalRecord) {})
		require.NoError(t, err)
		assert.Equal(t, want, got, shard.journal)
	}
}

// TestSendRecipientsKilledThenFinishedByTheLibrary: a CLI send killed mid-run is finished
// through the library with the same journal: no row gets two messages, and every row
// without one is named unknown.
func TestSendRecipientsKilledThenFinishedByTheLibrary(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	const rows = 300
	// Killed as the relay holds the DATA of the 30th message: mid-send, whatever the
	// machine's speed.
	reached := make(chan struct{})
	var held atomic.Int32
	relay.InjectFault(sendlooptest.RelayFault{Command: "DATA", Delay: 3 * time.Millisecond, Times: 1 << 30, Reached: func() {
		if held.Add(1) == rows/10 {
			close(reached)
		}
	}})
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", recipientRows(rows))
	text := writeFile(t, dir, "body.txt", "Hi {{email}}")
	journal := filepath.Join(dir, "journal")
	cmd := exec.Command(binary, "send", "--from", "news@example.com", "--subject", "S", "--text", text,
		"--no-unsubscribe", "--recipients", csv, "--journal", journal, "--concurrency", "2")
	cmd.Env = childEnv(env)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-reached:
	case err := <-exited:
		t.Fatalf("sendloop ended before the kill: %v", err)
	case <-time.After(time.Minute): // only bounds how long a failing test waits
		_ = cmd.Process.Kill()
		t.Fatal("the relay held no 30th message in a minute")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-exited
	require.Less(t, len(relay.Messages()), rows, "killed mid-send")

	src, err := mailmerge.File(csv, mailmerge.FileOptions{})
	require.NoError(t, err)
	api, err := sendloop.NewClient(f.srv.APIKey, sendloop.WithBaseURL(f.srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: testkit.Transport()}))
	require.NoError(t, err)
	job, err := mailmerge.New(src, &smtp.Message{From: "news@example.com", Subject: "S", Text: "Hi {{email}}"}, mailmerge.Options{API: api, NoUnsubscribe: true})
	require.NoError(t, err)
	user, password := f.srv.RelayCredentials()
	lib, err := smtp.NewRelay(relay.Addr(), smtp.Auth{Username: user, Password: password}, smtp.WithTLSConfig(relay.ClientTLSConfig()))
	require.NoError(t, err)
	defer lib.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The rows of unknown outcome are this test's to count: the zero budget allows none.
	res, err := job.Send(ctx, lib, mailmerge.SendOptions{Journal: journal, MaxUnknown: sljob.Unlimited()})
	require.NoError(t, err)
	defer res.Close()
	assert.Equal(t, rows, res.Rows)
	assert.Equal(t, rows, res.Tally.Done+res.SkippedSent+res.SkippedUnknown, "%+v", res)
	unknown := map[string]bool{}
	require.NoError(t, res.UnknownRows.Each(func(r mailmerge.RowResult) error {
		unknown[r.Address] = true
		return nil
	}))
	got := map[string]int{}
	for _, m := range relay.Messages() {
		got[m.EnvelopeTo[0]]++
	}
	for addr, n := range got {
		assert.Equal(t, 1, n, "%s got %d messages", addr, n)
	}
	assert.Equal(t, rows, len(got)+countMissing(got, unknown), "every row has its message or is named unknown")
	t.Logf("killed after %d of %d; the library sent %d, %d unknown", rows-res.Tally.Done-res.SkippedUnknown, rows, res.Tally.Done, res.SkippedUnknown)
}

// countMissing counts the unknown rows that got no message.
func countMissing(got map[string]int, unknown map[string]bool) int {
	n := 0
	for addr := range unknown {
		if got[addr] == 0 {
			n++
		}
	}
	return n
}

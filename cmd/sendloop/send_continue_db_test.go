package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
)

// TestSendContinuesIntoAndWithinTheDatabase: a send started with a file journal (on a
// laptop) finishes with a journal in the database (in CI), and a corrected message
// continues from a database journal into another; no row gets two messages.
func TestSendContinuesIntoAndWithinTheDatabase(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dbEnv := slices.Concat(env, []string{envJournalURL + "=" + dbURL})
	dir := t.TempDir()
	first := writeFile(t, dir, "first.csv", "email\na@example.net\nb@example.net\n")
	all := writeFile(t, dir, "all.csv", "email\na@example.net\nb@example.net\nc@example.net\nd@example.net\n")
	more := writeFile(t, dir, "more.csv", "email\na@example.net\nb@example.net\nc@example.net\nd@example.net\ne@example.net\n")
	send := func(env []string, csv, subject string, more ...string) result {
		return invocation{args: append([]string{"--json", "send", "--from", "news@example.com", "--subject", subject, "--text", "-",
			"--recipients", csv, "--no-unsubscribe"}, more...), env: env, stdin: "Hi"}.run(t)
	}
	laptop := filepath.Join(dir, "laptop.journal")
	expect(t, send(env, first, "News", "--journal", laptop), exitOK, nil, nil)

	tests := []struct {
		name      string
		env       []string
		csv       string
		subject   string
		flags     []string
		code      int
		sent      int
		continued int
		stderr    []string
	}{
		{name: "a file journal into the database", env: dbEnv, csv: all, subject: "News",
			flags: []string{"--journal", "news-ci", "--continue-from", "file:" + laptop}, code: exitOK, sent: 2, continued: 2},
		{name: "the database journal of another message is refused, naming the way on", env: dbEnv, csv: more, subject: "News, corrected",
			flags: []string{"--journal", "news-ci"}, code: exitUsage, stderr: []string{"--continue-from news-ci --journal NEW"}},
		{name: "a corrected message from a database journal into another", env: dbEnv, csv: more, subject: "News, corrected",
			flags: []string{"--journal", "news-fixed", "--continue-from", "news-ci"}, code: exitOK, sent: 1, continued: 4},
		{name: "a database journal that does not exist", env: dbEnv, csv: more, subject: "News, corrected",
			flags: []string{"--journal", "news-other", "--continue-from", "no-such-journal"}, code: exitUsage, stderr: []string{"no journal of that name"}},
	}
	for _, tt := range tests { // in order: each continues from the one before
		r := send(tt.env, tt.csv, tt.subject, tt.flags...)
		expect(t, r, tt.code, nil, tt.stderr)
		if tt.code != exitOK {
			continue
		}
		rep := decodeListReport(t, r.stdout)
		assert.Equal(t, tt.sent, rep.Sent, tt.name)
		assert.Equal(t, tt.continued, rep.Skipped["continued"], tt.name)
	}
	counts := map[string]int{}
	for _, m := range relay.Messages() {
		counts[strings.ToLower(m.EnvelopeTo[0])]++
	}
	require.Len(t, counts, 5, "every row got the message")
	for addr, n := range counts {
		assert.Equal(t, 1, n, addr)
	}
}

// TestSendDryRunLeavesTheDatabaseJournalUnbound: a dry run reads a database journal without
// writing it, so that the message it previewed can still be corrected before the real run;
// and it counts what a journal there would skip, refusing one of another message.
func TestSendDryRunLeavesTheDatabaseJournalUnbound(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	f := newFake(t)
	relay, env := relayEnv(t, f)
	env = slices.Concat(env, []string{envJournalURL + "=" + dbURL})
	csv := writeFile(t, t.TempDir(), "list.csv", "email\na@example.net\nb@example.net\n")
	send := func(subject string, more ...string) result {
		return invocation{args: append([]string{"send", "--from", "news@example.com", "--subject", subject, "--text", "-",
			"--recipients", csv, "--no-unsubscribe", "--journal", "news"}, more...), env: env, stdin: "Hi"}.run(t)
	}
	tests := []struct {
		name    string
		subject string
		flags   []string
		code    int
		stdout  []string
		stderr  []string
	}{
		{name: "a dry run of a typo", subject: "Nwes", flags: []string{"--dry-run"}, code: exitOK,
			stdout: []string{"2 rows read: 2 would be sent"}},
		{name: "the corrected send, on the same journal name", subject: "News", code: exitOK},
		{name: "a dry run after it", subject: "News", flags: []string{"--dry-run"}, code: exitOK,
			stdout: []string{"0 would be sent", "2 skipped by the journal (2 already sent"}},
		{name: "a dry run of another message", subject: "Other", flags: []string{"--dry-run"}, code: exitUsage,
			stderr: []string{"was written for another message", "--continue-from news --journal NEW"}},
	}
	for _, tt := range tests { // in order
		r := send(tt.subject, tt.flags...)
		expect(t, r, tt.code, tt.stdout, tt.stderr)
	}
	require.Len(t, relay.Messages(), 2, "only the real run sent")
}

package main

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendRecipientsChecksEscaping: a {{FIRST}} in the subject whose value would arrive
// HTML-escaped refuses the run before any message, naming the tag, the rows and the fix;
// {{{FIRST}}} sends the value as it is, and --keep-escaping keeps the escaping.
func TestSendRecipientsChecksEscaping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, subject string
		extra         []string
		code          int
		stderr        []string
		want          string // the rendered subject of O'Brien's message; "" for none sent
	}{
		{name: "escaped in the subject", subject: "Hi {{FIRST}}", code: exitUsage, stderr: []string{
			`{{FIRST}} (subject) would be HTML-escaped in 1 row (first on line 3: "O'Brien & Sons"), for the subject is not HTML: write {{{FIRST}}} or %FIRST% to insert the value as it is`,
			"nothing was sent (--keep-escaping NAME keeps the escaping of a tag that wants it)"}},
		{name: "dry run too", subject: "Hi {{FIRST}}", extra: []string{"--dry-run"}, code: exitUsage, stderr: []string{"write {{{FIRST}}} or %FIRST%"}},
		{name: "triple mustache", subject: "Hi {{{FIRST}}}", code: exitOK, want: "Hi O'Brien & Sons"},
		{name: "kept", subject: "Hi {{FIRST}}", extra: []string{"--keep-escaping", "FIRST"}, code: exitOK, want: "Hi O&#39;Brien &amp; Sons"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			relay, env := relayEnv(t, f)
			dir := t.TempDir()
			csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nob@example.net,O'Brien & Sons\n")
			args := []string{"send", "--from", "news@example.com", "--subject", c.subject, "--text", writeFile(t, dir, "b.txt", "Hello"),
				"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j")}
			r := invocation{args: append(args, c.extra...), env: env}.run(t)
			expect(t, r, c.code, nil, c.stderr)
			if c.want == "" {
				assert.Empty(t, relay.Messages(), "the relay received nothing")
				return
			}
			msgs := relay.Messages()
			require.Len(t, msgs, 2)
			var got []string
			for _, m := range msgs {
				got = append(got, m.RenderedSubject)
			}
			assert.Contains(t, got, c.want)
		})
	}
}

// TestSendRecipientsNeedsOneClickUnsubscribe: a 2-row send without --list-unsubscribe and
// --one-click is refused before any message with the flags to add; with them each message
// carries its own https URL; --no-unsubscribe sends transactional mail without.
func TestSendRecipientsNeedsOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		extra  []string
		code   int
		stderr []string
		urls   []string // the List-Unsubscribe headers sent, sorted; nil for none sent
	}{
		{name: "neither", code: exitUsage, stderr: []string{"add --list-unsubscribe 'https://example.com/u?e={{email}}'", "and --one-click", "--no-unsubscribe", "nothing was sent"}},
		{name: "URL without a tag", extra: []string{"--list-unsubscribe", "https://example.com/u", "--one-click"}, code: exitUsage, stderr: []string{"needs a one-click unsubscription"}},
		{name: "without one-click", extra: []string{"--list-unsubscribe", "https://example.com/u?e={{email}}"}, code: exitUsage, stderr: []string{"--one-click"}},
		{name: "both", extra: []string{"--list-unsubscribe", "https://example.com/u?e={{email}}", "--one-click"}, code: exitOK,
			urls: []string{"<https://example.com/u?e=ann%40example.net>", "<https://example.com/u?e=bob%40example.net>"}},
		{name: "transactional", extra: []string{"--no-unsubscribe"}, code: exitOK, urls: []string{"", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			relay, env := relayEnv(t, f)
			dir := t.TempDir()
			csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nbob@example.net,Bob\n")
			args := []string{"send", "--from", "news@example.com", "--subject", "Hi", "--text", writeFile(t, dir, "b.txt", "Hello"),
				"--recipients", csv, "--journal", filepath.Join(dir, "j")}
			r := invocation{args: append(args, c.extra...), env: env}.run(t)
			expect(t, r, c.code, nil, c.stderr)
			var got []string
			for _, m := range relay.Messages() {
				got = append(got, m.Header.Get("List-Unsubscribe"))
			}
			sort.Strings(got)
			assert.Equal(t, c.urls, got)
		})
	}
}

// TestSendRecipientsDryRunListsRejects: the dry run counts the rows it would send and
// reject, and lists the rejected lines with the reasons the real run prints.
func TestSendRecipientsDryRunListsRejects(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	relay, env := relayEnv(t, f)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nann@example.net,Ann\nnot an address,X\nANN@example.net,Ann\nbob@example.net,Bob\n")
	r := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "Hi {{{FIRST}}}", "--text", writeFile(t, dir, "b.txt", "Hello"),
		"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j"), "--dry-run"}, env: env}.run(t)
	expect(t, r, exitOK, []string{
		"4 rows read: 2 would be sent, 2 rejected, 0 suppressed, 0 not subscribed\n  line 3 not an address: invalid email address\n  line 4 ANN@example.net: duplicate of line 2\n",
		"Dry run: 2 messages shown, nothing sent."}, nil)
	assert.Empty(t, relay.Messages())
}

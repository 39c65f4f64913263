package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// audienceListID is the list of the audience tests' fake.
const audienceListID = 70

// notMailable are the members of the audience list a send must not reach, with the fate
// and reason the report gives each.
var notMailable = map[string]string{
	"global@example.com":   "suppressed: on the account's global suppression list (FBL Report)",
	"listsupp@example.com": "suppressed: on list 70's suppression list (Manual)",
	"unsub@example.com":    "not subscribed: unsubscribed from list 70",
	"bounced@example.com":  "not subscribed: hard-bounced in list 70",
	"pending@example.com":  "not subscribed: confirmation pending in list 70",
}

// audienceFake is a fake whose list 70 holds 995 Subscribed members (m0000@ to m0994@,
// each with a First Name) and the five of notMailable.
func audienceFake(t *testing.T) (*fake, *sendlooptest.Relay, []string) {
	t.Helper()
	f := newFake(t)
	subs := []sendlooptest.SeedSubscriber{
		{Email: "unsub@example.com", Status: "Unsubscribed"},
		{Email: "bounced@example.com", BounceType: "Hard"},
		{Email: "pending@example.com", Status: "Confirmation Pending"},
		{Email: "listsupp@example.com"},
		{Email: "global@example.com"},
	}
	for i := range 995 {
		subs = append(subs, sendlooptest.SeedSubscriber{Email: fmt.Sprintf("m%04d@example.com", i),
			Fields: map[string]string{"First Name": fmt.Sprintf("O'Brien & Sons %d", i)}})
	}
	require.NoError(t, f.srv.LoadSeed(sendlooptest.Seed{Lists: []sendlooptest.SeedList{{ID: audienceListID, Name: "Audience",
		CustomFields: []sendlooptest.SeedCustomField{{Name: "First Name"}}, Subscribers: subs}}}))
	_, err := f.srv.Suppress(audienceListID, "listsupp@example.com", "Manual")
	require.NoError(t, err)
	_, err = f.srv.Suppress(0, "global@example.com", "FBL Report")
	require.NoError(t, err)
	relay, env := relayEnv(t, f)
	return f, relay, env
}

// reportedNotSent maps each row a --json report lists as not sent for who it is to its fate
// and reason.
func reportedNotSent(rep listReportJSON) map[string]string {
	out := map[string]string{}
	for _, r := range rep.NotSent {
		out[r.Email] = "suppressed: " + r.Reason
	}
	for _, r := range rep.NotMembers {
		out[r.Email] = "not subscribed: " + r.Reason
	}
	return out
}

func TestSendToAListReachesOnlyItsSubscribedMembers(t *testing.T) {
	t.Parallel()
	_, relay, env := audienceFake(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "list.journal")
	args := []string{"send", "--from", "news@example.com", "--subject", "Hi {{{First_Name}}}", "--text", "-",
		"--list", "70", "--journal", journal, "--list-unsubscribe", "https://example.com/u/{{SubscriberID}}", "--one-click"}
	r := invocation{args: append([]string{"--json"}, args...), env: env, stdin: "Hello {{{First_Name}}}"}.run(t)
	expect(t, r, exitOK, nil, nil)
	rep := decodeListReport(t, r.stdout)
	assert.Equal(t, 1000, rep.Rows)
	assert.Equal(t, 995, rep.Sent)
	assert.Equal(t, 2, rep.Suppressed)
	assert.Equal(t, 3, rep.NotSubscribed)
	assert.Equal(t, notMailable, reportedNotSent(rep))
	msgs := relay.Messages()
	require.Len(t, msgs, 995, "the fake's relay holds the messages")
	for _, m := range msgs {
		_, bad := notMailable[strings.ToLower(m.EnvelopeTo[0])]
		assert.False(t, bad, "a message to %s", m.EnvelopeTo[0])
	}
	assert.Equal(t, "Hi O'Brien & Sons 0", messageTo(t, relay, "m0000@example.com").RenderedSubject)

	// The rerun sends nothing, in text too, the five still reported.
	r = invocation{args: args, env: env, stdin: "Hello {{{First_Name}}}"}.run(t)
	expect(t, r, exitOK, []string{"1000 rows read: 0 sent, 2 suppressed, 3 not subscribed, 995 skipped (995 already sent",
		"Suppressed (never sent):\n  listsupp@example.com  on list 70's suppression list (Manual)\n  global@example.com  on the account's global suppression list (FBL Report)\n",
		"Not subscribed to the list (not sent):\n  unsub@example.com  unsubscribed from list 70\n"}, nil)
	assert.Len(t, relay.Messages(), 995)
}

// messageTo is the relay's message to addr.
func messageTo(t *testing.T, relay *sendlooptest.Relay, addr string) sendlooptest.RelayMessage {
	t.Helper()
	for _, m := range relay.Messages() {
		if len(m.EnvelopeTo) == 1 && m.EnvelopeTo[0] == addr {
			return m
		}
	}
	t.Fatalf("no message to %s", addr)
	return sendlooptest.RelayMessage{}
}

func TestSendRecipientsWithAList(t *testing.T) {
	t.Parallel()
	_, relay, env := audienceFake(t)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nm0001@example.com,Ann\nstranger@example.com,Sam\nUNSUB@example.com,Una\nglobal@example.com,Gil\n")
	args := []string{"--json", "send", "--from", "news@example.com", "--subject", "Hi {{{FIRST}}}", "--text", "-",
		"--recipients", csv, "--list", "70", "--journal", filepath.Join(dir, "j"),
		"--list-unsubscribe", "https://example.com/u?e={{email}}", "--one-click"}
	r := invocation{args: args, env: env, stdin: "Hello"}.run(t)
	expect(t, r, exitOK, nil, nil)
	rep := decodeListReport(t, r.stdout)
	assert.Equal(t, 1, rep.Sent)
	assert.Equal(t, map[string]string{
		"stranger@example.com": "not subscribed: not a member of list 70",
		"unsub@example.com":    "not subscribed: unsubscribed from list 70",
		"global@example.com":   "suppressed: on the account's global suppression list (FBL Report)",
	}, reportedNotSent(rep))
	require.Len(t, relay.Messages(), 1)
	assert.Equal(t, "m0001@example.com", relay.Messages()[0].EnvelopeTo[0])
}

func TestSendAudienceDryRunAndRefusals(t *testing.T) {
	t.Parallel()
	_, relay, env := audienceFake(t)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email,FIRST\nm0001@example.com,Ann\nglobal@example.com,Gil\nnot an address,X\n")
	bulk := []string{"send", "--from", "news@example.com", "--subject", "Hi {{{FIRST}}}", "--text", "-",
		"--recipients", csv, "--list-unsubscribe", "https://example.com/u?e={{email}}", "--one-click"}
	noAPI := []string{}
	for _, e := range env {
		if !strings.HasPrefix(e, envAPIKey+"=") && !strings.HasPrefix(e, envBaseURL+"=") {
			noAPI = append(noAPI, e)
		}
	}
	tests := []struct {
		name         string
		args         []string
		env          []string
		code         int
		stdout, errs []string
	}{{
		name:   "the dry run counts the suppressed rows",
		args:   append(append([]string(nil), bulk...), "--dry-run"),
		env:    env,
		code:   exitOK,
		stdout: []string{"3 rows read: 1 would be sent, 1 rejected, 1 suppressed, 0 not subscribed\n", "line 3 global@example.com: suppressed: on the account's global suppression list (FBL Report)\n"},
	}, {
		name:   "a dry run without the API says what it did not read",
		args:   append(append([]string(nil), bulk...), "--dry-run"),
		env:    noAPI,
		code:   exitOK,
		stdout: []string{"0 suppressed", "The suppression list was not read: SENDLOOP_API_KEY is not set, and the real run needs it."},
	}, {
		name: "a bulk send without the API is refused, naming the variable",
		args: append(append([]string(nil), bulk...), "--journal", filepath.Join(dir, "j")),
		env:  noAPI,
		code: exitUsage,
		errs: []string{"--recipients reads the account's suppression list", "SENDLOOP_API_KEY is not set"},
	}, {
		name: "a list that does not exist",
		args: []string{"send", "--from", "news@example.com", "--subject", "S", "--text", "-", "--list", "999", "--journal", filepath.Join(dir, "j2")},
		env:  env,
		code: exitUsage,
		errs: []string{"--list 999: no list of that ID in the account"},
	}, {
		name: "one message to a suppressed address",
		args: []string{"send", "--from", "news@example.com", "--to", "Gil <GLOBAL@example.com>", "--subject", "S", "--text", "-"},
		env:  env,
		code: exitFailure,
		errs: []string{"not sent: GLOBAL@example.com is on the account's global suppression list (FBL Report)"},
	}, {
		name: "one message without the API: said to be unchecked",
		args: []string{"send", "--from", "news@example.com", "--to", "ok@example.com", "--subject", "S", "--text", "-"},
		env:  noAPI,
		code: exitOK,
		errs: []string{"the suppression list was not checked: SENDLOOP_API_KEY is not set"},
	}, {
		name: "--include-not-subscribed needs --list",
		args: append(append([]string(nil), bulk...), "--journal", filepath.Join(dir, "j3"), "--include-not-subscribed"),
		env:  env,
		code: exitUsage,
		errs: []string{"--include-not-subscribed goes with --list ID"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(relay.Messages())
			r := invocation{args: tt.args, env: tt.env, stdin: "Hello"}.run(t)
			expect(t, r, tt.code, tt.stdout, tt.errs)
			if tt.code != exitOK {
				assert.Len(t, relay.Messages(), before, "nothing sent")
			}
		})
	}
}

// TestSendListJSONKeys pins the keys the --json report adds for who was not sent.
func TestSendListJSONKeys(t *testing.T) {
	t.Parallel()
	_, _, env := audienceFake(t)
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email\nglobal@example.com\nm0002@example.com\n")
	r := invocation{args: []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", "-",
		"--recipients", csv, "--journal", filepath.Join(dir, "j"), "--no-unsubscribe"}, env: env, stdin: "x"}.run(t)
	expect(t, r, exitOK, nil, nil)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	for _, k := range []string{"suppressed", "not_subscribed", "suppressed_rows", "not_subscribed_rows"} {
		assert.Contains(t, doc, k)
	}
	assert.JSONEq(t, `[{"line":2,"email":"global@example.com","reason":"on the account's global suppression list (FBL Report)"}]`, string(doc["suppressed_rows"]))
}

// TestSendDryRunCountsWhatTheJournalSkips: a dry run after a partial send counts the rows
// the journal would skip, and the rows it recorded suppressed as suppressed.
func TestSendDryRunCountsWhatTheJournalSkips(t *testing.T) {
	t.Parallel()
	_, relay, env := audienceFake(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "j")
	first := writeFile(t, dir, "first.csv", "email\nm0001@example.com\nglobal@example.com\n")
	all := writeFile(t, dir, "all.csv", "email\nm0001@example.com\nglobal@example.com\nm0002@example.com\n")
	send := func(csv string, more ...string) result {
		return invocation{args: append([]string{"send", "--from", "news@example.com", "--subject", "S", "--text", "-",
			"--recipients", csv, "--journal", journal, "--no-unsubscribe"}, more...), env: env, stdin: "x"}.run(t)
	}
	expect(t, send(first), exitOK, nil, nil)
	require.Len(t, relay.Messages(), 1)
	r := send(all, "--dry-run")
	expect(t, r, exitOK, []string{"3 rows read: 1 would be sent, 0 rejected, 1 suppressed, 0 not subscribed, 1 skipped by the journal (1 already sent, 0 refused before, 0 unknown before)\n"}, nil)
	assert.Len(t, relay.Messages(), 1, "a dry run sends nothing")
	r = send(all, "--dry-run", "--subject", "Other")
	expect(t, r, exitUsage, nil, []string{"was written for another message"})
}

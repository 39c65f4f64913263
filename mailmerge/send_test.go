package mailmerge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startRelay starts a fake relay and a client of it.
// anyRows is the budget of the tests that judge a run's rows themselves: the zero
// job.Budget allows none.
var anyRows = job.Unlimited()

func startRelay(t *testing.T, opts ...smtp.Option) (*sendlooptest.Relay, *smtp.Relay) {
	t.Helper()
	fake, err := sendlooptest.StartRelay(t, "u", "p")
	require.NoError(t, err)
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "u", Password: "p"},
		append([]smtp.Option{smtp.WithTLSConfig(fake.ClientTLSConfig())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	return fake, relay
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// template030 is the message of testdata/v0.3.0/README.md, as the CLI composed it.
func template030(t *testing.T) (*smtp.Message, mailmerge.Options) {
	t.Helper()
	text, err := os.ReadFile("testdata/v0.3.0/body.txt")
	require.NoError(t, err)
	html, err := os.ReadFile("testdata/v0.3.0/body.html")
	require.NoError(t, err)
	m := &smtp.Message{From: "Shop <shop@example.com>", Subject: "Hi {{FIRST}}", Text: string(text), HTML: string(html),
		ListUnsubscribe: []string{"https://example.com/u?e={{email}}"},
		ExtraHeaders:    []smtp.Field{{Name: "X-Campaign", Value: "spring-{{FIRST}}"}}}
	m.Headers.MergeVars = map[string]any{"K": "v"}
	m.Headers.CustomArgs = map[string]any{"camp": json.Number("7")}
	m.Headers.Tags = []string{"news"}
	m.Headers.TrackOpens = true
	return m, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true, Vars: map[string]string{"CODE": "XYZ", "ALPHA": "1"}}
}

func journalHeader(t *testing.T, path string) mailmerge.JournalBinding {
	t.Helper()
	b, err := mailmerge.ReadJournal(path, func(mailmerge.JournalRecord) {})
	require.NoError(t, err)
	return b
}

func TestJournalOf030Resumes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		journal string
		shard   mailmerge.ShardSpec
		skipped int // already sent
	}{{"plain.journal", mailmerge.ShardSpec{}, 3}, {"shard.journal", mailmerge.ShardSpec{Index: 1, Count: 2}, 2}} {
		t.Run(c.journal, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			journal := filepath.Join(dir, c.journal)
			b, err := os.ReadFile(filepath.Join("testdata/v0.3.0", c.journal))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(journal, b, 0o644))
			csv, err := os.ReadFile("testdata/v0.3.0/first.csv")
			require.NoError(t, err)
			more := "dan@example.net,Dan,Day\neve@example.net,Eve,Eck\nfay@example.net,Fay,Fox\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "list.csv"), append(csv, more...), 0o644))

			src, err := mailmerge.File(filepath.Join(dir, "list.csv"), mailmerge.FileOptions{
				Columns: []csvfile.ColumnMap{{Source: "Last name", Target: "LAST"}}})
			require.NoError(t, err)
			tmpl, opts := template030(t)
			opts.Shard = c.shard
			job, err := mailmerge.New(src, tmpl, opts)
			require.NoError(t, err)
			assert.Equal(t, journalHeader(t, journal), job.Binding(), "the binding of 0.3.0's journal")

			fake, relay := startRelay(t)
			res, err := job.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: journal})
			require.NoError(t, err)
			defer res.Close()
			assert.Equal(t, 6, res.Rows)
			assert.Equal(t, c.skipped, res.SkippedSent)
			assert.Equal(t, res.Rows, res.Tally.Done+res.Skipped(), "%+v", res)
			assert.Len(t, fake.Messages(), res.Tally.Done)
			for _, m := range fake.Messages() {
				assert.NotContains(t, []string{"ann@example.net", "bob@example.net"}, m.EnvelopeTo[0])
			}
		})
	}
}

func TestSendFates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := "email,FIRST,CITY,Name\n" +
		"ann@example.net,Ann,Oslo,Ann Lee\n" + // 2: sent
		"not-an-address,X,Y,\n" + // 3: rejected by the source
		"bob@example.net,,Rome,\n" + // 4: empty FIRST: rejected
		"cat@example.net,Cat,,\n" + // 5: refused by the relay; CITY empty but allowed
		"ANN@example.net,Ann,Oslo,\n" + // 6: duplicate of line 2
		"dan@example.net,Dan,Kyiv,\n" // 7: sent
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list.csv"), []byte(csv), 0o644))
	src, err := mailmerge.File(filepath.Join(dir, "list.csv"), mailmerge.FileOptions{})
	require.NoError(t, err)
	merge, err := mailmerge.New(src, &smtp.Message{From: "news@example.com", Subject: "Hi {{FIRST}}",
		Text: "From {{CITY}}: %CODE%", ListUnsubscribe: []string{"https://example.com/u?e={{email}}&c={{CITY}}"},
		ExtraHeaders: []smtp.Field{{Name: "X-City", Value: "{{{CITY}}} %FIRST% %NOPE%"}}},
		mailmerge.Options{API: testAPI(t), NoUnsubscribe: true, Vars: map[string]string{"CODE": "C1"}, AllowEmpty: []string{"CITY"}, AllowTags: []string{"NOPE"}})
	require.NoError(t, err)
	fake, relay := startRelay(t)
	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "cat@example.net", Code: 550, Message: "5.1.1 no such user", Times: 10})
	var fates []string
	var progress []job.Progress
	res, err := merge.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "j"),
		OnRow:      func(r mailmerge.RowResult) { fates = append(fates, r.Fate.String()+" "+r.Reason) },
		OnProgress: func(p job.Progress) { progress = append(progress, p) }})
	require.NoError(t, err)
	defer res.Close()
	require.Len(t, fates, 6)
	assert.Equal(t, "done ", fates[0], "a message sent is job.Done")
	assert.True(t, strings.HasPrefix(fates[1], "rejected "), fates[1])
	assert.Equal(t, "rejected empty value for {{FIRST}} (subject)", fates[2])
	assert.True(t, strings.HasPrefix(fates[3], "refused "), fates[3])
	assert.Equal(t, "rejected duplicate of line 2", fates[4])
	require.Len(t, progress, 6)
	last := progress[len(progress)-1]
	assert.Equal(t, job.Progress{Kind: "send", Done: 6, Total: -1, Tally: job.Tally{Done: 2, Refused: 1, Rejected: 3}}, last)
	for i, p := range progress {
		assert.Equal(t, i+1, p.Done, "one call a row")
		assert.Equal(t, p.Done, p.Tally.Total(), "the tally adds up to the rows handled")
	}
	assert.Equal(t, 6, res.Rows)
	assert.Equal(t, job.Tally{Done: 2, Refused: 1, Rejected: 3}, res.Tally)
	assert.Equal(t, res.Rows, res.Tally.Total(), "the tally adds up to the rows")
	assert.Equal(t, 4, res.Rejects())
	var rejected []string
	require.NoError(t, res.RejectedRows.Each(func(r mailmerge.RowResult) error {
		rejected = append(rejected, r.Address)
		return nil
	}))
	assert.Equal(t, []string{"not-an-address", "bob@example.net", "ANN@example.net"}, rejected)

	msgs := fake.Messages()
	sort.Slice(msgs, func(i, k int) bool { return msgs[i].EnvelopeTo[0] < msgs[k].EnvelopeTo[0] })
	require.Len(t, msgs, 2)
	assert.Equal(t, "Hi Ann", msgs[0].RenderedSubject)
	assert.Equal(t, "From Oslo: C1", msgs[0].RenderedText)
	assert.Equal(t, `"Ann Lee" <ann@example.net>`, msgs[0].Header.Get("To"))
	assert.Equal(t, "Oslo Ann %NOPE%", msgs[0].Header.Get("X-City"))
	assert.Equal(t, "<https://example.com/u?e=dan%40example.net&c=Kyiv>", msgs[1].Header.Get("List-Unsubscribe"))

	// A rerun: the journal skips what was sent and refused.
	res2, err := merge.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "j")})
	require.NoError(t, err)
	defer res2.Close()
	assert.Equal(t, []int{6, 2, 1, 3}, []int{res2.Rows, res2.SkippedSent, res2.SkippedRefused, res2.Tally.Rejected})
	assert.Equal(t, 2, len(fake.Messages()))
}

func TestSendUnknownIsNotAReject(t *testing.T) {
	t.Parallel()
	src := mailmerge.Rows([]string{"email"}, []mailmerge.Row{{Address: "ann@example.net"}, {Address: "bob@example.net"}})
	job, err := mailmerge.New(src, &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"}, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	fake, relay := startRelay(t, smtp.WithMaxConnections(1))
	fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true})
	journal := filepath.Join(t.TempDir(), "j")
	res, err := job.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: journal})
	require.NoError(t, err)
	defer res.Close()
	assert.Equal(t, 1, res.Tally.Unknown)
	assert.Equal(t, 0, res.Rejects())
	assert.Equal(t, 1, res.Unknowns())
	res2, err := job.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: journal})
	require.NoError(t, err)
	defer res2.Close()
	assert.Equal(t, []int{1, 1, 1}, []int{res2.SkippedUnknown, res2.SkippedSent, res2.Unknowns()})
}

func TestJournalErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := mailmerge.Rows([]string{"email", "FIRST"}, []mailmerge.Row{{Address: "ann@example.net", Values: map[string]string{"FIRST": "Ann"}}})
	msg := func(subject string) *smtp.Message {
		return &smtp.Message{From: "a@example.com", Subject: subject, Text: "t"}
	}
	_, relay := startRelay(t)
	first, err := mailmerge.New(src, msg("Hi {{FIRST}}"), mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	res, err := first.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "old")})
	require.NoError(t, err)
	res.Close()

	fixed, err := mailmerge.New(src, msg("Hello {{FIRST}}"), mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	_, err = fixed.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "old")})
	var jerr *mailmerge.JournalError
	require.ErrorAs(t, err, &jerr)
	assert.True(t, jerr.MessageChanged)
	assert.ErrorIs(t, err, mailmerge.ErrJournalMismatch)
	assert.Contains(t, err.Error(), "was written for another message")

	sharded, err := mailmerge.New(src, msg("Hi {{FIRST}}"), mailmerge.Options{API: testAPI(t), NoUnsubscribe: true, Shard: mailmerge.ShardSpec{Index: 1, Count: 2}})
	require.NoError(t, err)
	_, err = sharded.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows, Journal: filepath.Join(dir, "old")})
	require.ErrorAs(t, err, &jerr)
	assert.False(t, jerr.MessageChanged)
	assert.Equal(t, mailmerge.ShardSpec{}, jerr.Journal)
	assert.Equal(t, mailmerge.ShardSpec{Index: 1, Count: 2}, jerr.Want)
	assert.Contains(t, err.Error(), "is bound to no shard, not shard index 1 of 2")
}

func TestSendDuplicateWithoutLines(t *testing.T) {
	t.Parallel()
	src := mailmerge.Rows([]string{"email"}, []mailmerge.Row{{Address: "ann@example.net"}, {Address: "bob@example.net"}, {Address: " ANN@example.net", Raw: " ANN@example.net"}})
	job, err := mailmerge.New(src, &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"}, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	_, relay := startRelay(t)
	res, err := job.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows})
	require.NoError(t, err)
	defer res.Close()
	var got []string
	require.NoError(t, res.RejectedRows.Each(func(r mailmerge.RowResult) error {
		got = append(got, r.Address+": "+r.Reason)
		return nil
	}))
	assert.Equal(t, []string{" ANN@example.net: duplicate of row 1"}, got)
	check, err := job.Check(testContext(t), mailmerge.CheckOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{" ANN@example.net: duplicate of row 1"}, rejectReasons(check.FirstRejected), "the reasons Send gives")
	check.FirstRejected = nil
	assert.Equal(t, mailmerge.CheckResult{Rows: 3, Sendable: 2, Rejected: 1, Duplicates: 1, Empty: map[string]int{}}, *check)
}

// A row rejected for an empty value still holds its address: a later row of the same
// address is its duplicate in Send as in Check, and is not sent.
func TestSendDuplicateOfARejectedRow(t *testing.T) {
	t.Parallel()
	src := mailmerge.Rows([]string{"email", "FIRST"}, []mailmerge.Row{
		{Line: 2, Address: "ann@example.net"},
		{Line: 3, Address: "Ann@example.net", Raw: "Ann@example.net", Values: map[string]string{"FIRST": "Ann"}},
		{Line: 4, Address: "bob@example.net", Values: map[string]string{"FIRST": "Bob"}},
		{Line: 5, Address: "BOB@example.net", Raw: "BOB@example.net"}, // empty too, but a duplicate first
	})
	job, err := mailmerge.New(src, &smtp.Message{From: "a@example.com", Subject: "Hi {{FIRST}}", Text: "t"}, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	fake, relay := startRelay(t)
	res, err := job.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: anyRows, MaxUnknown: anyRows})
	require.NoError(t, err)
	defer res.Close()
	var got []string
	require.NoError(t, res.RejectedRows.Each(func(r mailmerge.RowResult) error {
		got = append(got, fmt.Sprintf("%d %s: %s", r.Line, r.Address, r.Reason))
		return nil
	}))
	assert.Equal(t, []string{"2 ann@example.net: empty value for {{FIRST}} (subject)", "3 Ann@example.net: duplicate of line 2",
		"5 BOB@example.net: duplicate of line 4"}, got)
	require.Len(t, fake.Messages(), 1)
	assert.Equal(t, []string{"bob@example.net"}, fake.Messages()[0].EnvelopeTo)

	check, err := job.Check(testContext(t), mailmerge.CheckOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ann@example.net: empty value for {{FIRST}} (subject)", "Ann@example.net: duplicate of line 2", "BOB@example.net: duplicate of line 4"},
		rejectReasons(check.FirstRejected), "the reasons Send gives")
	check.FirstRejected = nil
	assert.Equal(t, mailmerge.CheckResult{Rows: 4, Sendable: 1, Rejected: 3, Duplicates: 2,
		Empty: map[string]int{"{{FIRST}} (subject)": 1}}, *check)
}

func TestSendBudgets(t *testing.T) {
	t.Parallel()
	// Four rows: one rejected (no FIRST), one refused, one of unknown outcome, one sent.
	rows := []mailmerge.Row{
		{Line: 2, Address: "ann@example.net"},
		{Line: 3, Address: "bob@example.net", Values: map[string]string{"FIRST": "Bob"}},
		{Line: 4, Address: "cat@example.net", Values: map[string]string{"FIRST": "Cat"}},
		{Line: 5, Address: "dan@example.net", Values: map[string]string{"FIRST": "Dan"}},
	}
	tests := []struct {
		name                string
		maxRejects, maxUnkn job.Budget
		want                []string // the budget errors: "rejects 2 > 1" or "unknown 1 > 0"
	}{
		{"zero budgets allow none", job.Budget{}, job.Budget{}, []string{"rejects 2 > 0", "unknown 1 > 0"}},
		{"unlimited", job.Unlimited(), job.Unlimited(), nil},
		{"within both", job.Rows(2), job.Rows(1), nil},
		{"rejects over", job.Rows(1), job.Rows(1), []string{"rejects 2 > 1"}},
		{"unknown over", job.Percent(50), job.Rows(0), []string{"unknown 1 > 0"}},
		{"both over", job.Percent(25), job.Percent(0), []string{"rejects 2 > 1", "unknown 1 > 0"}},
		{"any", job.Percent(100), job.Percent(100), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mm, err := mailmerge.New(mailmerge.Rows([]string{"email", "FIRST"}, rows),
				&smtp.Message{From: "a@example.com", Subject: "Hi {{FIRST}}", Text: "t"}, mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
			require.NoError(t, err)
			fake, relay := startRelay(t, smtp.WithMaxConnections(1))
			fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: "bob@example.net", Code: 550, Message: "5.1.1 no such user", Times: 10})
			fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true, Times: 1}) // cat@: one connection sends in order
			res, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{MaxRejects: tt.maxRejects, MaxUnknown: tt.maxUnkn})
			require.NotNil(t, res, "the result is whole, over a budget or not")
			defer res.Close()
			assert.Equal(t, []int{4, 1, 1, 1, 1}, []int{res.Rows, res.Tally.Done, res.Tally.Rejected, res.Tally.Refused, res.Tally.Unknown})
			var got []string
			for _, e := range unjoin(err) {
				var be *job.BudgetError
				require.ErrorAs(t, e, &be)
				kind := map[string]string{"MaxRejects": "rejects", "MaxUnknown": "unknown"}[be.Budget]
				require.NotEmpty(t, kind, be.Budget)
				got = append(got, fmt.Sprintf("%s %d > %d", kind, be.Rows, be.Allowed))
				assert.Equal(t, 4, be.Total, "the share is of the source's rows")
				assert.Contains(t, be.Error(), be.Limit.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// unjoin returns the errors err joins, err itself, or none for nil.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// rejectReasons are the rows as "ADDRESS: REASON".
func rejectReasons(rows []mailmerge.RowResult) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Address+": "+r.Reason)
	}
	return out
}

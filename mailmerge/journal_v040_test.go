package mailmerge_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestJournalOf040Resumes resumes a journal sendloop 0.4.0 wrote (testdata/v0.4.0): the
// sent and refused rows are skipped, the unknown one and the one left in flight are listed
// unknown and not sent again, the deferred one and a new row are sent.
func TestJournalOf040Resumes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/v0.4.0/news.journal")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "news.journal")
	require.NoError(t, os.WriteFile(path, b, 0o600))

	var rows []mailmerge.Row
	for _, n := range []string{"ann", "bob", "cy", "dee", "eve", "fay"} {
		rows = append(rows, mailmerge.Row{Address: n + "@example.net", Values: map[string]string{"NAME": n, "TOKEN": "t-" + n}})
	}
	tmpl := &smtp.Message{From: "Shop <shop@example.com>", Subject: "News for {{{NAME}}}", Text: "Hi {{{NAME}}}!",
		ListUnsubscribe: []string{"https://example.com/u/{{{TOKEN}}}"}, ListUnsubscribeOneClick: true}
	send, err := mailmerge.New(mailmerge.Rows([]string{"NAME", "TOKEN"}, rows), tmpl, mailmerge.Options{API: testAPI(t)})
	require.NoError(t, err)
	assert.Equal(t, journalHeader(t, path), send.Binding(), "the binding of 0.4.0's journal")

	fake, relay := startRelay(t)
	got := map[string]mailmerge.RowResult{}
	res, err := send.Send(testContext(t), relay, mailmerge.SendOptions{Journal: path, MaxRejects: anyRows, MaxUnknown: anyRows,
		OnRow: func(r mailmerge.RowResult) { got[r.Address] = r }})
	require.NoError(t, err)
	defer res.Close()
	for _, tc := range []struct {
		addr string
		fate job.Fate
		skip mailmerge.SkipReason
		id   string // the Message-ID the journal holds
	}{
		{"ann@example.net", job.Skipped, mailmerge.SkipAlreadySent, "<v040-1@example.com>"},
		{"bob@example.net", job.Skipped, mailmerge.SkipRefused, "<v040-2@example.com>"},
		{"cy@example.net", job.Skipped, mailmerge.SkipUnknown, "<v040-3@example.com>"},
		{"dee@example.net", job.Done, mailmerge.SkipNone, ""},
		{"eve@example.net", job.Skipped, mailmerge.SkipUnknown, "<v040-5@example.com>"},
		{"fay@example.net", job.Done, mailmerge.SkipNone, ""},
	} {
		r := got[tc.addr]
		assert.Equal(t, tc.fate, r.Fate, tc.addr)
		assert.Equal(t, tc.skip, r.Skip, tc.addr)
		if tc.id != "" {
			assert.Equal(t, tc.id, r.MessageID, tc.addr)
		}
	}
	assert.Equal(t, 1, res.SkippedSent)
	assert.Equal(t, 1, res.SkippedRefused)
	assert.Equal(t, 2, res.SkippedUnknown)
	assert.Equal(t, 2, res.Unknowns(), "cy and eve are listed unknown")
	var unknown []string
	require.NoError(t, res.UnknownRows.Each(func(r mailmerge.RowResult) error { unknown = append(unknown, r.Address); return nil }))
	assert.Equal(t, []string{"cy@example.net", "eve@example.net"}, unknown)
	var sentTo []string
	for _, m := range fake.Messages() {
		sentTo = append(sentTo, m.EnvelopeTo...)
	}
	assert.ElementsMatch(t, []string{"dee@example.net", "fay@example.net"}, sentTo, "only the deferred row and the new one are sent")

	// The journal stays readable and records the rerun's sends after 0.4.0's records.
	recs := map[string]job.Fate{}
	_, err = mailmerge.ReadJournal(path, func(r mailmerge.JournalRecord) { recs[r.Key] = r.Fate })
	require.NoError(t, err)
	assert.Equal(t, map[string]job.Fate{"ann@example.net": job.Done, "bob@example.net": job.Refused, "cy@example.net": job.Unknown,
		"dee@example.net": job.Done, "eve@example.net": job.Unknown, "fay@example.net": job.Done}, recs)
}

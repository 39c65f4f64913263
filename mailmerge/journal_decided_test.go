package mailmerge_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestSendKeepsRowsDecidedWithoutSending: a row the journal records suppressed or not
// subscribed (decided by an earlier run, without sending) keeps that fate and its reason in
// the rerun, and gets no message.
func TestSendKeepsRowsDecidedWithoutSending(t *testing.T) {
	t.Parallel()
	rows := []mailmerge.Row{{Address: "ann@example.net"}, {Address: "bob@example.net"}, {Address: "cy@example.net"}}
	send, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "news@example.com", Subject: "News", Text: "Hi"},
		mailmerge.Options{API: testAPI(t), NoUnsubscribe: true})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "news.journal")
	jr, err := mailmerge.OpenJournal(path, send.Binding())
	require.NoError(t, err)
	require.NoError(t, jr.Decide("ann@example.net", job.Suppressed, "on the global suppression list"))
	require.NoError(t, jr.Decide("cy@example.net", job.NotSubscribed, "unsubscribed"))
	require.NoError(t, jr.Close())

	fake, relay := startRelay(t)
	got := map[string]mailmerge.RowResult{}
	res, err := send.Send(testContext(t), relay, mailmerge.SendOptions{Journal: path,
		OnRow: func(r mailmerge.RowResult) { got[r.Address] = r }})
	require.NoError(t, err)
	defer res.Close()
	for _, tc := range []struct {
		addr   string
		fate   job.Fate
		reason string
	}{
		{"ann@example.net", job.Suppressed, "on the global suppression list"},
		{"bob@example.net", job.Done, ""},
		{"cy@example.net", job.NotSubscribed, "unsubscribed"},
	} {
		assert.Equal(t, tc.fate, got[tc.addr].Fate, tc.addr)
		assert.Equal(t, tc.reason, got[tc.addr].Reason, tc.addr)
	}
	require.Len(t, fake.Messages(), 1)
	assert.Equal(t, []string{"bob@example.net"}, fake.Messages()[0].EnvelopeTo)
	assert.Equal(t, 1, res.Tally.Suppressed)
	assert.Equal(t, 1, res.Tally.NotSubscribed)
}

package mailmerge_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestContinueFromChainsSendNoRowTwice: a message corrected twice after partial sends, each
// run continuing from the journal of the one before: every row gets one message, for
// each journal takes over the records of the one it continued from.
func TestContinueFromChainsSendNoRowTwice(t *testing.T) {
	t.Parallel()
	fake, relay := startRelay(t)
	api := testAPI(t)
	dir := t.TempDir()
	var previous string
	for i, step := range []struct {
		subject string
		rows    []string
		sent    int
	}{
		{"News", []string{"a", "b"}, 2},
		{"News, fixed", []string{"a", "b", "c"}, 1},
		{"News, fixed again", []string{"a", "b", "c", "d"}, 1},
	} {
		var rows []mailmerge.Row
		for _, r := range step.rows {
			rows = append(rows, mailmerge.Row{Address: r + "@example.net"})
		}
		mm, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "n@example.com", Subject: step.subject, Text: "t"},
			mailmerge.Options{API: api, NoUnsubscribe: true})
		require.NoError(t, err)
		journal := filepath.Join(dir, strings.Repeat("j", i+1))
		res, err := mm.Send(testContext(t), relay, mailmerge.SendOptions{Journal: journal, ContinueFrom: previous})
		require.NoError(t, err, step.subject)
		assert.Equal(t, step.sent, res.Tally.Done, step.subject)
		assert.Equal(t, len(step.rows)-step.sent, res.SkippedContinued, step.subject)
		require.NoError(t, res.Close())
		previous = journal
	}
	counts := map[string]int{}
	for _, m := range fake.Messages() {
		counts[m.EnvelopeTo[0]]++
	}
	assert.Equal(t, map[string]int{"a@example.net": 1, "b@example.net": 1, "c@example.net": 1, "d@example.net": 1}, counts)
}

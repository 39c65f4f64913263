package mailmerge

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalFormatIs040s: every line of the journal sendloop 0.4.0 wrote
// (testdata/v0.4.0) reads back and is written again byte for byte, header included.
func TestJournalFormatIs040s(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/v0.4.0/news.journal")
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	require.Greater(t, len(lines), 2)
	b, err := parseJournalHeader(lines[0])
	require.NoError(t, err)
	header, err := json.Marshal(journalHeader{Version: journalVersion, Fingerprint: b.Fingerprint, ShardIndex: b.Shard.Index, ShardCount: b.Shard.Count})
	require.NoError(t, err)
	assert.Equal(t, string(lines[0]), string(header)+"\n")
	for _, line := range lines[1:] {
		if len(line) == 0 {
			continue
		}
		rec, err := parseJournalRecord(line)
		require.NoError(t, err, "%s", line)
		assert.Equal(t, string(line), string(encodeJournalRecord(rec)))
	}
}

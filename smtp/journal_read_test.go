package smtp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	b := smtp.JournalBinding{Fingerprint: "sha256:x", Shard: smtp.ShardSpec{Index: 1, Count: 2}}
	j, err := smtp.OpenJournal(path, b)
	require.NoError(t, err)
	require.NoError(t, j.Append(smtp.JournalRecord{Key: "a", State: smtp.JournalInFlight}))
	require.NoError(t, j.Append(smtp.JournalRecord{Key: "a", State: smtp.JournalSent}))
	require.NoError(t, j.Append(smtp.JournalRecord{Key: "b", State: smtp.JournalInFlight}))
	require.NoError(t, j.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"k":"c","s":"se`) // a torn last record
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	var got []string
	gb, err := smtp.ReadJournal(path, func(r smtp.JournalRecord) { got = append(got, r.Key+" "+r.State.String()) })
	require.NoError(t, err)
	assert.Equal(t, b, gb)
	assert.Equal(t, []string{"a in_flight", "a sent", "b in_flight"}, got)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "read only: the torn tail stays")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "not"), []byte("hello\n"), 0o644))
	_, err = smtp.ReadJournal(filepath.Join(dir, "not"), func(smtp.JournalRecord) {})
	require.ErrorIs(t, err, smtp.ErrJournalCorrupt)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	_, err = smtp.ReadJournal(filepath.Join(dir, "empty"), func(smtp.JournalRecord) {})
	require.ErrorIs(t, err, smtp.ErrJournalCorrupt)
	_, err = smtp.ReadJournal(filepath.Join(dir, "missing"), func(smtp.JournalRecord) {})
	require.ErrorIs(t, err, os.ErrNotExist)
}

package mailmerge

import (
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "j")
	b := JournalBinding{Fingerprint: "sha256:x", Shard: ShardSpec{Index: 1, Count: 2}}
	j, err := OpenJournal(path, b)
	require.NoError(t, err)
	require.NoError(t, j.append(record{Key: "a", Kind: journalkind.InFlight}))
	require.NoError(t, j.append(record{Key: "a", Kind: journalkind.Sent}))
	require.NoError(t, j.append(record{Key: "b", Kind: journalkind.InFlight}))
	require.NoError(t, j.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"k":"c","s":"se`) // a torn last record
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	var got []string
	gb, err := ReadJournal(path, func(r JournalRecord) { got = append(got, r.Key+" "+r.Fate.String()) })
	require.NoError(t, err)
	assert.Equal(t, b, gb)
	assert.Equal(t, []string{"a unknown", "a done", "b unknown"}, got)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "read only: the torn tail stays")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "not"), []byte("hello\n"), 0o644))
	_, err = ReadJournal(filepath.Join(dir, "not"), func(JournalRecord) {})
	require.ErrorIs(t, err, ErrJournalCorrupt)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	_, err = ReadJournal(filepath.Join(dir, "empty"), func(JournalRecord) {})
	require.ErrorIs(t, err, ErrJournalCorrupt)
	_, err = ReadJournal(filepath.Join(dir, "missing"), func(JournalRecord) {})
	require.ErrorIs(t, err, os.ErrNotExist)
}

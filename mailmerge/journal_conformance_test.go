package mailmerge_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/journaltest"
)

// TestFileJournalConformance runs the journal stores' suite against the file journal (one
// process at a time: no claims across live runs).
func TestFileJournalConformance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	journaltest.Run(t, journaltest.Store{
		Open: func(t *testing.T, name string, b mailmerge.JournalBinding, _ bool) mailmerge.JournalStore {
			j, err := mailmerge.OpenJournal(filepath.Join(dir, name+".journal"), b)
			require.NoError(t, err)
			return j
		},
		Close: func(t *testing.T, j mailmerge.JournalStore) { require.NoError(t, j.(*mailmerge.FileJournal).Close()) },
	})
}

//go:build unix

package mailmerge

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalIsPrivateUnderAnOpenUmask: a journal names every recipient, so it is created
// 0600 even when the umask would let anyone read it. Not parallel: the umask is the
// process's, and no parallel test runs while a sequential top-level test does.
func TestJournalIsPrivateUnderAnOpenUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tc := range []struct {
		name    string
		binding JournalBinding
	}{
		{"plain", testBinding},
		{"sharded", JournalBinding{Fingerprint: testBinding.Fingerprint, Shard: ShardSpec{Index: 1, Count: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name+".journal")
			j, err := OpenJournal(path, tc.binding)
			require.NoError(t, err)
			require.NoError(t, j.Close())
			info, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
}

package mailmerge

import (
	"errors"
	"fmt"
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJournalCloseReportsAFailedWrite: a record that could not be written
// (a full disk) leaves the journal without it, and a rerun reports its key
// unknown; the run that lost it must say so. When the failed record is a
// run's last (the run has nothing left to stop), Close is where a caller
// such as send --recipients learns of it.
func TestJournalCloseReportsAFailedWrite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal")
	j, err := OpenJournal(path, JournalBinding{Fingerprint: "sha256:test"})
	if err != nil {
		t.Fatal(err)
	}
	// A descriptor that cannot write stands for a full disk.
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rw := j.f
	j.f = ro
	defer rw.Close()
	werr := j.append(record{Key: "ann@example.net", Kind: journalkind.Sent})
	if werr == nil {
		t.Fatal("Append through a read-only descriptor succeeded")
	}
	if err := j.Close(); err == nil || !errors.Is(err, werr) {
		t.Errorf("Close = %v, want the failed write %v", err, werr)
	}
	if err := j.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

// TestJournalGroupFsyncLeavesTheLockFree: the fsync of a group runs in the background, so
// that connections record their messages meanwhile; Close waits for it, and every record
// is in the file.
func TestJournalGroupFsyncLeavesTheLockFree(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal")
	j, err := OpenJournal(path, JournalBinding{Fingerprint: "sha256:test"})
	require.NoError(t, err)
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var statAfter error
	j.fsync = func(f *os.File) error {
		held := false
		once.Do(func() { held = true })
		if held {
			close(started)
			<-release
			_, statAfter = f.Stat() // still open: Close waited
		}
		return f.Sync()
	}
	group := make(chan error, 1)
	go func() {
		var err error
		for i := range journalSyncEvery { // the last one fsyncs the group
			if err == nil {
				err = j.append(record{Key: fmt.Sprintf("u%d@example.net", i), Kind: journalkind.Sent})
			}
		}
		group <- err
	}()
	<-started
	// The fsync is held: a record from another connection goes through meanwhile.
	require.NoError(t, j.append(record{Key: "other@example.net", Kind: journalkind.Sent}))
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	close(release)
	require.NoError(t, <-group)
	require.NoError(t, <-closed)
	require.NoError(t, statAfter)
	n := 0
	_, err = ReadJournal(path, func(JournalRecord) { n++ })
	require.NoError(t, err)
	assert.Equal(t, journalSyncEvery+1, n)
}

// TestJournalFailedBackgroundFsyncStopsIt: an fsync that fails in the background stops the
// journal as a failed write does: Close reports it, and no record is taken after it.
func TestJournalFailedBackgroundFsyncStopsIt(t *testing.T) {
	t.Parallel()
	j, err := OpenJournal(filepath.Join(t.TempDir(), "journal"), JournalBinding{Fingerprint: "sha256:test"})
	require.NoError(t, err)
	failed := errors.New("disk gone")
	j.fsync = func(*os.File) error { return failed }
	for i := range journalSyncEvery {
		require.NoError(t, j.append(record{Key: fmt.Sprintf("u%d@example.net", i), Kind: journalkind.Sent}))
	}
	err = j.Close() // waits for the background fsync, then reports its failure
	require.ErrorIs(t, err, failed)
	assert.ErrorIs(t, j.append(record{Key: "late@example.net", Kind: journalkind.Sent}), failed)
}

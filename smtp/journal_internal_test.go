package smtp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	werr := j.Append(JournalRecord{Key: "ann@example.net", State: JournalSent})
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

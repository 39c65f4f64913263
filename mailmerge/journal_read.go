package mailmerge

import (
	"bufio"
	"errors"
	"fmt"
	"os"
)

// ReadJournal reads the journal file at path without writing to it: it returns the
// binding of its header and calls each with every record in the file's order (a key's
// later record supersedes its earlier ones). A torn last record is left out; a file that is
// not a journal, or a malformed record before the last one, is a *JournalCorruptError. It
// is what carrying on from an earlier journal reads, whatever message that journal is
// bound to.
func ReadJournal(path string, each func(JournalRecord)) (JournalBinding, error) {
	f, err := os.Open(path)
	if err != nil {
		return JournalBinding{}, fmt.Errorf("mailmerge: reading the journal: %w", err)
	}
	defer f.Close()
	b, hasHeader, _, err := parseJournal(bufio.NewReader(f), func(rec record, _ int64) { each(rec.public()) })
	var corrupt *JournalCorruptError
	switch {
	case errors.As(err, &corrupt):
		corrupt.Path = path
		return JournalBinding{}, corrupt
	case err != nil:
		return JournalBinding{}, fmt.Errorf("mailmerge: reading the journal %q: %w", path, err)
	case !hasHeader:
		return JournalBinding{}, &JournalCorruptError{Path: path, Line: 1, Err: errors.New("not a sendloop journal: no header")}
	}
	return b, nil
}

package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/go-sendloop/sendloop/listsync"
)

// rejectSink receives the rejected rows: into the --rejects file, or onto stderr; with
// --json also into a temporary file, for the document's rejected_rows.
type rejectSink struct {
	a      *app
	path   string
	f      *os.File
	w      *csv.Writer
	spool  *os.File
	spoolW *csv.Writer
	mu     sync.Mutex
	count  int
	gh     *githubReport  // GitHub Actions' annotations, nil elsewhere
	budget *budgetOutcome // set before finish when the run measured its rejects against --max-rejects
}

// addRow rejects a row of the file, reporting its address as written.
func (s *rejectSink) addRow(row listsync.MappedRow, reason string) {
	s.add(row.Line, row.Raw, reason)
}

func newRejectSink(a *app, path string, csvInfo os.FileInfo) (*rejectSink, error) {
	s := &rejectSink{a: a, path: path}
	if a.json {
		f, err := os.CreateTemp("", "sendloop-rejects-*.csv")
		if err != nil {
			return nil, err
		}
		// Read back through f only. Where an open file cannot be removed (Windows),
		// closeSpool removes it once closed.
		os.Remove(f.Name())
		s.spool, s.spoolW = f, csv.NewWriter(f)
	}
	if path == "" {
		return s, nil
	}
	if info, err := os.Stat(path); err == nil && os.SameFile(info, csvInfo) {
		s.abort()
		return nil, usagef("sync", "--rejects names the CSV file itself")
	}
	f, err := os.Create(path)
	if err != nil {
		s.abort()
		return nil, usagef("sync", "--rejects: %v", err)
	}
	s.f, s.w = f, csv.NewWriter(f)
	_ = s.w.Write([]string{"line", "email", "reason"})
	return s, nil
}

func (s *rejectSink) add(line int, email, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	s.gh.reject(line, email, reason)
	rec := []string{strconv.Itoa(line), email, reason}
	if s.spoolW != nil {
		_ = s.spoolW.Write(rec)
	}
	if s.w != nil {
		_ = s.w.Write(rec)
		return
	}
	if s.count <= maxRejectsShown {
		fmt.Fprintf(s.a.stderr, "sendloop: rejected line %d %s: %s\n", line, strconv.Quote(email), reason)
	}
}

// each calls fn with every rejected row so far, in the order they came (--json only).
func (s *rejectSink) each(fn func(line int, address, reason string) error) error {
	if s.spool == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spoolW.Flush()
	if err := s.spoolW.Error(); err != nil {
		return err
	}
	if _, err := s.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	defer s.spool.Seek(0, io.SeekEnd)
	r := csv.NewReader(bufio.NewReader(s.spool))
	r.FieldsPerRecord = 3
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line, _ := strconv.Atoi(rec[0])
		if err := fn(line, rec[1], rec[2]); err != nil {
			return err
		}
	}
}

// finish closes the file and returns the run's error: err, or one saying rows were rejected
// (a note instead when the rejects are within the budget).
func (s *rejectSink) finish(err error) error {
	s.closeSpool()
	if s.f != nil {
		s.w.Flush()
		werr := s.w.Error()
		if cerr := s.f.Close(); werr == nil {
			werr = cerr
		}
		s.f = nil
		if werr != nil {
			err = errors.Join(err, fmt.Errorf("writing %s: %w", s.path, werr))
		}
	}
	if s.count == 0 {
		return err
	}
	where := "listed in " + s.path
	if s.path == "" {
		where = "listed above"
		if s.a.json {
			where = "listed in rejected_rows"
		} else if s.count > maxRejectsShown {
			where = fmt.Sprintf("the first %d listed above; --rejects FILE keeps them all", maxRejectsShown)
		}
	}
	verb := "were"
	if s.count == 1 {
		verb = "was"
	}
	msg := fmt.Sprintf("%s %s rejected (%s)", plural(s.count, "row"), verb, where)
	if s.budget != nil {
		if s.budget.Held {
			fmt.Fprintf(s.a.stderr, "sendloop: %s, %s\n", msg, s.budget.describe())
			return err
		}
		if s.budget.given() {
			msg += ", " + s.budget.describe()
		}
	}
	return errors.Join(errors.New(msg), err)
}

// abort closes the files if finish was not reached.
func (s *rejectSink) abort() {
	s.closeSpool()
	if s.f != nil {
		s.w.Flush()
		s.f.Close()
		s.f = nil
	}
}

// closeSpool closes the --json spool and removes it: it was unlinked when created, except
// where an open file cannot be removed (Windows), and must not outlive the run there.
func (s *rejectSink) closeSpool() {
	if s.spool == nil {
		return
	}
	name := s.spool.Name()
	s.spool.Close()
	_ = os.Remove(name)
	s.spool, s.spoolW = nil, nil
}

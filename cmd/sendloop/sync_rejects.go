package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
)

// rejectSink receives the rejected rows: into the --rejects file, or onto stderr; with
// --json also into a temporary file, for the document's rejected_rows.
type rejectSink struct {
	a             *app
	path          string
	f             *os.File
	w             *csv.Writer
	spool         *rowSpool // --json only: the rows for the document's rejected_rows
	mu            sync.Mutex
	count         int            // rows rejected or refused
	unknown       int            // rows of unknown outcome
	gh            *githubReport  // GitHub Actions' annotations, nil elsewhere
	budget        *budgetOutcome // set before finish when the run measured its rejects against --max-rejects
	unknownBudget *budgetOutcome // likewise, its rows of unknown outcome against --max-unknown
}

// addRow rejects a row of the file, reporting its address as written.
func (s *rejectSink) addRow(row listsync.MappedRow, reason string) {
	s.add(listsync.RowResult{Kind: listsync.KindReject, Fate: job.Rejected, Line: row.Line, Address: row.Raw, Reason: reason})
}

// onRow is Apply's OnRow: the rows not done go to the rejects, the unsubscriptions that
// failed (which have no row) to stderr.
func (s *rejectSink) onRow(r listsync.RowResult) {
	switch {
	case r.Fate == job.Done:
	case r.Kind == listsync.KindUnsubscribe:
		fmt.Fprintf(s.a.stderr, "sendloop: unsubscribing %s: %v\n", r.Address, r.Err)
	default:
		s.add(r)
	}
}

// rowOutcome is the outcome column of a rejected row: rejected, refused or unknown.
func rowOutcome(f job.Fate) string {
	switch f {
	case job.Refused:
		return "refused"
	case job.Unknown:
		return "unknown"
	}
	return "rejected"
}

func newRejectSink(a *app, path string, csvInfo os.FileInfo) (*rejectSink, error) {
	s := &rejectSink{a: a, path: path}
	if a.json {
		s.spool = newRowSpool("sendloop-rejects-*")
	}
	if path == "" {
		return s, nil
	}
	if info, err := os.Stat(path); err == nil && os.SameFile(info, csvInfo) {
		s.abort()
		return nil, usagef("sync", "--rejects names the CSV file itself")
	}
	f, err := createPrivate(path)
	if err != nil {
		s.abort()
		return nil, usagef("sync", "--rejects: %v", err)
	}
	s.f, s.w = f, csv.NewWriter(f)
	_ = s.w.Write([]string{"line", "email", "reason", "outcome"})
	return s, nil
}

// add reports a row not applied: rejected by the sync, refused by the service, or of
// unknown outcome (counted apart: it is no reject, and the same sync again settles it).
func (s *rejectSink) add(r listsync.RowResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	outcome := rowOutcome(r.Fate)
	if r.Fate == job.Unknown {
		s.unknown++
		s.gh.unknownOutcome(r.Line, r.Address, r.Reason)
	} else {
		s.count++
		s.gh.warn(r.Line, outcome, r.Address, r.Reason)
	}
	rec := []string{strconv.Itoa(r.Line), r.Address, r.Reason, outcome}
	if s.spool != nil {
		b, _ := json.Marshal(rec)
		_ = s.spool.Append(b) // an error is Each's to report
	}
	if s.w != nil {
		_ = s.w.Write(rec)
		return
	}
	if s.count+s.unknown <= maxRejectsShown {
		what := outcome + " line"
		if r.Fate == job.Unknown {
			what = "outcome unknown for line"
		}
		fmt.Fprintf(s.a.stderr, "sendloop: %s %d %s: %s\n", what, r.Line, strconv.Quote(r.Address), r.Reason)
	}
}

// each calls fn with every row reported so far, in the order they came (--json only).
func (s *rejectSink) each(fn func(line int, address, reason, outcome string) error) error {
	if s.spool == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spool.Each(func(b []byte) error {
		var rec []string
		if err := json.Unmarshal(b, &rec); err != nil || len(rec) != 4 {
			return fmt.Errorf("the rejected rows' spool holds a record that is not a row (%v)", err)
		}
		line, _ := strconv.Atoi(rec[0])
		return fn(line, rec[1], rec[2], rec[3])
	})
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
	verb := "were"
	if s.count == 1 {
		verb = "was"
	}
	return errors.Join(
		s.over(s.count, s.budget, fmt.Sprintf("%s %s rejected", plural(s.count, "row"), verb), ""),
		s.over(s.unknown, s.unknownBudget, plural(s.unknown, "row")+" of unknown outcome", ": the same sync run again settles them"),
		err)
}

// over returns the error for n rows reported (what says so; then where they are listed,
// and tail), or nil with a note when budget holds them.
func (s *rejectSink) over(n int, budget *budgetOutcome, what, tail string) error {
	if n == 0 {
		return nil
	}
	where := "listed in " + s.path
	if s.path == "" {
		where = "listed above"
		if s.a.json {
			where = "listed in rejected_rows"
		} else if s.count+s.unknown > maxRejectsShown {
			where = fmt.Sprintf("the first %d listed above; --rejects FILE keeps them all", maxRejectsShown)
		}
	}
	msg := fmt.Sprintf("%s (%s)", what, where)
	if budget != nil {
		if budget.Held {
			fmt.Fprintf(s.a.stderr, "sendloop: %s, %s\n", msg, budget.describe())
			return nil
		}
		if budget.given() {
			msg += ", " + budget.describe()
		}
	}
	return errors.New(msg + tail)
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

// closeSpool closes the --json spool, which removes its file.
func (s *rejectSink) closeSpool() {
	if s.spool == nil {
		return
	}
	s.spool.Close()
	s.spool = nil
}

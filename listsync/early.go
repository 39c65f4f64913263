package listsync

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
)

// earlyRead is the plan's reading of a CSV file that New starts before list.get: a row's
// address and fingerprints depend on which columns hold the address and the fields, which
// the header tells, not on the fields' IDs, which the list tells. The reading is made with
// the mapping the header gives when each of its other columns names a field; once the list
// is read, it is kept if the list maps the same columns the same way, and the plan goes on
// from it. Over a link with a round trip to spare, the file is then read while list.get
// and the first page are under way instead of after them.
type earlyRead struct {
	p      *planner
	guess  *Mapping
	cancel context.CancelCauseFunc
	done   chan error // readSource's outcome, sent once
	hook   atomic.Pointer[func(offset int64)]
}

// errEarlyUnused ends an early reading that no plan took.
var errEarlyUnused = errors.New("listsync: the early reading of the source was not used")

// guessedFieldID is where the IDs of the fields guessed from a header start: above any ID
// a list gives, so that a column named CustomField<id> is taken by its name.
const guessedFieldID = 1 << 30

// startEarlyRead starts reading f for a plan, with the mapping its header gives when every
// column that holds no address, status or read-only value names a custom field. It returns
// nil when that mapping fails (columns mapped explicitly, an unnamed column, …): the plan
// reads the file once the list is known. The reading does not end with ctx, only New's
// call: a Job outlives it.
func startEarlyRead(ctx context.Context, f *CSVFile, opts Options) *earlyRead {
	fields := make([]Field, len(f.Header))
	for i, name := range f.Header {
		fields[i] = Field{ID: guessedFieldID + i, Name: strings.TrimSpace(name)}
	}
	guess, err := f.mapping(fields)
	if err != nil {
		return nil
	}
	e := &earlyRead{guess: guess, done: make(chan error, 1)}
	e.p, err = newPlanner(guess, plannerOptions{
		UnsubscribeMissing: opts.UnsubscribeMissing,
		TempDir:            opts.TempDir,
		Progress: func(offset int64) {
			if hook := e.hook.Load(); hook != nil {
				(*hook)(offset)
			}
		},
	})
	if err != nil {
		return nil
	}
	var readCtx context.Context
	readCtx, e.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	go func() {
		e.done <- e.p.readSource(readCtx, func() (pass, error) { return f.open(readCtx, guess) })
	}()
	return e
}

// fits reports whether the list's mapping m reads the file's rows as the guess did: the
// same address, status and field columns, in the same order, values trimmed alike.
func (e *earlyRead) fits(m *Mapping) bool {
	g := e.guess
	if m.Columns != g.Columns || m.Email != g.Email || m.Status != g.Status || m.keepSpaces != g.keepSpaces ||
		len(m.Fields) != len(g.Fields) {
		return false
	}
	for i, f := range m.Fields {
		if f.Column != g.Fields[i].Column {
			return false
		}
	}
	return true
}

// claim hands the planner to a plan: it takes the list's mapping (the reading goroutine
// uses the guess's, which reads the rows alike) and reports the reading's progress to
// progress from now on.
func (e *earlyRead) claim(m *Mapping, progress func(offset int64)) *planner {
	e.p.mapping = m
	e.hook.Store(&progress)
	return e.p
}

// wait waits for the end of the reading, which ends early when ctx does, and returns its
// error.
func (e *earlyRead) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { e.cancel(context.Cause(ctx)) })
	defer stop()
	return <-e.done
}

// abandon stops the reading and removes its files, once it has stopped. A nil earlyRead
// does nothing.
func (e *earlyRead) abandon() {
	if e == nil {
		return
	}
	e.cancel(errEarlyUnused)
	<-e.done
	e.p.close()
}

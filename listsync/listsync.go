// Package listsync keeps a Sendloop list in step with a source of subscribers: a CSV file, a
// database query, a JSON export. It is the engine of `sendloop sync`, for Go programs.
//
// A sync has three steps. New reads the list (list.get) and maps the source's columns to
// the list's custom fields, by name or by key CustomField<id>. Job.Plan reads the list's
// members (Options.Concurrency pages at once) and its suppression lists, all at the same
// time and while it reads the source (New starts the first page, the suppression lists and
// a CSV file's reading beside list.get: none of them needs its answer, and a first sync
// does not wait for one after the other), and compares them address by address,
// case-insensitively: which rows add an address, which update a member's custom fields,
// which members the source does not name (unsubscribed with Options.UnsubscribeMissing),
// which rows are skipped (members who unsubscribed, suppressed addresses) and which are
// rejected, with why. Plan.Apply makes the changes: additions through subscriber.import in
// batches, updates by subscriber ID, and unsubscriptions from this list only, never from
// every list.
//
// # Sources
//
// OpenCSV reads CSV files as spreadsheets write them, through package csvfile: UTF-8 or
// UTF-16 with a byte-order mark, or latin1 and windows-1252 when told; comma, semicolon or
// tab detected from the header line or from Excel's "sep=" line; RFC 4180 quoting, a quoted
// value read byte for byte (a line break in it stays CRLF, LF or CR, as written, so that it
// compares equal to the value the service holds). Every rejected record is reported with
// the line it starts on. The address column is EmailAddress in any common spelling (Email,
// E-mail, "Email Address", Mail) or the column HeaderOptions.Columns maps; spaces around
// addresses are trimmed. csvfile reads the records (and, for any program reading a recipient
// file, yields each as its address and its other columns by name); a Mapping reads them as
// a sync's rows.
//
// RowFunc and Rows take rows from anywhere, as an iter.Seq2[Row, error]: each Row carries
// its position for reports, its address, and its custom-field values keyed by field name or
// CustomField<id>.
//
// # The source is read twice
//
// The plan keeps no row: it keeps, on disk, a 48-byte record per member and per row (a
// fingerprint of the address and of the values, and the row's line), whatever the size of
// the list and of the source. Applying the plan reads the source again, and once more to
// trace the rows the service refused to their lines. So a Source is one that can be read
// again: a CSVFile opens its file again and refuses it when its size or modification time
// changed; RowFunc calls its function again. Each row read again is checked against the
// plan: a row that no longer holds the address planned for it, or that the source no longer
// yields, is not applied but rejected with ReasonFileChanged, so that a source that changed
// in between never applies one row's values to another address and leaves no planned row
// unaccounted. A source that cannot be read twice (stdin, a stream) is
// spooled to a file first, or held in memory with Rows.
//
// # Safety
//
// Members who unsubscribed are not subscribed again, and suppressed addresses are not
// added: both are skipped. Unsubscribing the members a source does not name is refused
// (Plan.Check, and Apply before any change) when the source names no subscriber at all,
// when a record could not be parsed (an unterminated quote swallows the lines after it), and
// beyond ApplyOptions.MaxUnsubscribe (job.DefaultMaxUnsubscribe, 10 % of the list's
// members, in DefaultApplyOptions; the zero Budget allows none). Apply judges
// ApplyOptions.MaxRejects and MaxUnknown once, at the end, and returns a *job.BudgetError
// beside its whole Result. A member whose
// row is rejected but names the address is kept.
//
// # Interruption
//
// Apply stops starting calls when its context ends; the calls in flight get
// ApplyOptions.Stop.Grace to finish, and end at once when ApplyOptions.Stop.Work ends. The Result
// accounts for every row of the source, a job.Fate each (job.Done, job.Skipped,
// job.Suppressed, job.Rejected, job.Refused, job.Unknown or job.NotAttempted, the rows not
// done with a reason through ApplyOptions.OnRow), and for every change in a job.Tally of
// its kind. A cancelled row is never reported as rejected:
// running the same sync again finishes the job.
//
// # Runs from a state
//
// With Options.State, a sync keeps a state of the list in a file, and a nightly run costs
// what changed rather than the size of the list. After an Apply that finished (not
// interrupted, no error), the state holds every member the plan knew, of any status: its
// subscriber ID, its address (normalised, lower-cased), its status and a fingerprint of
// the mapped fields' values; and the rows whose outcome is unknown, marked so. It is bound
// to the account (the base URL and the API key: a rotated key is another account), the
// list and the mapping, and records when the members were last read whole.
//
// Plan then compares the source with the state instead of reading the members: updates
// and unsubscriptions are planned for the rows and members that differ from it. Each
// address the state does not know (or marks unknown) is read back with subscriber.get
// before it is planned as an addition: a member of any status is planned as a full run
// would plan it (updated, unchanged, or skipped when unsubscribed), so a run from the
// state never subscribes again an address that unsubscribed. Additions are checked
// against the suppression lists, and the unsubscription guard counts the state's members,
// as in a full run. One list.getlist call compares the list's subscribed members with the
// state's. An unchanged list costs 4 calls (list.get, the two suppression reads,
// list.getlist); a run with changes costs one call per addition, update and
// unsubscription, plus the imports' batches and those 4.
//
// The run reads the members (a full run, writing a fresh state) when the state is
// missing, unreadable, bound to another account, list or mapping, older than
// StateOptions.MaxAge since its last full read (7 days by default), marked in use by a run
// that did not finish (Apply marks it, and syncs the mark, before its first change), or
// when the drift between the list's subscribed members and the state's is beyond
// StateOptions.MaxDrift (5 % of the state's members by default); and with
// StateOptions.Full. Plan.State says which run it was, and why. A lock keeps two runs from
// using one state at once. A plan that is not applied (a dry run) writes no state.
//
// What a run from the state cannot see until the next full run: members added on the
// service side are not unsubscribed by UnsubscribeMissing (the state does not know them);
// a member who unsubscribed on the service side may have their fields updated (a state
// run still believes them subscribed; they are never subscribed again); a member deleted
// on the service side is not added again while the source names it (an update answered
// "not in the list" forgets it, and the next run adds it), and if the source drops it
// before the next full run it stays deleted where full runs would have added it and kept
// it; a field edited on the service side is not set back. For a nightly job: a state every
// night, a full run (StateOptions.Full) once a week.
//
// The state is a copy of the list's personal data that a CI job keeps between runs. It is
// compressed, then encrypted with AES-256-GCM in 64 KiB chunks (cut, reordered or changed
// chunks do not read) under a key the client derives from its API key
// (sendloop.Client.DeriveKey, which never hands the key out): it tells nothing to anyone
// without the key, who could not read the list either. It is written with mode 0600 to a
// temporary file renamed into place, as a stream at flat memory: about 22 bytes per member
// of varied addresses at 1M and 10M members (BenchmarkStateSize). Do not keep it in an artifact or cache of a public repository,
// which anyone may download.
//
// # Memory and speed
//
// A plan keeps about 48 bytes per member and per row in memory-bounded sorted runs on disk,
// and the members' addresses and values in a temporary file (about 100 bytes per member and
// row, in Options.TempDir, unlinked as soon as created so that even a killed process leaves
// none; on Windows, where an open file cannot be unlinked, they are removed when the plan is
// closed, and a killed process leaves them behind). Its heap stays flat, so a job may let
// the garbage collector work less often: `sendloop sync` runs with debug.SetGCPercent(150).
//
// Where the service says nothing, listsync takes the most tolerant sound course, and says
// so where it does: members pending a double opt-in confirmation count as members; an empty
// value empties the field; addresses are compared case-insensitively, as the service does.
package listsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/go-sendloop/sendloop"
)

// defaultConcurrency is the number of API calls a sync keeps in flight by default.
const defaultConcurrency = 4

// Options tunes a sync; the zero value plans additions and updates only.
type Options struct {
	// UnsubscribeMissing plans the unsubscription of the members the source does not name.
	UnsubscribeMissing bool
	// Concurrency is the number of API calls kept in flight (4 when 0):
	// the pages of members asked for at once while planning, and the calls of Apply.
	Concurrency int
	// TempDir is where the plan keeps its temporary files; "" means os.TempDir().
	TempDir string
	// Progress, when set, is called now and then while the plan is made, from more than
	// one goroutine.
	Progress func(PlanProgress)
	// State, when set, keeps a state of the list in a file: Plan compares the source with
	// it instead of reading the members when it can, and Apply writes it afresh once it
	// finishes (see the package documentation, "Runs from a state").
	State *StateOptions
}

// PlanProgress says how far the reading of the list and the source went.
type PlanProgress struct {
	// Members is the number of members read so far.
	Members int
	// Read is how far the source has been read: bytes of a CSV file, rows of another source.
	Read int64
}

// Job is a sync of one list with one source, ready to plan.
type Job struct {
	client  *sendloop.Client
	listID  int
	src     Source
	opts    Options
	list    *sendloop.List
	mapping *Mapping
	pre     atomic.Pointer[prefetch] // what New started for the first Plan
}

// New reads the list (with its custom fields) and maps the source's columns to them. A
// column that names nothing known is a *HeaderError (see HeaderOptions).
//
// Without Options.State, New also starts what the first Plan needs and can have before
// list.get answers: the members' first page, the suppression lists, and the reading of a
// CSV file through the mapping its header suggests (kept when the list's fields map the
// columns alike). They run on ctx after New returns, and Plan waits for them: a first sync
// then costs about one round trip and the join before its first import, not three. A Job
// that is never planned lets them end on their own: three calls, one reading of the file,
// and temporary files closed when the Job is garbage-collected.
func New(ctx context.Context, c *sendloop.Client, listID int, src Source, opts Options) (*Job, error) {
	if listID <= 0 {
		return nil, fmt.Errorf("listsync: list ID %d: want a positive ID", listID)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	j := &Job{client: c, listID: listID, src: src, opts: opts}
	var pre *prefetch
	if opts.State == nil {
		// A run from a state walks no members: its call budget has no first page.
		pre = j.startPrefetch(ctx)
	}
	list, err := c.Lists.Get(ctx, listID, sendloop.ListGetParams{CustomFields: true})
	if err == nil {
		j.list = list
		j.mapping, err = src.mapping(ListFields(list))
	}
	if err != nil {
		if pre != nil {
			pre.abandon()
			if pre.early != nil {
				pre.early.p.close()
			}
		}
		return nil, err
	}
	if pre != nil {
		pre.keepFor(j.mapping)
		j.pre.Store(pre)
	}
	return j, nil
}

// planCounters are what a plan reports through Options.Progress.
type planCounters struct{ members, read atomic.Int64 }

// report hands Options.Progress the counts.
func (j *Job) report(c *planCounters) {
	if j.opts.Progress != nil {
		j.opts.Progress(PlanProgress{Members: int(c.members.Load()), Read: c.read.Load()})
	}
}

// newPlanner returns a planner of the job's rows read through m, which counts its reading
// in c.
func (j *Job) newPlanner(m *Mapping, c *planCounters) (*planner, error) {
	return newPlanner(m, plannerOptions{
		UnsubscribeMissing: j.opts.UnsubscribeMissing,
		TempDir:            j.opts.TempDir,
		Progress:           func(offset int64) { c.read.Store(offset); j.report(c) },
	})
}

// ListFields returns a list's custom fields, as ExportHeader takes them.
func ListFields(l *sendloop.List) []Field {
	out := make([]Field, 0, len(l.CustomFields))
	for _, f := range l.CustomFields {
		out = append(out, Field{ID: f.CustomFieldID, Name: f.FieldName})
	}
	return out
}

// List returns the list as list.get described it.
func (j *Job) List() *sendloop.List { return j.list }

// Mapping returns how the source's columns map to the address and the custom fields.
func (j *Job) Mapping() *Mapping { return j.mapping }

// open returns the opener of the source's passes.
func (j *Job) open(ctx context.Context) opener {
	return func() (pass, error) { return j.src.open(ctx, j.mapping) }
}

// CountRows counts the source's rows without planning: the rows a sync stopped while it
// planned did not reach.
func (j *Job) CountRows(ctx context.Context) (int, error) {
	r, err := j.open(ctx)()
	if err != nil {
		return 0, err
	}
	defer r.close()
	n := 0
	for {
		if _, err := r.next(); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// Plan reads the list's members and its suppression lists (the list's and the global one)
// while it reads the source, and compares them. With Options.State, it compares the source
// with the state instead of the members when it can (Plan.State says whether it did, and
// why not). It stops when ctx ends. The plan holds temporary files (and the state's lock):
// Close it.
func (j *Job) Plan(ctx context.Context) (*Plan, error) {
	if pre := j.pre.Swap(nil); pre != nil {
		return j.planPrefetched(ctx, pre)
	}
	var counts planCounters
	report := func() { j.report(&counts) }
	newP := func() (*planner, error) { return j.newPlanner(j.mapping, &counts) }
	var st *stateRun
	if j.opts.State != nil {
		var err error
		if st, err = j.startState(); err != nil {
			return nil, err
		}
	}
	p, err := newP()
	if err != nil {
		st.close()
		return nil, err
	}
	var pl *Plan
	if st != nil && st.use.Used {
		p.forget = func(off uint64) { st.outcome(off, outGone, 0) }
		pl, err = j.makePlan(ctx, p, j.readAll(p), func(ctx context.Context) error {
			return j.readSuppressedWith(ctx, p, func(ctx context.Context) error {
				return st.feed(ctx, j, p, func() {
					if counts.members.Add(1)%sendloop.BrowsePageSize == 0 {
						report()
					}
				})
			})
		})
		var fb *stateFallback
		switch {
		case errors.As(err, &fb) && ctx.Err() == nil:
			st.fallBack(fb.reason)
			p.close()
			counts.members.Store(0)
			if p, err = newP(); err != nil {
				st.close()
				return nil, err
			}
			pl = nil
		case err == nil:
			err = j.lookUp(ctx, pl)
		}
	}
	if pl == nil && err == nil {
		pl, err = j.makePlan(ctx, p, j.readAll(p), func(ctx context.Context) error { return j.readMembers(ctx, p, &counts.members, report) })
	}
	if err != nil {
		p.close()
		st.close()
		return nil, err
	}
	pl.job, pl.state = j, st
	if st != nil {
		pl.State = st.use
	}
	return pl, nil
}

// readAll returns makePlan's reading of the whole source into p.
func (j *Job) readAll(p *planner) func(context.Context) error {
	return func(ctx context.Context) error { return p.readSource(ctx, j.open(ctx)) }
}

// planPrefetched is Plan from what New started: the planner of the early reading when New
// kept it, and the prefetched calls.
func (j *Job) planPrefetched(ctx context.Context, pre *prefetch) (*Plan, error) {
	report := func() { j.report(&pre.counts) }
	var p *planner
	var read func(ctx context.Context) error
	if er := pre.early; er != nil {
		p = er.p
		read = func(ctx context.Context) error { return j.readRows(ctx, er) }
	} else {
		var err error
		if p, err = j.newPlanner(j.mapping, &pre.counts); err != nil {
			pre.abandon()
			return nil, err
		}
		read = j.readAll(p)
	}
	pl, err := j.makePlan(ctx, p, read, func(ctx context.Context) error { return j.readPrefetchedMembers(ctx, pre, p, report) })
	// The calls have answered or been stopped, and the reading has ended: this waits for
	// nothing, and releases their context.
	pre.abandon()
	if err != nil {
		p.close()
		return nil, err
	}
	pl.job = j
	return pl, nil
}

// makePlan reads the members and the suppression lists into the planner (feed) while it
// reads the source (read; the three do not depend on each other), then plans.
func (j *Job) makePlan(ctx context.Context, p *planner, read, feed func(context.Context) error) (*Plan, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fileDone := make(chan error, 1)
	go func() {
		err := read(ctx)
		if err != nil {
			cancel(err)
		}
		fileDone <- err
	}()
	membersErr := feed(ctx)
	if membersErr != nil {
		cancel(membersErr)
	}
	fileErr := <-fileDone
	switch {
	case membersErr != nil && !errors.Is(membersErr, context.Canceled):
		return nil, membersErr
	case fileErr != nil && !errors.Is(fileErr, context.Canceled):
		return nil, fileErr
	case membersErr != nil || fileErr != nil:
		return nil, context.Cause(ctx)
	case ctx.Err() != nil:
		// Every read came back, the last answers as the context ended: the caller asked to
		// stop all the same, and a plan it did not wait for must not be applied.
		return nil, context.Cause(ctx)
	}
	// An early reading's planner was made with the mapping its header suggested, which
	// reads the rows as the list's does; the members' values are the list's fields'.
	p.mapping = j.mapping
	return p.finish()
}

// Package listsync keeps a Sendloop list in step with a source of subscribers: a CSV file, a
// database query, a JSON export. It is the engine of `sendloop sync`, for Go programs.
//
// A sync has three steps. New makes the Job, and does no I/O. Job.Plan reads the list
// (list.get) and maps the source's columns to the list's custom fields, by name or by key
// CustomField<id>, and reads the list's members (Options.Concurrency pages at once) and
// its suppression lists, all at the same time and while it reads the source (the first
// page, the suppression lists and a CSV file's reading start beside list.get: none of them
// needs its answer, and a first sync does not wait for one after the other; all have
// ended when Plan returns), and compares them address by address,
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
// address the plan would add that the state does not know (or marks unknown), each member
// it would update, and each member the state holds as unsubscribed whose row differs from
// the state, is read back by the row's address with subscriber.get before it is decided:
// a member of any status is planned as a full run would plan it (updated, unchanged, or
// skipped when unsubscribed), and an address without one as an addition. So a run from
// the state never subscribes again an address that unsubscribed, updates a member who
// subscribed again on the service side, and never writes a row's values onto another
// member: the updates go by the row's address, not by the state's subscriber ID, which an
// address changed on the service side gives to another address. Additions are checked
// against the suppression lists, and the unsubscription guard counts the state's members,
// as in a full run. Two calls measure the drift: list.getlist's subscribed count against
// the state's (the net change), and the legacy Chart.ListActivity's daily subscriptions
// and unsubscriptions since the state's base (the state records what the chart counted
// when it was read whole, plus the sync's own changes since), so that a sign-up offset by
// an unsubscription counts as two; the drift is the larger. An unchanged list costs 5
// calls (list.get, the two suppression reads, list.getlist, Chart.ListActivity); a run
// with changes costs one call per addition and unsubscription and two per update (its
// reading back), plus the imports' batches and those 5.
//
// The run reads the members (a full run, writing a fresh state) when the state is
// missing, unreadable, bound to another account, list or mapping, older than
// StateOptions.MaxAge since its last full read (7 days by default), marked in use by a run
// that did not finish (Apply marks it, and syncs the mark, before its first change), when
// the service's activity chart does not reach back to the state's base, or when the drift
// is beyond StateOptions.MaxDrift (5 % of the state's members by default); and with
// StateOptions.Full. Plan.State says which run it was, and why. A lock keeps two runs from
// using one state at once. A plan that is not applied (a dry run) writes no state.
//
// The state also records which members are the sync's: those it added, and those its
// source named at some run. With a state, UnsubscribeMissing unsubscribes those only; a
// member the service added that the source never named (a sign-up form's) is kept, and
// counted in Plan.KeptNotOwned (Options.UnsubscribeAll unsubscribes every absent member,
// an exact mirror). A state that records no owners (none yet, unreadable, or written by
// sendloop 0.4.0) leaves every absent member kept that run, which records the owners
// (StateUse.NoOwners says so). A full run with a state reads the owners from it.
//
// What the drift cannot see: a member deleted on the service side offset by a sign-up
// (the chart counts neither a deletion nor, for an address that came back, its earlier
// subscription), changes of fields, and changes within the allowed drift. What a run from
// the state cannot see until the next full run, because the source names the address with
// the values the state holds (nothing to read back): members added on
// the service side (the owned rule keeps them anyway; UnsubscribeAll unsubscribes them at
// the next full run); a member deleted on the service side (not added again until its row
// changes or a full run), or whose address was changed there (the old address is not added
// again); a member who subscribed again on the service side (counted as skipped, where a
// full run counts them unchanged); a field edited on the service side (not set back). A
// member who unsubscribed on the service side is never subscribed again, nor updated once
// read back. For a nightly job: a state every night, a full run (StateOptions.Full) once a
// week.
//
// The state is a file unless StateOptions.Store keeps it elsewhere (a StateStore):
// package listsync/pgstate keeps it in PostgreSQL, so that runs on machines that keep no
// disk (a fresh CI runner each night) still plan from it, with the same checks.
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
	"github.com/go-sendloop/sendloop/job"
)

// defaultConcurrency is the number of API calls a sync keeps in flight by default.
const defaultConcurrency = 4

// Options tunes a sync; the zero value plans additions and updates only.
type Options struct {
	// UnsubscribeMissing plans the unsubscription of the members the source does not name.
	// With State, only of those that are the sync's: members it added, or that its source
	// named at some run (the state records them); a member the service added (a sign-up
	// form's) is kept, counted in Plan.KeptNotOwned. Without a state, which records no
	// owners, every member the source does not name.
	UnsubscribeMissing bool
	// UnsubscribeAll makes UnsubscribeMissing unsubscribe every member the source does not
	// name, the sync's or not, with a state too: an exact mirror.
	UnsubscribeAll bool
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
	// Observer, when set, is told of the sync's two phases, job.Phase{Job: "sync", Name:
	// "plan"} and {Job: "sync", Name: "apply"}: their start, the fates of their rows (the
	// plan's rows as it decided them, the apply's per kind of change), and their end; the
	// phases' calls run under the context PhaseStarted returns (package otel's spans nest
	// so).
	Observer job.Observer
}

// The phases a sync reports to Options.Observer.
var (
	planPhase  = job.Phase{Job: "sync", Name: "plan"}
	applyPhase = job.Phase{Job: "sync", Name: "apply"}
)

// PlanProgress says how far the reading of the list and the source went.
type PlanProgress struct {
	// Members is the number of members read so far.
	Members int
	// Read is how far the source has been read: bytes of a CSV file, rows of another source.
	Read int64
	// Mapping is how the source's columns map to the list's fields, once list.get has
	// answered (nil before): Plan reports it as soon as it knows it, so that a tool can
	// say how it reads the source while the rest is read.
	Mapping *Mapping
}

// Job is a sync of one list with one source, ready to plan.
type Job struct {
	client  *sendloop.Client
	listID  int
	src     Source
	opts    Options
	list    *sendloop.List
	mapping *Mapping
	mapped  atomic.Pointer[Mapping] // mapping, for the progress reports of other goroutines
	closed  bool
}

// New returns the sync of list listID with src. It makes no API call and starts nothing:
// Plan reads the list, maps the source's columns to its custom fields, and reads the
// rest, all at once. (A CSVFile's header was read by OpenCSV, which opens the file.)
func New(ctx context.Context, c *sendloop.Client, listID int, src Source, opts Options) (*Job, error) {
	switch {
	case listID <= 0:
		return nil, fmt.Errorf("listsync: list ID %d: want a positive ID", listID)
	case c == nil || src == nil:
		return nil, errors.New("listsync: New needs a client and a source")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = defaultConcurrency
	}
	return &Job{client: c, listID: listID, src: src, opts: opts}, nil
}

// Close releases the Job: a Plan made from it stays usable (it has its own Close), but
// the Job plans no more. A Job holds no file or call between its methods, so Close has
// nothing else to end; it is safe to call twice.
func (j *Job) Close() error {
	j.closed = true
	return nil
}

// describeList reads the list (list.get, with its custom fields) and maps the source's
// columns to them, once: a column that names nothing known is a *HeaderError.
func (j *Job) describeList(ctx context.Context) error {
	if j.mapping != nil {
		return nil
	}
	list, err := j.client.Lists.Get(ctx, j.listID, sendloop.ListGetParams{CustomFields: true})
	if err != nil {
		return err
	}
	m, err := j.src.mapping(ListFields(list))
	if err != nil {
		return err
	}
	j.list, j.mapping = list, m
	j.mapped.Store(m)
	return nil
}

// planCounters are what a plan reports through Options.Progress.
type planCounters struct{ members, read atomic.Int64 }

// report hands Options.Progress the counts.
func (j *Job) report(c *planCounters) {
	if j.opts.Progress != nil {
		j.opts.Progress(PlanProgress{Members: int(c.members.Load()), Read: c.read.Load(), Mapping: j.mapped.Load()})
	}
}

// newPlanner returns a planner of the job's rows read through m, which counts its reading
// in c.
func (j *Job) newPlanner(m *Mapping, c *planCounters) (*planner, error) {
	return newPlanner(m, plannerOptions{
		UnsubscribeMissing: j.opts.UnsubscribeMissing,
		Owners:             j.opts.State != nil && !j.opts.UnsubscribeAll,
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

// List returns the list as list.get described it, once Plan has read it (nil before).
func (j *Job) List() *sendloop.List { return j.list }

// Mapping returns how the source's columns map to the address and the custom fields, once
// Plan has read the list (nil before).
func (j *Job) Mapping() *Mapping { return j.mapping }

// open returns the opener of the source's passes.
func (j *Job) open(ctx context.Context) opener {
	return func() (pass, error) { return j.src.open(ctx, j.mapping) }
}

// CountRows counts the source's rows without planning: the rows a sync stopped while it
// planned did not reach. It needs the mapping, which Plan reads: before a Plan it reads the
// list first.
func (j *Job) CountRows(ctx context.Context) (int, error) {
	if err := j.describeList(ctx); err != nil {
		return 0, err
	}
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

// Plan reads the list (list.get, once per Job) and maps the source's columns to its
// custom fields, reads the list's members and its suppression lists (the list's and the
// global one) while it reads the source, and compares them. The reads that need nothing
// list.get says (the members' first page, the suppression lists, and a CSV file's reading
// through the mapping its header suggests, kept when the list's fields map the columns
// alike) start beside list.get, so that a first sync costs about one round trip and the
// join before its first import, not three; every read Plan starts has ended when it
// returns. With Options.State, it compares the source with the state instead of the
// members when it can (Plan.State says whether it did, and why not). It stops when ctx
// ends. A column that names nothing known is a *HeaderError. The plan holds temporary
// files (and the state's lock): Close it.
func (j *Job) Plan(ctx context.Context) (pl *Plan, err error) {
	obs := j.opts.Observer
	if obs == nil {
		return j.plan(ctx)
	}
	ctx = obs.PhaseStarted(ctx, planPhase)
	pl, err = j.plan(ctx)
	var rows job.Tally
	if pl != nil {
		rows = pl.tally()
		obs.RowsDone(ctx, planPhase, rows)
	}
	obs.PhaseEnded(ctx, planPhase, rows, err)
	return pl, err
}

// tally is the plan's rows by what it decided for them: rejected, suppressed, skipped (a
// member who unsubscribed, a status column), and the rest done (a change planned, or none
// needed).
func (pl *Plan) tally() job.Tally {
	t := job.Tally{Rejected: pl.Rejected, Suppressed: pl.SkippedSuppressed, Skipped: pl.SkippedUnsubscribed + pl.SkippedStatus}
	t.Done = max(pl.Rows-t.Total(), 0)
	return t
}

func (j *Job) plan(ctx context.Context) (*Plan, error) {
	if j.closed {
		return nil, errors.New("listsync: the Job is closed")
	}
	var pre *prefetch
	if j.opts.State == nil {
		// A run from a state walks no members: its call budget has no first page. Nor can
		// it open the state before list.get: the state is bound to the mapping.
		pre = j.startPrefetch(ctx, j.mapping == nil)
		defer pre.end()
	}
	if err := j.describeList(ctx); err != nil {
		return nil, err
	}
	if pre != nil {
		j.report(&pre.counts) // the mapping is known
		pre.keepFor(j.mapping)
		pl, err := j.planFull(ctx, pre, nil)
		if pl != nil {
			pl.UnsubscribeRule = j.unsubscribeRule()
		}
		return pl, err
	}
	j.report(&planCounters{})
	st, err := j.startState(ctx)
	if err != nil {
		return nil, err
	}
	pl, err := j.planState(ctx, st)
	if err == nil && pl == nil {
		// No plan from the state: a full run, as without one.
		pre = j.startPrefetch(ctx, false)
		defer pre.end()
		pl, err = j.planFull(ctx, pre, st)
	}
	if err != nil {
		st.close()
		return nil, err
	}
	pl.state, pl.State = st, st.use
	pl.UnsubscribeRule = j.unsubscribeRule()
	return pl, nil
}

// unsubscribeRule names the rule UnsubscribeMissing follows (Plan.UnsubscribeRule).
func (j *Job) unsubscribeRule() string {
	switch {
	case !j.opts.UnsubscribeMissing:
		return "none"
	case j.opts.State != nil && !j.opts.UnsubscribeAll:
		return "owned"
	}
	return "all"
}

// planState plans from the state when st says it may, and returns a nil Plan when the
// run is a full one after all (st.use says why).
func (j *Job) planState(ctx context.Context, st *stateRun) (*Plan, error) {
	if !st.use.Used {
		return nil, nil
	}
	var counts planCounters
	p, err := j.newPlanner(j.mapping, &counts)
	if err != nil {
		return nil, err
	}
	p.forget = func(off uint64) { st.outcome(off, outGone, 0) }
	p.own = st.own
	pl, err := j.makePlan(ctx, p, j.readAll(p), func(ctx context.Context) error {
		return j.readSuppressedWith(ctx, p, func(ctx context.Context) error {
			return st.feed(ctx, j, p, func() {
				if counts.members.Add(1)%sendloop.BrowsePageSize == 0 {
					j.report(&counts)
				}
			})
		})
	})
	var fb *stateFallback
	switch {
	case errors.As(err, &fb) && ctx.Err() == nil:
		st.fallBack(fb.reason)
		p.close()
		return nil, nil
	case err == nil:
		err = j.lookUp(ctx, pl)
	}
	if err != nil {
		p.close()
		return nil, err
	}
	pl.job = j
	return pl, nil
}

// readAll returns makePlan's reading of the whole source into p.
func (j *Job) readAll(p *planner) func(context.Context) error {
	return func(ctx context.Context) error { return p.readSource(ctx, j.open(ctx)) }
}

// planFull is a plan from the members, read whole, with what startPrefetch started: the
// planner of the early reading when it was kept, and the prefetched calls. pre.end, which
// the caller defers, waits for whatever is still running. With a state (st), the members
// the state holds as the sync's are read from it too.
func (j *Job) planFull(ctx context.Context, pre *prefetch, st *stateRun) (*Plan, error) {
	report := func() { j.report(&pre.counts) }
	var p *planner
	var read func(ctx context.Context) error
	if er := pre.early; er != nil {
		p, pre.taken = er.p, true // Plan's from now on: closed below on failure, or by Plan.Close
		read = func(ctx context.Context) error { return er.wait(ctx) }
	} else {
		var err error
		if p, err = j.newPlanner(j.mapping, &pre.counts); err != nil {
			return nil, err
		}
		read = j.readAll(p)
	}
	feed := func(ctx context.Context) error { return j.readPrefetchedMembers(ctx, pre, p, report) }
	if st != nil {
		p.own = st.own
		p.checked = func(off, vals uint64) { st.outcome(off, outUpdated, vals) }
		feed = func(ctx context.Context) error {
			if err := j.readPrefetchedMembers(ctx, pre, p, report); err != nil {
				return err
			}
			st.chartForBase(ctx, j)
			return st.feedOwners(j, p)
		}
	}
	pl, err := j.makePlan(ctx, p, read, feed)
	if err != nil {
		p.close()
		return nil, err
	}
	pl.job, pl.early = j, pre.taken
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

package listsync

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
)

// unsubscriptionIP is the UnsubscriptionIP sent with each unsubscription: the service's
// "unset" address, since no subscriber's address made the request. The service requires
// one; a batch job has none to give.
const unsubscriptionIP = "0.0.0.0"

// defaultBatchSize is the number of rows per subscriber.import call by default.
const defaultBatchSize = 1000

// ApplyOptions tunes Plan.Apply.
type ApplyOptions struct {
	// BatchSize is the number of rows per subscriber.import call (1000 when 0).
	BatchSize int
	// MaxUnsubscribe bounds the unsubscriptions, of the list's subscribed and pending
	// members: a plan beyond it is refused with a *GuardError before any change. The zero
	// Budget allows none; DefaultApplyOptions sets job.DefaultMaxUnsubscribe (10 %), as
	// `sendloop sync` does.
	MaxUnsubscribe job.Budget
	// MaxRejects bounds the source's rows that end rejected or refused (Result.Rows'
	// Rejected and Refused), of its rows: Apply judges it once, at the end, and returns a
	// *job.BudgetError beside its whole Result when the run exceeds it. The zero Budget allows none, as
	// `sendloop sync --max-rejects` does by default (the CLI passes its flag's value).
	MaxRejects job.Budget
	// MaxUnknown bounds the rows of unknown outcome (Result.Rows.Unknown) likewise; zero
	// allows none, the default of --max-unknown.
	MaxUnknown job.Budget
	// Stop is how the calls in flight end once Apply's context ends: they run for
	// Stop.Grace more (zero cancels them with it), and end at once when Stop.Work ends (a
	// second Ctrl-C), which also interrupts Apply as the end of its context does. The
	// calls carry Apply's context's values.
	Stop job.Stop
	// OnRow, when set, is called with the fate of every row and change Apply handles,
	// one call at a time: the rows the plan rejected (KindReject), and each addition,
	// update and unsubscription that ended rejected (the source changed since the plan),
	// refused or of unknown outcome, and each update and unsubscription done. Additions
	// done are counted in Result.Adds but not reported one by one: subscriber.import
	// answers with counts per batch, not per row. Rows an interruption left are counted
	// as job.NotAttempted, not reported. The plan's unchanged and skipped rows need no
	// change: Result.Rows counts them.
	OnRow func(RowResult)
	// OnProgress, when set, is called as changes are handled, one call at a time: Kind is
	// the kind under way (KindAdd, KindUpdate, KindUnsubscribe), Done of Total its changes
	// handled, and Tally their fates so far (for additions, the import batches' counts
	// and the rows rejected because the source changed).
	OnProgress func(job.Progress)
}

// DefaultApplyOptions returns the options `sendloop sync` applies with by default: at
// most job.DefaultMaxUnsubscribe (10 % of the list's members) unsubscribed. A Go caller
// starts from it rather than from ApplyOptions{}, whose zero MaxUnsubscribe refuses every
// unsubscription.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{MaxUnsubscribe: job.DefaultMaxUnsubscribe}
}

// The kinds of a sync's rows and changes, as RowResult.Kind and job.Progress.Kind name
// them (and as Plan.WriteCSV's action column writes them).
const (
	// KindAdd is an addition: a row whose address is new to the list.
	KindAdd = "add"
	// KindUpdate is an update of a member's custom fields.
	KindUpdate = "update"
	// KindUnsubscribe is an unsubscription of a member the source does not name; it has
	// no row.
	KindUnsubscribe = "unsubscribe"
	// KindReject is a row the plan rejected (malformed, no valid address, a repeated
	// address): it plans no change.
	KindReject = "reject"
)

// RowResult is the fate of one row or change of a sync.
type RowResult struct {
	// Kind is the kind of change planned for it: KindAdd, KindUpdate, KindUnsubscribe,
	// or KindReject for a row the plan rejected.
	Kind string
	// Fate is what became of it: job.Done, job.Rejected (the plan rejected it, or the
	// source changed since; see ReasonFileChanged), job.Refused (the service refused it,
	// or its call failed with an answer that proves nothing changed) or job.Unknown (the
	// connection broke after the request was sent, on every attempt: the same sync run
	// again settles it).
	Fate job.Fate
	// Line is the row's line (0 for an unsubscription, which has no row).
	Line int
	// Address is the address as written (see MappedRow.Raw), or the member's as the list
	// holds it for an update or an unsubscription.
	Address string
	// Reason says why a row was not done ("" for a row done).
	Reason string
	// Err is the error of the call that failed (nil for a row done or one the sync
	// rejected); for an unknown outcome it matches sendloop.ErrOutcomeUnknown.
	Err error
}

// Result counts what applying a plan did: a job.Tally of the source's rows, and one per
// kind of change. Each kind's Total is the plan's count of that kind (Plan.Adds,
// Plan.Updates, Plan.Unsubscribes), and Rows.Total() is Plan.Rows.
type Result struct {
	// Interrupted reports that Apply's context ended before every change was made.
	Interrupted bool
	// Rows counts the source's rows by fate: job.Done for a row changed or with nothing
	// to change (Plan.Unchanged), job.Skipped for the members who unsubscribed and the
	// rows whose status column says other than Subscribed, job.Suppressed for the
	// suppressed addresses, job.Rejected and job.Refused for the rows not applied (of
	// which Untraced could not be traced to a line), job.Unknown for those that may have
	// been applied, and job.NotAttempted for those an interruption left.
	Rows job.Tally
	// Adds counts the additions by fate (Done includes AlreadyPresent).
	Adds job.Tally
	// Updates counts the updates by fate; an update of a member that left the list since
	// the state was written is job.Unknown (the next run adds it again).
	Updates job.Tally
	// Unsubscribes counts the unsubscriptions by fate; a member already gone from the
	// list is job.Done.
	Unsubscribes job.Tally
	// AlreadyPresent counts the additions the service found already on the list (among
	// Adds.Done).
	AlreadyPresent int
	// Untraced counts the additions the service refused that its answer did not let Apply
	// trace to a row (among Adds.Refused and Rows.Refused; OnRow saw none of them).
	Untraced int
}

// ChangesNotAttempted returns the changes of every kind an interruption left.
func (r *Result) ChangesNotAttempted() int {
	return r.Adds.NotAttempted + r.Updates.NotAttempted + r.Unsubscribes.NotAttempted
}

// applier is one run of Apply.
type applier struct {
	pl   *Plan
	stop context.Context
	work context.Context
	opts ApplyOptions
	res  *Result
	mu   sync.Mutex // guards res, imported and the callbacks
	// imported is what subscriber.import's batches answered so far, as a tally of the
	// additions: Done (imported or already present), Refused and Unknown.
	imported job.Tally
	kind     string // the kind under way, for OnProgress
}

// Apply makes the plan's changes: the additions through subscriber.import in batches, then
// the updates (by subscriber ID; in a plan made from a state, by the row's address), then the unsubscriptions from this list only (Subscribers.Unsubscribe). It
// first refuses a plan that Check refuses, and a plan applied already. When ctx ends, Apply
// starts no new call; the calls in flight run for ApplyOptions.Stop.Grace more, or until
// ApplyOptions.Stop.Work ends. The Result accounts for every row and every change, and
// OnRow hears of each row not done (rejected, refused, of unknown outcome) and of each
// update and unsubscription. The error reports a failure that stopped the work (a source
// that cannot be read again, a failed import call), and the budgets' verdict
// (*job.BudgetError). A change whose outcome is unknown (the connection broke after the
// request was sent, on every attempt) is counted apart from the failures: the same sync
// run again settles it. An interruption is no error: the Result says it, and the same
// sync run again finishes the job.
func (pl *Plan) Apply(ctx context.Context, opts ApplyOptions) (res *Result, err error) {
	obs := pl.job.opts.Observer
	if obs == nil {
		return pl.apply(ctx, opts)
	}
	ctx = obs.PhaseStarted(ctx, applyPhase)
	res, err = pl.apply(ctx, opts)
	var rows job.Tally
	if res != nil {
		for _, t := range []job.Tally{res.Adds, res.Updates, res.Unsubscribes} {
			if t.Total() > 0 {
				obs.RowsDone(ctx, applyPhase, t)
			}
		}
		rows = res.Rows
	}
	obs.PhaseEnded(ctx, applyPhase, rows, err)
	return res, err
}

func (pl *Plan) apply(ctx context.Context, opts ApplyOptions) (*Result, error) {
	if err := pl.Check(opts.MaxUnsubscribe); err != nil {
		return nil, err
	}
	if pl.applied {
		return nil, errors.New("listsync: the plan was applied already: make a new one")
	}
	pl.applied = true
	rec := pl.recorder()
	// Before the first change: a run that does not finish leaves a state the next run
	// does not trust.
	if err := rec.begin(); err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if w := opts.Stop.Work; w != nil {
		// Work ending first ends ctx too: no call is started on a context that cannot run
		// it, and the run is interrupted, not finished.
		stop, cancelStop := context.WithCancelCause(ctx)
		defer cancelStop(nil)
		defer context.AfterFunc(w, func() { cancelStop(context.Cause(w)) })()
		if w.Err() != nil {
			cancelStop(context.Cause(w)) // at once: AfterFunc's call comes later
		}
		ctx = stop
	}
	work, cancel := opts.Stop.InFlight(ctx)
	defer cancel()
	a := &applier{pl: pl, stop: ctx, work: work, opts: opts, res: &Result{}, kind: KindAdd}
	err := a.adds()
	if err == nil && ctx.Err() == nil {
		err = a.updates()
	}
	if err == nil && ctx.Err() == nil {
		err = a.unsubscribes()
	}
	a.count()
	if ctx.Err() != nil {
		a.res.Interrupted = true
		if errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(work)) {
			err = nil // the interruption says it
		}
	}
	if err == nil && !a.res.Interrupted {
		err = rec.finish()
	}
	// The verdict of the budgets, once the run has ended: the run itself went through, so
	// its Result (and state) stand beside it.
	rows := a.res.Rows
	verdict := errors.Join(
		job.Judge("MaxRejects", "rejected or refused", opts.MaxRejects, rows.Rejected+rows.Refused, pl.Rows),
		job.Judge("MaxUnknown", "of unknown outcome", opts.MaxUnknown, rows.Unknown, pl.Rows))
	return a.res, errors.Join(err, verdict)
}

// count fills in what follows from the plan: what was not attempted, and the rows' tally.
func (a *applier) count() {
	res, plan := a.res, a.pl
	res.Adds.NotAttempted = plan.Adds - res.Adds.Total()
	res.Updates.NotAttempted = plan.Updates - res.Updates.Total()
	res.Unsubscribes.NotAttempted = plan.Unsubscribes - res.Unsubscribes.Total()
	// The rows: those the plan decided without a change, and those of the changes. A row
	// rejected because the source changed is counted in Rows.Rejected as it was seen.
	rows := &res.Rows
	rows.Done += plan.Unchanged + res.Adds.Done + res.Updates.Done
	rows.Skipped += plan.SkippedUnsubscribed + plan.SkippedStatus
	rows.Suppressed += plan.SkippedSuppressed
	rows.Refused += res.Adds.Refused + res.Updates.Refused
	rows.Unknown += res.Adds.Unknown + res.Updates.Unknown
	rows.NotAttempted = plan.Rows - (rows.Total() - rows.NotAttempted)
}

// row reports a row's fate to OnRow, and counts a rejected one (the service's refusals and
// unknown outcomes are counted by their kind's tally, which count adds to Rows).
func (a *applier) row(r RowResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rowLocked(r)
}

func (a *applier) rowLocked(r RowResult) {
	if r.Fate == job.Rejected {
		a.res.Rows.Rejected++
		switch r.Kind {
		case KindAdd:
			a.res.Adds.Rejected++
		case KindUpdate:
			a.res.Updates.Rejected++
		}
	}
	if a.opts.OnRow != nil {
		a.opts.OnRow(r)
	}
}

// report tells OnProgress how far the kind under way has come; call it with a.mu held.
func (a *applier) report() {
	if a.opts.OnProgress == nil {
		return
	}
	p := job.Progress{Kind: a.kind}
	switch a.kind {
	case KindAdd:
		p.Tally = a.imported
		p.Tally.Rejected = a.res.Adds.Rejected
		p.Total = a.pl.Adds
	case KindUpdate:
		p.Tally, p.Total = a.res.Updates, a.pl.Updates
	case KindUnsubscribe:
		p.Tally, p.Total = a.res.Unsubscribes, a.pl.Unsubscribes
	}
	p.Done = p.Tally.Total()
	a.opts.OnProgress(p)
}

// begin reports the start of a kind of change.
func (a *applier) begin(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kind = kind
	a.report()
}

// rejected is the RowResult of an Event the source's reading rejected: a row the plan
// rejected, or one planned for a change that the source no longer holds.
func rejected(ev Event) RowResult {
	kind := KindReject
	switch ev.planned {
	case EventAdd:
		kind = KindAdd
	case EventUpdate:
		kind = KindUpdate
	}
	return RowResult{Kind: kind, Fate: job.Rejected, Line: ev.Row.Line, Address: ev.Row.Raw, Reason: ev.Reason}
}

// importRow returns the row sent for an addition: the address and the non-empty fields
// (an empty field of a new subscriber is empty anyway; no fields, no map). The fields go
// into fields, the one map of every row: ImportAll is done with a row once it asks for
// the next one.
func importRow(m *Mapping, row MappedRow, fields *sendloop.CustomFields) sendloop.ImportSubscriber {
	sub := sendloop.ImportSubscriber{EmailAddress: row.Email}
	// The map holds the mapped fields only: each is set or deleted, which costs less than
	// clearing the map for every row.
	for i, f := range m.Fields {
		if row.Values[i] == "" {
			if *fields != nil {
				delete(*fields, f.Field.ID)
			}
			continue
		}
		if *fields == nil {
			*fields = sendloop.CustomFields{}
		}
		(*fields)[f.Field.ID] = row.Values[i]
	}
	if len(*fields) > 0 {
		sub.Fields = *fields
	}
	return sub
}

// cutShort reports whether err is work's own cancellation rather than an answer.
func cutShort(work context.Context, err error) bool {
	return work.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(work)))
}

// adds streams the source once more: rejected rows go to OnRow, new addresses to
// ImportAll, until stop ends; the calls run on work. Rows the service refused are then
// traced to their lines by a last pass.
func (a *applier) adds() error {
	pl := a.pl
	if pl.Adds == 0 && pl.Rejected == 0 {
		return nil
	}
	r, err := pl.job.open(a.stop)()
	if err != nil {
		return err
	}
	defer r.close()
	mapping := pl.Mapping()
	rec := pl.recorder()
	var readErr error
	var fields sendloop.CustomFields
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for ev, err := range pl.events(r, EventAdd|EventReject, true) {
			if a.stop.Err() != nil {
				return // the rest of the source is not read: its rows are not attempted
			}
			if err != nil {
				readErr = err
				return
			}
			if ev.Kind == EventReject {
				a.row(rejected(ev))
				continue
			}
			if err := rec.added(ev.Row); err != nil {
				readErr = err
				return
			}
			if !yield(importRow(mapping, ev.Row, &fields)) {
				return
			}
		}
	}
	if pl.Adds == 0 {
		for range rows {
		}
		return readErr
	}
	report, err := pl.job.client.Subscribers.ImportAll(a.stop, pl.job.listID, rows, sendloop.ImportOptions{
		BatchSize:   a.opts.BatchSize,
		Concurrency: pl.job.opts.Concurrency,
		OnProgress: func(p sendloop.ImportProgress) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.imported = job.Tally{Done: p.Imported + p.Duplicate, Refused: p.Failed, Unknown: p.Unknown}
			a.report()
		},
		// Once stop ends no batch starts; those in flight run as the apply's own calls do.
		Stop: job.Stop{Grace: a.opts.Stop.Grace, Work: a.work},
	})
	if report != nil {
		rec.addsDone(report)
		adds := &a.res.Adds
		adds.Done += report.Imported + report.Duplicate
		adds.Refused += len(report.Failed) + report.Unattributed
		adds.Unknown += len(report.Unknown)
		a.res.AlreadyPresent, a.res.Untraced = report.Duplicate, report.Unattributed
		if len(report.Failed)+len(report.Unknown) > 0 {
			failed := append(slices.Clip(report.Failed), report.Unknown...)
			if traceErr := a.traceFailures(failed); traceErr != nil {
				err = errors.Join(err, traceErr)
			}
		}
	}
	return errors.Join(err, readErr)
}

// traceFailures reads the additions again to find the lines of the rows ImportAll reports as
// failed (by their position among the additions), and reports them.
func (a *applier) traceFailures(failed []sendloop.FailedRow) error {
	slices.SortFunc(failed, func(x, y sendloop.FailedRow) int { return x.Index - y.Index })
	r, err := a.pl.job.open(a.work)()
	if err != nil {
		return err
	}
	defer r.close()
	index, next := 0, 0
	for ev, err := range a.pl.events(r, EventAdd, true) {
		if err != nil {
			return err
		}
		if ev.Kind != EventAdd {
			continue // the source changed: reported by the first pass
		}
		for next < len(failed) && failed[next].Index == index {
			a.row(importFailure(ev.Row, failed[next].Err))
			next++
		}
		if next == len(failed) {
			break
		}
		index++
	}
	return nil
}

// importFailure is the fate of an addition that ImportAll reports as failed or of unknown
// outcome.
func importFailure(row MappedRow, err error) RowResult {
	rr := RowResult{Kind: KindAdd, Fate: job.Refused, Line: row.Line, Address: row.Raw, Err: err}
	switch {
	case errors.Is(err, sendloop.ErrRowRefused):
		rr.Reason = "refused by the service"
	case errors.Is(err, sendloop.ErrOutcomeUnknown):
		rr.Reason, rr.Fate = "may have been imported (run the sync again to know): "+strings.TrimPrefix(err.Error(), "sendloop: "), job.Unknown
	default:
		rr.Reason = "not imported: " + strings.TrimPrefix(err.Error(), "sendloop: ")
	}
	return rr
}

// forEach calls fn for every item of seq, n at a time, until stop ends; it returns seq's
// error after the calls started have returned.
func forEach[T any](stop context.Context, n int, seq iter.Seq2[T, error], fn func(T)) error {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for item, err := range seq {
		if err != nil {
			return err
		}
		select {
		case sem <- struct{}{}:
		case <-stop.Done():
		}
		if stop.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(item)
		}()
	}
	return nil
}

// pendingUpdate is an update with its member's record and its row's values' fingerprint.
type pendingUpdate struct {
	Update
	off, vals uint64
}

// updateSeq yields the plan's updates in the source's order; a row that changed since the
// plan is rejected.
func (a *applier) updateSeq(r pass) iter.Seq2[pendingUpdate, error] {
	return func(yield func(pendingUpdate, error) bool) {
		for ev, err := range a.pl.events(r, EventUpdate, true) {
			if err != nil {
				yield(pendingUpdate{}, err)
				return
			}
			if ev.Kind == EventReject {
				a.row(rejected(ev))
				continue
			}
			if !yield(pendingUpdate{*ev.Update, ev.off, ev.vals}, nil) {
				return
			}
		}
	}
}

func (a *applier) updates() error {
	pl := a.pl
	if pl.Updates == 0 {
		return nil
	}
	r, err := pl.job.open(a.stop)()
	if err != nil {
		return err
	}
	defer r.close()
	rec := pl.recorder()
	a.begin(KindUpdate)
	return forEach(a.stop, pl.job.opts.Concurrency, a.updateSeq(r), func(u pendingUpdate) {
		params := sendloop.SubscriberUpdateParams{SubscriberID: u.SubscriberID, Fields: sendloop.CustomFields(u.Fields)}
		if u.SubscriberID == 0 || rec.fromState() {
			// By the row's address: a state's subscriber ID may be another address's now
			// (changed on the service side since the plan read it back), and an update by
			// ID would write this row's values onto that member. An address that left the
			// list is answered "not in the list", below. (Added by a run that kept a state,
			// a member has no ID to name it by either.)
			params = sendloop.SubscriberUpdateParams{EmailAddress: u.Email, Fields: sendloop.CustomFields(u.Fields)}
		}
		err := pl.job.client.Subscribers.Update(a.work, pl.job.listID, params)
		if cutShort(a.work, err) {
			return // not attempted: counted so
		}
		rr := RowResult{Kind: KindUpdate, Fate: job.Done, Line: u.Line, Address: u.Email, Err: err}
		switch {
		case err == nil:
			rec.outcome(u.off, outUpdated, u.vals)
		case errors.Is(err, sendloop.ErrOutcomeUnknown):
			rec.outcome(u.off, outUnknown, 0)
			rr.Fate, rr.Reason = job.Unknown, "may have been updated (run the sync again to know): "+strings.TrimPrefix(err.Error(), "sendloop: ")
		case rec.fromState() && notAMember(err):
			// A member a state holds that left the list since (deleted on the service
			// side): the state forgets it, and the next run reads the row back and adds
			// it, as a full run would have. Until then its outcome is open, not a refusal.
			rec.outcome(u.off, outGone, 0)
			rr.Fate, rr.Reason = job.Unknown, "left the list since the state was written: the next run adds it again"
		default:
			rr.Fate, rr.Reason = job.Refused, "update failed: "+strings.TrimPrefix(err.Error(), "sendloop: ")
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.res.Updates.Add(rr.Fate, 1)
		a.rowLocked(rr)
		a.report()
	})
}

func (a *applier) unsubscribes() error {
	pl := a.pl
	if pl.Unsubscribes == 0 {
		return nil
	}
	rec := pl.recorder()
	a.begin(KindUnsubscribe)
	return forEach(a.stop, pl.job.opts.Concurrency, pl.toUnsubscribe(), func(u pendingUnsubscribe) {
		_, err := pl.job.client.Subscribers.Unsubscribe(a.work, pl.job.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: u.Email, UnsubscriptionIP: unsubscriptionIP})
		switch {
		case err == nil:
			rec.outcome(u.off, outUnsubscribed, 0)
		case errors.Is(err, sendloop.ErrNotInList):
			// Gone (or unsubscribed already): the state forgets it, and whose it is with it.
			// An address that comes back is the service's (a sign-up form's) until the
			// source names it; a row that names it reads it back first.
			rec.outcome(u.off, outGone, 0)
		case errors.Is(err, sendloop.ErrOutcomeUnknown):
			// Unknown: read back when a row names it.
			rec.outcome(u.off, outUnknown, 0)
		}
		if errors.Is(err, sendloop.ErrNotInList) {
			err = nil // gone since the plan was made: the list is as wanted
		}
		if cutShort(a.work, err) {
			return // not attempted: counted so
		}
		rr := RowResult{Kind: KindUnsubscribe, Fate: job.Done, Address: u.Email, Err: err}
		switch {
		case errors.Is(err, sendloop.ErrOutcomeUnknown):
			rr.Fate, rr.Reason = job.Unknown, "may have been unsubscribed (run the sync again to know): "+strings.TrimPrefix(err.Error(), "sendloop: ")
		case err != nil:
			rr.Fate, rr.Reason = job.Refused, "unsubscribe failed: "+strings.TrimPrefix(err.Error(), "sendloop: ")
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.res.Unsubscribes.Add(rr.Fate, 1)
		a.rowLocked(rr)
		a.report()
	})
}

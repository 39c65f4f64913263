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
	// MaxRejects bounds the source's rows that end rejected or refused (Result.RowsFailed),
	// of its rows: Apply judges it once, at the end, and returns a *job.BudgetError beside
	// its whole Result when the run exceeds it. The zero Budget allows none, as
	// `sendloop sync --max-rejects` does by default (the CLI passes its flag's value).
	MaxRejects job.Budget
	// MaxUnknown bounds the rows of unknown outcome (Result.RowsUnknown) likewise; zero
	// allows none, the default of --max-unknown.
	MaxUnknown job.Budget
	// Stop is how the calls in flight end once Apply's context ends: they run for
	// Stop.Grace more (zero cancels them with it), and end at once when Stop.Work ends (a
	// second Ctrl-C), which also interrupts Apply as the end of its context does. The
	// calls carry Apply's context's values.
	Stop job.Stop
	// Progress, when set, is called with the changes handled so far (made, failed or of
	// unknown outcome) and their total, from more than one goroutine. It is the older form
	// of OnProgress, which also says which kind of change is under way.
	Progress func(done, total int)
	// OnProgress, when set, is called as changes are handled, with the kind under way and
	// the count of each kind, one call at a time.
	OnProgress func(ApplyProgress)
	// OnReject, when set, receives every row not applied, with why and how it ended
	// (RejectedRow.Outcome): the rows the plan rejected, those the service refused, and
	// those whose outcome is unknown. It is called one row at a time.
	OnReject func(RejectedRow)
	// OnUntraced, when set, is called with the number of rows the service refused that its
	// answer did not let Apply trace to a row.
	OnUntraced func(rows int)
	// OnUnsubscribeError, when set, receives each failed unsubscription (a member has no row
	// to reject), and each whose outcome is unknown, with an error matching
	// sendloop.ErrOutcomeUnknown. It is called one at a time.
	OnUnsubscribeError func(email string, err error)
}

// DefaultApplyOptions returns the options `sendloop sync` applies with by default: at
// most job.DefaultMaxUnsubscribe (10 % of the list's members) unsubscribed. A Go caller
// starts from it rather than from ApplyOptions{}, whose zero MaxUnsubscribe refuses every
// unsubscription.
func DefaultApplyOptions() ApplyOptions {
	return ApplyOptions{MaxUnsubscribe: job.DefaultMaxUnsubscribe}
}

// ApplyProgress says how far Apply has come: the kind of change under way, and for each
// kind the changes handled (made, failed or of unknown outcome) of those planned.
type ApplyProgress struct {
	// Kind is the kind of change under way: EventAdd, EventUpdate or EventUnsubscribe.
	Kind EventKind
	// AddsDone of Adds additions are handled.
	AddsDone, Adds int
	// UpdatesDone of Updates updates are handled.
	UpdatesDone, Updates int
	// UnsubscribesDone of Unsubscribes unsubscriptions are handled.
	UnsubscribesDone, Unsubscribes int
}

// RowOutcome says how a row that was not applied ended.
type RowOutcome string

// The outcomes of a RejectedRow.
const (
	// RowRejected is a row the sync did not send: the plan rejected it (a malformed line,
	// a bad or repeated address), or it changed since the plan.
	RowRejected RowOutcome = "rejected"
	// RowRefused is a row the service refused, or whose call failed with an answer that
	// proves nothing was changed.
	RowRefused RowOutcome = "refused"
	// RowUnknown is a row whose call may have run: the connection broke after the request
	// was sent, on every attempt. Running the same sync again settles it.
	RowUnknown RowOutcome = "unknown"
)

// RejectedRow is a row that was not applied, with why.
type RejectedRow struct {
	// Line is the row's line.
	Line int
	// Address is the address as written (see MappedRow.Raw).
	Address string
	// Reason says why.
	Reason string
	// Outcome says how the row ended: rejected, refused, or unknown.
	Outcome RowOutcome
	// Err is the error of the call that failed (nil for a row the sync rejected); for an
	// unknown outcome it matches sendloop.ErrOutcomeUnknown.
	Err error
}

// Result counts what applying a plan did, and how the source's rows ended. It encodes to
// JSON as the result of `sendloop --json sync`.
type Result struct {
	// Interrupted reports that Apply's context ended before every change was made.
	Interrupted bool `json:"interrupted"`
	// Added counts the addresses added.
	Added int `json:"added"`
	// AlreadyPresent counts the additions the service found already on the list.
	AlreadyPresent int `json:"already_present"`
	// AddFailed counts the additions refused or failed.
	AddFailed int `json:"add_failed"`
	// AddUntraced counts the refused additions the service's answer did not let Apply trace
	// to a row (among AddFailed).
	AddUntraced int `json:"add_untraced"`
	// AddUnknown counts the additions whose outcome is unknown: they may have been made.
	AddUnknown int `json:"add_unknown"`
	// AddNotAttempted counts the additions an interruption left. Added, AlreadyPresent,
	// AddFailed, AddUnknown and AddNotAttempted add up to the plan's Adds.
	AddNotAttempted int `json:"add_not_attempted"`
	// Updated counts the members updated.
	Updated int `json:"updated"`
	// UpdateFailed counts the updates that failed.
	UpdateFailed int `json:"update_failed"`
	// UpdateUnknown counts the updates whose outcome is unknown.
	UpdateUnknown int `json:"update_unknown"`
	// UpdateNotAttempted counts the updates an interruption left. Updated, UpdateFailed,
	// UpdateUnknown and UpdateNotAttempted add up to the plan's Updates.
	UpdateNotAttempted int `json:"update_not_attempted"`
	// Unsubscribed counts the members unsubscribed from the list.
	Unsubscribed int `json:"unsubscribed"`
	// UnsubscribeFailed counts the unsubscriptions that failed.
	UnsubscribeFailed int `json:"unsubscribe_failed"`
	// UnsubscribeUnknown counts the unsubscriptions whose outcome is unknown.
	UnsubscribeUnknown int `json:"unsubscribe_unknown"`
	// UnsubscribeNotAttempted counts the unsubscriptions an interruption left.
	// Unsubscribed, UnsubscribeFailed, UnsubscribeUnknown and UnsubscribeNotAttempted add
	// up to the plan's Unsubscribes.
	UnsubscribeNotAttempted int `json:"unsubscribe_not_attempted"`
	// ChangesNotAttempted counts the changes of every kind an interruption left: the sum
	// of AddNotAttempted, UpdateNotAttempted and UnsubscribeNotAttempted.
	ChangesNotAttempted int `json:"changes_not_attempted"`
	// Rejected counts the rows rejected or refused: those given to OnReject, but for the
	// rows of unknown outcome.
	Rejected int `json:"rejected"`
	// RowsDone counts the rows done: changed, or nothing to change.
	RowsDone int `json:"rows_done"`
	// RowsFailed counts the rows rejected or refused, traced to a line or not.
	RowsFailed int `json:"rows_failed"`
	// RowsUnknown counts the rows whose outcome is unknown; running the same sync again
	// settles them.
	RowsUnknown int `json:"rows_unknown"`
	// RowsNotAttempted counts the rows an interruption left (unsubscriptions have no row:
	// see ChangesNotAttempted). RowsDone, RowsFailed, RowsUnknown and RowsNotAttempted add
	// up to the plan's Rows.
	RowsNotAttempted int `json:"rows_not_attempted"`
}

// applier is one run of Apply.
type applier struct {
	pl       *Plan
	stop     context.Context
	work     context.Context
	opts     ApplyOptions
	res      *Result
	mu       sync.Mutex // guards res and the callbacks
	progress ApplyProgress
}

// Apply makes the plan's changes: the additions through subscriber.import in batches, then
// the updates, then the unsubscriptions from this list only (Subscribers.Unsubscribe). It
// first refuses a plan that Check refuses, and a plan applied already. When ctx ends, Apply
// starts no new call; the calls in flight run for ApplyOptions.Stop.Grace more, or
// until ApplyOptions.Stop.Work ends. The Result accounts for every row and every change. The error reports a failure
// that stopped the work (a source that cannot be read again, a failed import call); the
// rows rejected, refused or of unknown outcome go to OnReject and failed unsubscriptions
// to OnUnsubscribeError, all counted in the Result. A change whose outcome is unknown (the
// connection broke after the request was sent, on every attempt) is counted apart from the
// failures: the same sync run again settles it. An interruption is no error: the Result says it, and the same sync run again
// finishes the job.
func (pl *Plan) Apply(ctx context.Context, opts ApplyOptions) (*Result, error) {
	if err := pl.Check(opts.MaxUnsubscribe); err != nil {
		return nil, err
	}
	if pl.applied {
		return nil, errors.New("listsync: the plan was applied already: make a new one")
	}
	pl.applied = true
	if pl.state != nil {
		// Before the first change: a run that does not finish leaves a state the next
		// run does not trust.
		if err := markStateInUse(pl.state.opts.Path, !pl.state.opts.noSync); err != nil {
			return nil, err
		}
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
	a := &applier{pl: pl, stop: ctx, work: work, opts: opts, res: &Result{},
		progress: ApplyProgress{Kind: EventAdd, Adds: pl.Adds, Updates: pl.Updates, Unsubscribes: pl.Unsubscribes}}
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
	if pl.state != nil && err == nil && !a.res.Interrupted {
		err = pl.writeState()
	}
	// The verdict of the budgets, once the run has ended: the run itself went through, so
	// its Result (and state) stand beside it.
	verdict := errors.Join(
		job.Judge("MaxRejects", "rejected or refused", opts.MaxRejects, a.res.RowsFailed, pl.Rows),
		job.Judge("MaxUnknown", "of unknown outcome", opts.MaxUnknown, a.res.RowsUnknown, pl.Rows))
	return a.res, errors.Join(err, verdict)
}

// count fills in what follows from the plan: what was not attempted, and the rows' tally.
func (a *applier) count() {
	res, plan := a.res, a.pl
	res.AddNotAttempted = plan.Adds - res.Added - res.AlreadyPresent - res.AddFailed - res.AddUnknown
	res.UpdateNotAttempted = plan.Updates - res.Updated - res.UpdateFailed - res.UpdateUnknown
	if plan.Unsubscribes > 0 {
		res.UnsubscribeNotAttempted = plan.Unsubscribes - res.Unsubscribed - res.UnsubscribeFailed - res.UnsubscribeUnknown
	}
	res.ChangesNotAttempted = res.AddNotAttempted + res.UpdateNotAttempted + res.UnsubscribeNotAttempted
	res.RowsDone = plan.Unchanged + plan.SkippedUnsubscribed + plan.SkippedSuppressed + plan.SkippedStatus +
		res.Added + res.AlreadyPresent + res.Updated
	res.RowsFailed = res.Rejected + res.AddUntraced
	res.RowsUnknown = res.AddUnknown + res.UpdateUnknown
	res.RowsNotAttempted = plan.Rows - res.RowsDone - res.RowsFailed - res.RowsUnknown
}

// reject reports a row not applied.
func (a *applier) reject(row RejectedRow) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if row.Outcome != RowUnknown {
		a.res.Rejected++
	}
	if a.opts.OnReject != nil {
		a.opts.OnReject(row)
	}
}

// failed counts a change that failed without a call: its row changed since the plan.
func (a *applier) failed(n *int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*n++
}

// report reports the changes handled so far; call it with a.mu held.
func (a *applier) report() {
	p := a.progress
	if a.opts.Progress != nil {
		a.opts.Progress(p.AddsDone+p.UpdatesDone+p.UnsubscribesDone, p.Adds+p.Updates+p.Unsubscribes)
	}
	if a.opts.OnProgress != nil {
		a.opts.OnProgress(p)
	}
}

// begin reports the start of a kind of change, to OnProgress only: Progress has no kind,
// and nothing it counts changed.
func (a *applier) begin(kind EventKind) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.progress.Kind = kind
	if a.opts.OnProgress != nil {
		a.opts.OnProgress(a.progress)
	}
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

// adds streams the source once more: rejected rows go to OnReject, new addresses to
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
				a.reject(RejectedRow{Line: ev.Row.Line, Address: ev.Row.Raw, Reason: ev.Reason, Outcome: RowRejected})
				if ev.planned == EventAdd {
					a.failed(&a.res.AddFailed) // the source changed: an addition that failed
				}
				continue
			}
			if st := pl.state; st != nil {
				r := rec{vals: pl.planner.valuesHash(pl.planner.appendValues(nil, func(i int) string { return ev.Row.Values[i] }))}
				if err := pl.planner.writeMemberLocked(&r, dataAdded, ev.Row.Key, statusSubscribed, nil); err != nil {
					readErr = err
					return
				}
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
			a.progress.AddsDone = p.Rows
			a.report()
		},
		// Once stop ends no batch starts; those in flight run as the apply's own calls do.
		Stop: job.Stop{Grace: a.opts.Stop.Grace, Work: a.work},
	})
	if report != nil {
		if pl.state != nil {
			pl.state.addsDone(report)
		}
		a.res.Added, a.res.AlreadyPresent = report.Imported, report.Duplicate
		a.res.AddFailed += len(report.Failed) + report.Unattributed
		a.res.AddUntraced = report.Unattributed
		a.res.AddUnknown = len(report.Unknown)
		if report.Unattributed > 0 && a.opts.OnUntraced != nil {
			a.opts.OnUntraced(report.Unattributed)
		}
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
// failed (by their position among the additions), and rejects them.
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
			a.reject(importFailure(ev.Row, failed[next].Err))
			next++
		}
		if next == len(failed) {
			break
		}
		index++
	}
	return nil
}

// importFailure is the rejection of an addition that ImportAll reports as failed or of
// unknown outcome.
func importFailure(row MappedRow, err error) RejectedRow {
	rej := RejectedRow{Line: row.Line, Address: row.Raw, Outcome: RowRefused, Err: err}
	switch {
	case errors.Is(err, sendloop.ErrRowRefused):
		rej.Reason = "refused by the service"
	case errors.Is(err, sendloop.ErrOutcomeUnknown):
		rej.Reason, rej.Outcome = "may have been imported (run the sync again to know): "+strings.TrimPrefix(err.Error(), "sendloop: "), RowUnknown
	default:
		rej.Reason = "not imported: " + strings.TrimPrefix(err.Error(), "sendloop: ")
	}
	return rej
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
				a.reject(RejectedRow{Line: ev.Row.Line, Address: ev.Row.Raw, Reason: ev.Reason, Outcome: RowRejected})
				if ev.planned == EventUpdate {
					a.failed(&a.res.UpdateFailed) // the source changed: an update that failed
				}
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
	a.begin(EventUpdate)
	return forEach(a.stop, pl.job.opts.Concurrency, a.updateSeq(r), func(u pendingUpdate) {
		params := sendloop.SubscriberUpdateParams{SubscriberID: u.SubscriberID, Fields: sendloop.CustomFields(u.Fields)}
		if u.SubscriberID == 0 {
			params.EmailAddress = u.Email // added by a run that kept a state: named by its address
		}
		err := pl.job.client.Subscribers.Update(a.work, pl.job.listID, params)
		failed := err != nil && !cutShort(a.work, err)
		unknown := failed && errors.Is(err, sendloop.ErrOutcomeUnknown)
		// A member a state holds that left the list since (deleted on the service side):
		// the state forgets it, and the next run reads the row back and adds it, as a
		// full run would have. Until then its outcome is open, not a refusal.
		gone := failed && pl.state != nil && pl.State.Used && notAMember(err)
		if st := pl.state; st != nil {
			switch {
			case err == nil:
				st.outcome(u.off, outUpdated, u.vals)
			case unknown:
				st.outcome(u.off, outUnknown, 0)
			case gone:
				st.outcome(u.off, outGone, 0)
			}
		}
		if failed {
			rej := RejectedRow{Line: u.Line, Address: u.Email, Outcome: RowRefused, Err: err,
				Reason: "update failed: " + strings.TrimPrefix(err.Error(), "sendloop: ")}
			switch {
			case unknown:
				rej.Outcome = RowUnknown
				rej.Reason = "may have been updated (run the sync again to know): " + strings.TrimPrefix(err.Error(), "sendloop: ")
			case gone:
				rej.Outcome = RowUnknown
				rej.Reason = "left the list since the state was written: the next run adds it again"
				unknown = true
			}
			a.reject(rej)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		switch {
		case err == nil:
			a.res.Updated++
		case unknown:
			a.res.UpdateUnknown++
		case failed:
			a.res.UpdateFailed++
		}
		a.progress.UpdatesDone++
		a.report()
	})
}

func (a *applier) unsubscribes() error {
	pl := a.pl
	if pl.Unsubscribes == 0 {
		return nil
	}
	a.begin(EventUnsubscribe)
	return forEach(a.stop, pl.job.opts.Concurrency, pl.toUnsubscribe(), func(u pendingUnsubscribe) {
		_, err := pl.job.client.Subscribers.Unsubscribe(a.work, pl.job.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: u.Email, UnsubscriptionIP: unsubscriptionIP})
		if st := pl.state; st != nil {
			switch {
			case err == nil:
				st.outcome(u.off, outUnsubscribed, 0)
			case errors.Is(err, sendloop.ErrNotInList), errors.Is(err, sendloop.ErrOutcomeUnknown):
				// Unsubscribed or gone, or unknown: read back when a row names it.
				st.outcome(u.off, outUnknown, 0)
			}
		}
		if errors.Is(err, sendloop.ErrNotInList) {
			err = nil // gone since the plan was made: the list is as wanted
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		switch {
		case err == nil:
			a.res.Unsubscribed++
		case cutShort(a.work, err):
		default:
			if errors.Is(err, sendloop.ErrOutcomeUnknown) {
				a.res.UnsubscribeUnknown++
			} else {
				a.res.UnsubscribeFailed++
			}
			if a.opts.OnUnsubscribeError != nil {
				a.opts.OnUnsubscribeError(u.Email, err)
			}
		}
		a.progress.UnsubscribesDone++
		a.report()
	})
}

package sendloop

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/job"
)

// ImportOptions tunes Subscribers.ImportAll.
type ImportOptions struct {
	// BatchSize is the number of rows per subscriber.import call; default 1000.
	BatchSize int
	// Concurrency is the number of calls in flight; default 4.
	Concurrency int
	// OnProgress, when set, is called after each batch with the totals so far, one call at
	// a time.
	OnProgress func(ImportProgress)
	// Stop says how the calls in flight end once ImportAll's ctx has ended, which starts no
	// new call (as a first Ctrl-C should): they run for Stop.Grace, or until Stop.Work
	// ends, whichever comes first (job.Stop.InFlight). The zero Stop ends them with ctx.
	// Rows read but not sent, and those of calls the stop cut short, count as
	// NotAttempted; rows not yet read stay in the sequence.
	Stop job.Stop
}

// ImportProgress is the state of an ImportAll run.
type ImportProgress struct {
	Rows      int // rows handled so far: the sum of the four counts
	Imported  int // rows the service added to the list
	Duplicate int // rows already on the list, or repeated within their batch
	Failed    int // rows refused, failed with their call, or not traced to a row
	Unknown   int // rows of calls whose outcome is unknown (ImportReport.Unknown)
}

// FailedRow is a row ImportAll could not import, with why.
type FailedRow struct {
	// Index is the row's position in the sequence, from 0.
	Index      int
	Subscriber ImportSubscriber // the row as it was read
	// Err is a *ValidationError for a row refused before sending, ErrRowRefused for a row
	// the service counted as failed, or the error of the call that carried the row (in
	// ImportReport.Unknown, an error matching ErrOutcomeUnknown).
	Err error
}

// ImportReport is the outcome of ImportAll. Every row read from the sequence is counted
// once: Rows = Imported + Duplicate + len(Failed) + len(Unknown) + Unattributed +
// NotAttempted, and ConfirmedOnRetry is a part of Imported. Failed rows were refused or
// failed for a known reason; Unknown rows may have been imported; NotAttempted rows were
// never sent: only Failed needs a look, the other two a second run.
type ImportReport struct {
	// Rows is the number of rows read from the sequence.
	Rows int
	// Imported counts the rows the service added to the list, ConfirmedOnRetry included.
	Imported int
	// ConfirmedOnRetry counts rows of batches resent after an attempt that may have run (a
	// reset, a timeout, a 502 or 504) that the answer called duplicates: the lost attempt
	// imported them. The service's counts cannot tell those from rows already on the list
	// before the run, which such a batch counts here too.
	ConfirmedOnRetry int
	// Duplicate counts rows already on the list, or repeated within their batch.
	Duplicate int
	// Failed holds every row refused by the check before sending or by the service, and
	// the rows of a call that failed for a known reason (an error answer, a refusal, a
	// dial error), each with why, in row order.
	Failed []FailedRow
	// Unknown holds the rows of calls whose outcome is unknown, in row order: every attempt
	// may have reached the service (the connection broke after the body was sent), so
	// they may have been imported. Each Err matches ErrOutcomeUnknown. The command is
	// idempotent: importing them again settles them. len(Unknown) is their count.
	Unknown []FailedRow
	// Unattributed counts rows the service did not import that could not be traced: a
	// failure that did not recur when its batch was resent in parts, or that Stop left
	// unsearched, or rows an answer's totals left out.
	Unattributed int
	// NotAttempted counts rows read but never sent, or whose call was cut short, because
	// the import was stopped: ctx ended, or an error that every batch would get ended the
	// run. Nothing refused them; importing them again completes the job.
	NotAttempted int
}

// ErrRowRefused is the error of a row that subscriber.import counted as failed; the
// service gives no reason (a suppressed address, an unknown custom field, …).
var ErrRowRefused = errors.New("sendloop: subscriber.import refused the row")

// ImportAll imports any number of rows into a list through subscriber.import, in batches,
// several at a time, holding no more than Concurrency+1 batches in memory. Rows are
// checked as they are read; the worker that sends a batch encodes it, in parallel with the
// others and while other batches are in flight.
//
// Nothing is dropped silently: every row read from rows ends up in Imported, Duplicate,
// Failed, Unknown, Unattributed or NotAttempted. Rows with a malformed address are refused before
// sending, and an address repeated within a batch is counted as a duplicate without being
// sent. When the service counts failures in a batch, ImportAll resends the batch in halves
// (the command is idempotent: rows already imported come back as duplicates) until each
// failing row is found; failures it cannot trace, and rows the service's totals leave out,
// are counted in Unattributed. A batch retried after an attempt that may have run counts
// the rows the answer calls duplicates as imported, in ConfirmedOnRetry. The report lists
// failed rows by their position in the sequence.
//
// ImportAll is done with a row once it asks for the next one: it keeps a copy of what it
// sends, and of a row it reports, so a sequence may hand every row in the same Fields map,
// refilled.
//
// ImportAll stops reading rows and starts no new call when ctx ends (returning ctx's
// error once the calls in flight have ended, as opts.Stop says), at the first error
// that would fail every batch (a bad key, an unknown list, a 4xx status other than 408
// and 429) and after three batches in a row fail, returning that error with the report so
// far; rows not read stay in the sequence. Rows read but not sent, and those of calls the
// stop cut short, are counted in NotAttempted, never in Failed: nothing refused them.
// Other call failures fail their batch's rows and the import goes on; a call whose outcome
// is unknown (ErrOutcomeUnknown: every attempt may have run) puts its rows in Unknown, not
// Failed, since the service may have imported them.
func (s *SubscribersService) ImportAll(ctx context.Context, listID int, rows iter.Seq[ImportSubscriber], opts ImportOptions) (*ImportReport, error) {
	const command = commands.SubscriberImport
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx) // ends: start no new call
	defer cancel(nil)
	work, endWork := opts.Stop.InFlight(ctx) // ends: end the calls in flight
	defer endWork()

	run := &importRun{svc: s, listID: listID, opts: opts, cancel: cancel,
		free: make(chan *importBatch, opts.Concurrency+1)}
	var enc importEncoder
	// The key and the list open every body.
	run.head = enc.start(s.client.appendKeyParam(nil), listID)
	// Unbuffered: a batch is filled only while the workers are busy, so at most
	// Concurrency+1 batches exist at a time.
	batches := make(chan *importBatch)
	var wg sync.WaitGroup
	for range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := run.worker()
			for batch := range batches {
				w.send(ctx, work, batch)
			}
		}()
	}

	done := ctx.Done()
	index := 0
	batch := run.batch()
	inBatch := make(map[string]struct{}, opts.BatchSize)
read:
	for row := range rows {
		select {
		case <-done:
			run.skip(1)
			index++
			break read
		default:
		}
		if !enc.check(row) {
			// The report keeps the row: a map of its own, as the caller may refill its map
			// for the next row.
			kept := row
			kept.Fields = maps.Clone(row.Fields)
			run.fail(indexedRow{index, kept}, checkImportRow(command, index, row))
		} else if key := strings.ToLower(row.EmailAddress); hasKey(inBatch, key) {
			run.duplicate()
		} else {
			inBatch[key] = struct{}{}
			batch.add(index, row, enc.fields)
		}
		index++
		if batch.n() == opts.BatchSize {
			queued := run.queue(ctx, batches, batch)
			batch = run.batch()
			clear(inBatch)
			if !queued {
				break read
			}
		}
	}
	if batch.n() > 0 {
		run.queue(ctx, batches, batch)
		batch = nil // the worker's now, and then the free list's
	}
	close(batches)
	wg.Wait()
	run.release(batch)

	run.mu.Lock()
	defer run.mu.Unlock()
	run.report.Rows = index
	// Workers finish in any order: list the failures as the rows came.
	byIndex := func(a, b FailedRow) int { return a.Index - b.Index }
	slices.SortStableFunc(run.report.Failed, byIndex)
	slices.SortStableFunc(run.report.Unknown, byIndex)
	err := run.fatal
	if err == nil {
		err = parent.Err()
	}
	return &run.report, err
}

func hasKey(m map[string]struct{}, key string) bool {
	_, ok := m[key]
	return ok
}

// importRun is the shared state of one ImportAll.
type importRun struct {
	svc    *SubscribersService
	listID int
	opts   ImportOptions
	cancel context.CancelCauseFunc

	mu           sync.Mutex
	report       ImportReport
	fatal        error
	failedInARow int
	progressMu   sync.Mutex // keeps OnProgress calls one at a time, outside mu

	free chan *importBatch // batches done with, for reuse
	head []byte            // what opens every body: the key and the list
}

// importWorker encodes and sends batches, one at a time.
type importWorker struct {
	run      *importRun
	enc      importEncoder
	bodySize int // the capacity a body starts with: the largest seen
}

func (r *importRun) worker() *importWorker {
	return &importWorker{run: r, bodySize: len(r.head) + min(r.opts.BatchSize, 1<<16)*128}
}

// encode writes b's body from its checked rows, and lets the rows go.
func (w *importWorker) encode(b *importBatch) {
	if cap(b.body) < w.bodySize {
		b.body = make([]byte, 0, w.bodySize)
	}
	b.body = append(b.body[:0], w.run.head...)
	b.head = len(w.run.head)
	start := 0
	for k, email := range b.emails {
		b.body = w.enc.appendFields(b.body, k, email, b.fields[start:b.fEnd[k]])
		b.ends = append(b.ends, len(b.body))
		start = b.fEnd[k]
	}
	w.bodySize = max(w.bodySize, len(b.body)+len(b.body)/8)
	clear(b.emails) // the caller's strings are not kept: failures are read back from the body
	clear(b.fields)
	b.emails, b.fields = b.emails[:0], b.fields[:0]
}

// batch returns an empty batch, reusing one done with.
func (r *importRun) batch() *importBatch {
	var b *importBatch
	select {
	case b = <-r.free:
	default:
		if b, _ = batchPool.Get().(*importBatch); b == nil {
			b = new(importBatch)
		}
	}
	// Sized once, not grown by append's small steps.
	if n := r.opts.BatchSize; cap(b.idx) < n {
		b.idx, b.set, b.emails, b.fEnd = make([]int, 0, n), make([]bool, 0, n), make([]string, 0, n), make([]int, 0, n)
		b.ends = make([]int, 0, n)
	}
	b.idx, b.set, b.emails, b.fields, b.fEnd = b.idx[:0], b.set[:0], b.emails[:0], b.fields[:0], b.fEnd[:0]
	b.ends = b.ends[:0]
	return b
}

// batchPool keeps the batches of finished runs for the next: a sync service imports
// again and again.
var batchPool sync.Pool

// release hands the run's idle batches to batchPool: those of the free list, and last,
// the reader's, when it was never handed over (nil otherwise).
func (r *importRun) release(last *importBatch) {
	if last != nil && last.n() == 0 && last.body != nil {
		batchPool.Put(last)
	}
	for {
		select {
		case b := <-r.free:
			if b.body != nil {
				batchPool.Put(b)
			}
		default:
			return
		}
	}
}

// recycle offers a sent batch for reuse. Its body is kept only when the service answered
// the import's one attempt, which it does once the whole body has reached it: after any
// other outcome the HTTP transport may still be reading it.
func (r *importRun) recycle(b *importBatch, answered bool) {
	if !answered {
		b.body = nil
	}
	clear(b.emails) // a batch never encoded still holds the caller's strings
	clear(b.fields)
	select {
	case r.free <- b:
	default:
	}
}

// maxFailedBatches is how many batches in a row may fail before ImportAll gives up.
const maxFailedBatches = 3

// queue hands a batch to the workers, or fails its rows when the run is over.
func (r *importRun) queue(ctx context.Context, batches chan<- *importBatch, batch *importBatch) bool {
	if ctx.Err() != nil { // before the select, which would pick a free worker as often
		r.skip(batch.n())
		return false
	}
	select {
	case batches <- batch:
		return true
	case <-ctx.Done():
		r.skip(batch.n())
		return false
	}
}

// send sends a batch unless ctx (the run's "start no new call") has ended; the call runs
// under work.
func (w *importWorker) send(ctx, work context.Context, b *importBatch) {
	r := w.run
	n := b.n()
	if ctx.Err() != nil {
		r.skip(n)
		r.recycle(b, true) // never sent
		return
	}
	w.encode(b)
	var att importAttempts
	res, err := r.svc.sendImport(work, b.body, &att)
	defer func() { r.recycle(b, err == nil && att.once) }()
	if err != nil && cutShort(work, err) {
		r.skip(n)
		return
	}
	if err != nil {
		r.mu.Lock()
		r.failedInARow++
		if (importFatal(err) || r.failedInARow >= maxFailedBatches) && r.fatal == nil {
			r.fatal = err
			r.cancel(err)
		}
		r.mu.Unlock()
		if errors.Is(err, ErrOutcomeUnknown) {
			r.unknown(b.rows(), err)
		} else {
			r.failAll(b.rows(), err)
		}
		return
	}
	var refused []indexedRow
	if res.Failed > 0 {
		// An error while resending leaves the untraced failures in Unattributed below.
		refused, _ = r.locate(ctx, work, b.rows())
	}
	r.mu.Lock()
	r.failedInARow = 0
	r.report.Imported += res.Imported
	if att.retried {
		// The rows a lost attempt imported come back as duplicates.
		r.report.Imported += res.Duplicate
		r.report.ConfirmedOnRetry += res.Duplicate
	} else {
		r.report.Duplicate += res.Duplicate
	}
	for _, row := range refused {
		r.report.Failed = append(r.report.Failed, FailedRow{Index: row.index, Subscriber: row.row, Err: ErrRowRefused})
	}
	// Failures the halves did not reproduce, and rows the totals leave out, cannot be tied
	// to a row: count them rather than guess.
	r.report.Unattributed += max(res.Failed-len(refused), 0)
	r.report.Unattributed += max(n-res.Imported-res.Duplicate-res.Failed, 0)
	r.mu.Unlock()
	r.progress()
}

// importFatal reports an error that every batch would get.
func importFatal(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch apiErr.Code {
		case ErrIPNotAuthorized, ErrInvalidAPIKey, ErrListNotFound, ErrCommandDisabled,
			ErrTrialExpired, ErrInvalidCredentials, ErrUserInactive:
			return true
		}
		return false
	}
	var httpErr *HTTPError
	return errors.As(err, &httpErr) && httpErr.HTTPStatus >= 400 && httpErr.HTTPStatus < 500 &&
		httpErr.HTTPStatus != 408 && httpErr.HTTPStatus != 429
}

// locate finds the rows of batch that the service refuses, by resending it in halves.
// No call starts once ctx has ended; the calls run under work.
func (r *importRun) locate(ctx, work context.Context, batch []indexedRow) ([]indexedRow, error) {
	if len(batch) == 1 {
		return batch, nil
	}
	var refused []indexedRow
	for _, part := range [][]indexedRow{batch[:len(batch)/2], batch[len(batch)/2:]} {
		if ctx.Err() != nil {
			return refused, nil // no call starts after the stop: the rest stay untraced
		}
		res, err := r.svc.importChecked(work, r.listID, subscribersOf(part))
		if err != nil {
			return refused, err
		}
		if res.Failed == 0 {
			continue
		}
		found, err := r.locate(ctx, work, part)
		refused = append(refused, found...)
		if err != nil {
			return refused, err
		}
	}
	return refused, nil
}

func (r *importRun) fail(row indexedRow, err error) {
	r.mu.Lock()
	r.report.Failed = append(r.report.Failed, FailedRow{Index: row.index, Subscriber: row.row, Err: err})
	r.mu.Unlock()
	r.progress()
}

// skip counts rows that the stopped run never sent, or whose call the stop cut short.
func (r *importRun) skip(n int) {
	r.mu.Lock()
	r.report.NotAttempted += n
	r.mu.Unlock()
}

// cutShort reports whether err is the run's own stop rather than an answer about the batch:
// the import is idempotent, so such rows are left to the next run, not blamed.
func cutShort(ctx context.Context, err error) bool {
	if ctx.Err() == nil {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Cause(ctx))
}

func (r *importRun) duplicate() {
	r.mu.Lock()
	r.report.Duplicate++
	r.mu.Unlock()
	r.progress()
}

func (r *importRun) failAll(batch []indexedRow, err error) {
	r.mu.Lock()
	r.report.Failed = appendRows(r.report.Failed, batch, err)
	r.mu.Unlock()
	r.progress()
}

// unknown counts the rows of a call that may have run.
func (r *importRun) unknown(batch []indexedRow, err error) {
	r.mu.Lock()
	r.report.Unknown = appendRows(r.report.Unknown, batch, err)
	r.mu.Unlock()
	r.progress()
}

func appendRows(list []FailedRow, batch []indexedRow, err error) []FailedRow {
	for _, row := range batch {
		list = append(list, FailedRow{Index: row.index, Subscriber: row.row, Err: err})
	}
	return list
}

// progress reports the totals so far, outside mu so that a slow callback holds up no
// worker's bookkeeping.
func (r *importRun) progress() {
	if r.opts.OnProgress == nil {
		return
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.mu.Lock()
	p := ImportProgress{Imported: r.report.Imported, Duplicate: r.report.Duplicate,
		Failed: len(r.report.Failed) + r.report.Unattributed, Unknown: len(r.report.Unknown)}
	p.Rows = p.Imported + p.Duplicate + p.Failed + p.Unknown
	r.mu.Unlock()
	r.opts.OnProgress(p)
}

func subscribersOf(batch []indexedRow) []ImportSubscriber {
	out := make([]ImportSubscriber, len(batch))
	for i, row := range batch {
		out[i] = row.row
	}
	return out
}

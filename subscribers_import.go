package sendloop

import (
	"context"
	"errors"
	"iter"
	"sync"
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
}

// ImportProgress is the state of an ImportAll run.
type ImportProgress struct {
	Rows      int // rows read from the sequence and handled
	Imported  int
	Duplicate int
	Failed    int
}

// FailedRow is a row ImportAll could not import, with why.
type FailedRow struct {
	// Index is the row's position in the sequence, from 0.
	Index      int
	Subscriber ImportSubscriber
	// Err is a *ValidationError for a row refused before sending, ErrRowRefused for a row
	// the service counted as failed, or the error of the call that carried the row.
	Err error
}

// ImportReport is the outcome of ImportAll. Every row read from the sequence is counted
// in Imported, Duplicate or Failed.
type ImportReport struct {
	Rows      int
	Imported  int
	Duplicate int
	Failed    []FailedRow
	// Unattributed counts failures the service reported that could not be traced to a row
	// (a failure that did not recur when the batch was resent in parts).
	Unattributed int
}

// ErrRowRefused is the error of a row that subscriber.import counted as failed; the
// service gives no reason (a suppressed address, an unknown custom field, …).
var ErrRowRefused = errors.New("sendloop: subscriber.import refused the row")

// importFatal lists the codes that would fail every batch: ImportAll stops on them.
var importFatal = map[ErrorCode]bool{
	CodeIPNotAuthorized: true, CodeInvalidAPIKey: true, CodeListNotFound: true, CodeCommandDisabled: true,
	CodeTrialExpired: true, CodeInvalidCredentials: true, CodeUserInactive: true,
}

type indexedRow struct {
	index int
	row   ImportSubscriber
}

// ImportAll imports any number of rows into a list through subscriber.import, in batches,
// several at a time, holding no more than Concurrency+1 batches in memory.
//
// Nothing is dropped silently: rows with a malformed address are refused before sending,
// and when the service counts failures in a batch, ImportAll resends the batch in halves
// (the command is idempotent: rows already imported come back as duplicates) until each
// failing row is found. Every such row is in the report with its reason.
//
// ImportAll stops reading rows when ctx ends or when an error would fail every batch (a
// bad key, an unknown list, …) and returns that error with the report so far; other call
// failures fail their batch's rows and the import goes on.
func (s *SubscribersService) ImportAll(ctx context.Context, listID int, rows iter.Seq[ImportSubscriber], opts ImportOptions) (*ImportReport, error) {
	const command = "subscriber.import"
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	run := &importRun{svc: s, listID: listID, opts: opts, cancel: cancel}
	// Unbuffered: a batch is built only while the workers are busy, so at most
	// Concurrency+1 batches exist at a time.
	batches := make(chan []indexedRow)
	var wg sync.WaitGroup
	for range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range batches {
				run.send(ctx, batch)
			}
		}()
	}

	index := 0
	batch := make([]indexedRow, 0, opts.BatchSize)
	for row := range rows {
		if ctx.Err() != nil {
			break
		}
		if err := checkImportRow(command, 0, row); err != nil {
			run.fail(indexedRow{index, row}, err)
		} else {
			batch = append(batch, indexedRow{index, row})
		}
		index++
		if len(batch) == opts.BatchSize {
			queued := run.queue(ctx, batches, batch)
			batch = make([]indexedRow, 0, opts.BatchSize)
			if !queued {
				break
			}
		}
	}
	if len(batch) > 0 {
		run.queue(ctx, batches, batch)
	}
	close(batches)
	wg.Wait()

	run.mu.Lock()
	defer run.mu.Unlock()
	run.report.Rows = index
	return &run.report, run.fatal
}

// importRun is the shared state of one ImportAll.
type importRun struct {
	svc    *SubscribersService
	listID int
	opts   ImportOptions
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	report ImportReport
	fatal  error
}

// queue hands a batch to the workers, or fails its rows when the run is over.
func (r *importRun) queue(ctx context.Context, batches chan<- []indexedRow, batch []indexedRow) bool {
	select {
	case batches <- batch:
		return true
	case <-ctx.Done():
		r.failAll(batch, context.Cause(ctx))
		return false
	}
}

func (r *importRun) send(ctx context.Context, batch []indexedRow) {
	if err := context.Cause(ctx); ctx.Err() != nil {
		r.failAll(batch, err)
		return
	}
	res, err := r.svc.importChecked(ctx, r.listID, subscribersOf(batch))
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && importFatal[apiErr.Code] {
			r.mu.Lock()
			if r.fatal == nil {
				r.fatal = err
			}
			r.mu.Unlock()
			r.cancel(err)
		}
		r.failAll(batch, err)
		return
	}
	var refused []indexedRow
	if res.Failed > 0 {
		refused, err = r.locate(ctx, batch)
	}
	r.mu.Lock()
	r.report.Imported += res.Imported
	r.report.Duplicate += res.Duplicate
	for _, row := range refused {
		r.report.Failed = append(r.report.Failed, FailedRow{Index: row.index, Subscriber: row.row, Err: ErrRowRefused})
	}
	if err != nil {
		// The failures could not be traced: say so rather than guess which rows they were.
		r.report.Unattributed += res.Failed
	} else {
		r.report.Unattributed += max(res.Failed-len(refused), 0)
	}
	r.mu.Unlock()
	r.progress(len(batch))
}

// locate finds the rows of batch that the service refuses, by resending it in halves.
func (r *importRun) locate(ctx context.Context, batch []indexedRow) ([]indexedRow, error) {
	if len(batch) == 1 {
		return batch, nil
	}
	var refused []indexedRow
	for _, part := range [][]indexedRow{batch[:len(batch)/2], batch[len(batch)/2:]} {
		res, err := r.svc.importChecked(ctx, r.listID, subscribersOf(part))
		if err != nil {
			return refused, err
		}
		if res.Failed == 0 {
			continue
		}
		found, err := r.locate(ctx, part)
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
	r.progress(1)
}

func (r *importRun) failAll(batch []indexedRow, err error) {
	r.mu.Lock()
	for _, row := range batch {
		r.report.Failed = append(r.report.Failed, FailedRow{Index: row.index, Subscriber: row.row, Err: err})
	}
	r.mu.Unlock()
	r.progress(len(batch))
}

// progress reports the totals; the lock keeps OnProgress calls one at a time.
func (r *importRun) progress(rows int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report.Rows += rows
	if r.opts.OnProgress != nil {
		r.opts.OnProgress(ImportProgress{Rows: r.report.Rows, Imported: r.report.Imported,
			Duplicate: r.report.Duplicate, Failed: len(r.report.Failed) + r.report.Unattributed})
	}
}

func subscribersOf(batch []indexedRow) []ImportSubscriber {
	out := make([]ImportSubscriber, len(batch))
	for i, row := range batch {
		out[i] = row.row
	}
	return out
}

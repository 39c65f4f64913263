package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/cmd/sendloop/internal/csvsync"
	"github.com/go-sendloop/sendloop/legacy"
)

// importRow is the row sent for an addition: the address and the non-empty fields (an
// empty field of a new subscriber is empty anyway).
func importRow(m *csvsync.Mapping, row csvsync.Row) sendloop.ImportSubscriber {
	sub := sendloop.ImportSubscriber{EmailAddress: row.Email}
	for i, f := range m.Fields {
		if row.Values[i] == "" {
			continue
		}
		if sub.Fields == nil {
			sub.Fields = sendloop.CustomFields{}
		}
		sub.Fields[f.Field.ID] = row.Values[i]
	}
	return sub
}

// cutShort reports whether err is work's own cancellation rather than an answer.
func cutShort(work context.Context, err error) bool {
	return work.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(work)))
}

// applyAdds streams the file once more: rejected rows go to the sink, new addresses to
// ImportAll, until stop ends; the calls run on work. Rows the service refused are then
// traced to their lines by a last pass.
func applyAdds(stop, work context.Context, c *sendloop.Client, o *syncOptions, plan *csvsync.Plan,
	open func() (*csvsync.Reader, error), rejects *rejectSink, res *syncResult, prog *progress) error {
	if plan.Adds == 0 && plan.Rejected == 0 {
		return nil
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	mapping := plan.Mapping()
	var readErr error
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for ev, err := range plan.Events(r, csvsync.EventAdd|csvsync.EventReject) {
			if stop.Err() != nil {
				return // the rest of the file is not read: its rows are not attempted
			}
			if err != nil {
				readErr = err
				return
			}
			if ev.Kind == csvsync.EventReject {
				rejects.addRow(ev.Row, ev.Reason)
				continue
			}
			if !yield(importRow(mapping, ev.Row)) {
				return
			}
		}
	}
	if plan.Adds == 0 {
		for range rows {
		}
		return readErr
	}
	report, err := c.Subscribers.ImportAll(work, o.listID, rows, sendloop.ImportOptions{
		BatchSize:   o.batchSize,
		Concurrency: o.concurrency,
		OnProgress:  func(p sendloop.ImportProgress) { prog.set(int64(p.Rows)) },
		Stop:        stop.Done(), // a batch waiting for a worker is not sent after the first signal
	})
	if report != nil {
		res.Added, res.AlreadyPresent = report.Imported, report.Duplicate
		res.AddFailed = len(report.Failed) + report.Unattributed
		res.AddUntraced = report.Unattributed
		if report.Unattributed > 0 {
			rejects.a.note("the service refused %s that could not be traced to a line", plural(report.Unattributed, "row"))
		}
		if len(report.Failed) > 0 {
			if traceErr := traceFailures(plan, open, report.Failed, rejects); traceErr != nil {
				err = errors.Join(err, traceErr)
			}
		}
	}
	return errors.Join(err, readErr)
}

// traceFailures reads the additions again to find the lines of the rows ImportAll reports as
// failed (by their position among the additions), and rejects them.
func traceFailures(plan *csvsync.Plan, open func() (*csvsync.Reader, error), failed []sendloop.FailedRow, rejects *rejectSink) error {
	slices.SortFunc(failed, func(x, y sendloop.FailedRow) int { return x.Index - y.Index })
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	index, next := 0, 0
	for ev, err := range plan.Events(r, csvsync.EventAdd) {
		if err != nil {
			return err
		}
		if ev.Kind != csvsync.EventAdd {
			continue // the file changed: reported by the first pass
		}
		for next < len(failed) && failed[next].Index == index {
			rejects.add(ev.Row.Line, ev.Row.Raw, importFailure(failed[next].Err))
			next++
		}
		if next == len(failed) {
			break
		}
		index++
	}
	return nil
}

func importFailure(err error) string {
	if errors.Is(err, sendloop.ErrRowRefused) {
		return "refused by the service"
	}
	return "not imported: " + strings.TrimPrefix(err.Error(), "sendloop: ")
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

// updates yields the plan's updates in file order; a row that changed since the plan goes
// to rejects.
func updates(plan *csvsync.Plan, r *csvsync.Reader, rejects *rejectSink) iter.Seq2[csvsync.Update, error] {
	return func(yield func(csvsync.Update, error) bool) {
		for ev, err := range plan.Events(r, csvsync.EventUpdate) {
			if err != nil {
				yield(csvsync.Update{}, err)
				return
			}
			if ev.Kind == csvsync.EventReject {
				rejects.addRow(ev.Row, ev.Reason)
				continue
			}
			if !yield(*ev.Update, nil) {
				return
			}
		}
	}
}

func applyUpdates(stop, work context.Context, c *sendloop.Client, o *syncOptions, plan *csvsync.Plan,
	open func() (*csvsync.Reader, error), rejects *rejectSink, res *syncResult, prog *progress) error {
	if plan.Updates == 0 {
		return nil
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	var mu sync.Mutex
	return forEach(stop, o.concurrency, updates(plan, r, rejects), func(u csvsync.Update) {
		err := c.Subscribers.Update(work, o.listID, sendloop.SubscriberUpdateParams{SubscriberID: u.SubscriberID, Fields: sendloop.CustomFields(u.Fields)})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			res.Updated++
		case cutShort(work, err):
			// not attempted: the next run does it
		default:
			res.UpdateFailed++
			rejects.add(u.Line, u.Email, "update failed: "+strings.TrimPrefix(err.Error(), "sendloop: "))
		}
		prog.add(1)
	})
}

func applyUnsubscribes(stop, work context.Context, a *app, lc *legacy.Client, o *syncOptions, plan *csvsync.Plan, res *syncResult, prog *progress) error {
	if lc == nil || plan.Unsubscribes == 0 {
		return nil
	}
	var mu sync.Mutex
	return forEach(stop, o.concurrency, plan.ToUnsubscribe(), func(u csvsync.Unsubscribe) {
		_, err := lc.SubscriberUnsubscribe(work, o.listID, legacy.SubscriberUnsubscribeParams{EmailAddress: u.Email, UnsubscriptionIP: unsubscriptionIP})
		if errors.Is(err, legacy.ErrEmailNotInList) {
			err = nil // gone since the plan was made: the list is as wanted
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			res.Unsubscribed++
		case cutShort(work, err):
		default:
			res.UnsubscribeFailed++
			fmt.Fprintf(a.stderr, "sendloop: unsubscribing %s: %v\n", u.Email, err)
		}
		prog.add(1)
	})
}

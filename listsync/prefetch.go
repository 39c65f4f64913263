package listsync

import (
	"context"
	"slices"
	"sync"

	"github.com/go-sendloop/sendloop"
)

// prefetch is what Plan starts beside list.get, so that a first sync does not wait for
// list.get, then the members' first page, then the join, one after the other: the
// members' first page and the two suppression lists (calls that need nothing list.get
// says), and, for a CSV file, an early reading of the rows through the mapping that the
// header alone suggests (every column a custom field of that name). Plan keeps the early
// reading only when the list's real mapping reads the rows alike (same address, status and
// value columns, in the same order): the plan's records are then the same. Nothing of it is
// an API call of its own: Plan makes these calls anyway, and makes them again when a
// prefetched one failed, so that its errors are what they would have been. Everything it
// starts has ended once end returns, which Plan defers.
type prefetch struct {
	cancel context.CancelFunc
	calls  chan struct{} // closed once the three calls have answered
	page   []sendloop.Subscriber
	sup    [2]suppressed // the list's suppression list, then the global one
	failed bool          // a call failed: Plan makes them again

	early *earlyRead // nil when there is none, or none to keep
	taken bool       // the early reading's planner is the plan's: end leaves it open

	counts planCounters // Plan's progress, which the early reading starts
}

// earlyRead is the reading of a CSV file that startPrefetch starts.
type earlyRead struct {
	guess  *Mapping
	p      *planner
	cancel context.CancelFunc
	done   chan struct{} // closed when the reading has ended
	err    error         // its error, once done is closed
}

// startPrefetch starts the calls and, with early, for a CSV file whose header maps on its
// own, the early reading; they run on ctx, until end.
func (j *Job) startPrefetch(ctx context.Context, early bool) *prefetch {
	ctx, cancel := context.WithCancel(ctx)
	pre := &prefetch{cancel: cancel, calls: make(chan struct{})}
	var wg sync.WaitGroup
	var errs [3]error
	wg.Add(3)
	go func() {
		defer wg.Done()
		pre.page, errs[0] = j.client.Subscribers.Browse(ctx, j.listID, sendloop.SubscriberBrowseParams{})
	}()
	for i, id := range [2]int{j.listID, 0} {
		go func() {
			defer wg.Done()
			pre.sup[i].entries, errs[1+i] = j.client.Suppression.List(ctx, id)
		}()
	}
	go func() {
		wg.Wait()
		pre.failed = errs != [3]error{}
		close(pre.calls)
	}()
	if f, ok := j.src.(*CSVFile); ok && early {
		pre.early = j.startEarlyRead(ctx, f, &pre.counts)
	}
	return pre
}

// startEarlyRead starts reading f through the mapping its header suggests, or returns nil
// when the header does not map on its own.
func (j *Job) startEarlyRead(ctx context.Context, f *CSVFile, counts *planCounters) *earlyRead {
	// A field named as each column, with an ID no list has: every column that is not the
	// address, the status or a read-only one holds a value, as when the list's fields bear
	// the columns' names (a key, CustomField<id>, is such a name too). keepFor checks it.
	fields := make([]Field, len(f.Header))
	for col, name := range f.Header {
		fields[col] = Field{ID: -1 - col, Name: name}
	}
	guess, err := mapHeader(f.Header, fields, f.opts.Header)
	if err != nil {
		return nil
	}
	p, err := j.newPlanner(guess, counts)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	er := &earlyRead{guess: guess, p: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(er.done)
		er.err = p.readSource(ctx, func() (pass, error) { return f.open(ctx, guess) })
	}()
	return er
}

// readsAlike reports whether two mappings make the same rows of a record: what
// Mapping.Row reads depends on these alone.
func readsAlike(a, b *Mapping) bool {
	return a.Email == b.Email && a.Status == b.Status && a.Columns == b.Columns && a.keepSpaces == b.keepSpaces &&
		slices.EqualFunc(a.Fields, b.Fields, func(x, y MappedField) bool { return x.Column == y.Column })
}

// keepFor drops the early reading unless m reads the rows as its guess does.
func (pre *prefetch) keepFor(m *Mapping) {
	if pre.early != nil && !readsAlike(pre.early.guess, m) {
		pre.early.stop()
		pre.early = nil
	}
}

// end stops everything startPrefetch started and waits for it; the early reading's
// planner is closed unless the plan took it.
func (pre *prefetch) end() {
	pre.cancel()
	<-pre.calls
	if er := pre.early; er != nil {
		er.cancel()
		<-er.done
		if !pre.taken {
			er.p.close()
		}
	}
}

// stop ends the reading, waits for it and lets its planner go.
func (er *earlyRead) stop() {
	er.cancel()
	<-er.done
	er.p.close()
}

// wait is readSource for the planner of the early reading: it waits for the reading and
// returns its error. When ctx ends first, it stops the reading and waits for it.
func (er *earlyRead) wait(ctx context.Context) error {
	select {
	case <-er.done:
		return er.err
	case <-ctx.Done():
		er.cancel()
		<-er.done
		return ctx.Err()
	}
}

// waitCalls waits for the prefetched calls, or for ctx to end (then it stops them).
func (pre *prefetch) waitCalls(ctx context.Context) error {
	select {
	case <-pre.calls:
		return nil
	case <-ctx.Done():
		pre.cancel()
		<-pre.calls
		return ctx.Err()
	}
}

// readPrefetchedMembers is readMembers from the prefetched calls: the first page, the rest
// of the list from the second page, then the suppressed addresses. When a prefetched call
// failed, it makes them all again as readMembers does, so that errors are reported in its
// order.
func (j *Job) readPrefetchedMembers(ctx context.Context, pre *prefetch, p *planner, report func()) error {
	if err := pre.waitCalls(ctx); err != nil {
		return err
	}
	if pre.failed {
		return j.readMembers(ctx, p, &pre.counts.members, report)
	}
	ids := mappedFieldIDs(j.mapping)
	values := make([]string, len(ids))
	for _, s := range pre.page {
		// The values Members would decode: both read CustomFields the same way.
		for i, id := range ids {
			values[i] = s.CustomFields[id]
		}
		if err := p.addMember(s.SubscriberID, s.EmailAddress, string(s.SubscriptionStatus), values); err != nil {
			return err
		}
		pre.counts.members.Add(1)
	}
	report()
	if len(pre.page) >= sendloop.BrowsePageSize {
		if err := j.walkMembersFrom(ctx, p, 1, &pre.counts.members, report); err != nil {
			return err
		}
	}
	return addSuppressed(p, pre.sup)
}

package listsync

import (
	"context"
	"sync/atomic"

	"github.com/go-sendloop/sendloop"
)

// suppressed is the answer of one suppression read.
type suppressed struct {
	entries []sendloop.SuppressionEntry
	err     error
}

// readMembers reads the list's members (Options.Concurrency pages at once) and its
// suppression lists (the list's, then the global one) into the planner. The suppression
// reads start with the first pages, not after the last: over a real link each is a round
// trip that need not wait for the others. Their addresses join the planner once the members
// are read, and errors are reported as if one call followed the other: the members' first,
// then the list's suppressions, then the global ones.
func (j *Job) readMembers(ctx context.Context, p *planner, members *atomic.Int64, report func()) error {
	return j.readSuppressedWith(ctx, p, func(ctx context.Context) error { return j.walkMembers(ctx, p, members, report) })
}

// readSuppressedWith reads the suppression lists while feed gives the planner the list's
// members, and reports errors as readMembers does.
func (j *Job) readSuppressedWith(ctx context.Context, p *planner, feed func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := [2]int{j.listID, 0}
	var answers [2]chan suppressed
	for i, id := range ids {
		answers[i] = make(chan suppressed, 1)
		go func() {
			entries, err := j.client.Suppression.List(ctx, id)
			answers[i] <- suppressed{entries, err}
		}()
	}
	if err := feed(ctx); err != nil {
		cancel() // ends the suppression reads, which are waited for: none outlives the call
		for _, answer := range answers {
			<-answer
		}
		return err
	}
	var got [2]suppressed
	for i, answer := range answers {
		if got[i] = <-answer; got[i].err != nil {
			return got[i].err
		}
	}
	return addSuppressed(p, got)
}

// addSuppressed gives the planner the addresses of the suppression lists' answers.
func addSuppressed(p *planner, answers [2]suppressed) error {
	for _, a := range answers {
		for _, e := range a.entries {
			if err := p.suppress(e.EmailAddress); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkMembers reads the list's members into the planner: Subscribers.Members, decoding
// only what the plan compares.
func (j *Job) walkMembers(ctx context.Context, p *planner, members *atomic.Int64, report func()) error {
	return j.walkMembersFrom(ctx, p, 0, members, report)
}

// walkMembersFrom is walkMembers from page start on.
func (j *Job) walkMembersFrom(ctx context.Context, p *planner, start int, members *atomic.Int64, report func()) error {
	walk := sendloop.SubscriberMembersParams{FieldIDs: mappedFieldIDs(j.mapping), StartIndex: start, Concurrency: j.opts.Concurrency}
	for m, err := range j.client.Subscribers.Members(ctx, j.listID, walk) {
		if err != nil {
			return err
		}
		if err := p.addMember(m.SubscriberID, m.EmailAddress, string(m.SubscriptionStatus), m.Values); err != nil {
			return err
		}
		if members.Add(1)%sendloop.BrowsePageSize == 0 {
			report()
		}
	}
	return nil
}

package listsync

import (
	"fmt"

	"github.com/go-sendloop/sendloop/job"
)

// GuardError refuses a plan that would unsubscribe more members than the limit allows, or
// (EmptySource) every member of the list while the source names no subscriber at all: an
// empty or truncated export must not empty the list, whatever the limit.
type GuardError struct {
	// EmptySource reports the refusal of a source that names no subscriber.
	EmptySource bool
	// Unsubscribes is the number of members the plan would unsubscribe.
	Unsubscribes int
	// Members is the number of the list's subscribed and pending members.
	Members int
	// Allowed is the number the limit allows.
	Allowed int
	// Limit is the limit.
	Limit job.Budget
	// KeptNotOwned counts the absent members the plan keeps because they are not the
	// sync's (Plan.KeptNotOwned): not among Unsubscribes.
	KeptNotOwned int
}

// Error says how many members the plan would unsubscribe and how many the limit allows,
// or that the source names no subscriber.
func (e *GuardError) Error() string {
	if e.EmptySource {
		return fmt.Sprintf("listsync: refusing to unsubscribe every member of the list (%d): the source names no subscriber", e.Unsubscribes)
	}
	kept := ""
	if e.KeptNotOwned > 0 {
		kept = fmt.Sprintf(" (%d more absent kept: not the sync's)", e.KeptNotOwned)
	}
	return fmt.Sprintf("listsync: refusing to unsubscribe members: %d of %d, beyond the limit %s (%d)%s; nothing was changed",
		e.Unsubscribes, e.Members, e.Limit, e.Allowed, kept)
}

// UnreadableError refuses to unsubscribe anyone when the source has records that could not
// be parsed (an unterminated quote swallows the lines after it): who is missing is unknown.
// The malformed rows are among the plan's rejected rows (Events with EventReject, their
// Row.Malformed set).
type UnreadableError struct {
	// Records is the number of records that could not be parsed.
	Records int
}

// Error says how many records could not be read.
func (e *UnreadableError) Error() string {
	return fmt.Sprintf("listsync: refusing to unsubscribe anyone: records of the source cannot be read (%d), so who is missing is unknown; nothing was changed", e.Records)
}

// Check refuses a plan that must not be applied: one that would unsubscribe members while
// some records could not be read (*UnreadableError), every member while the source names no
// subscriber (*GuardError with EmptySource), or more members than max allows (*GuardError; the zero Budget allows none, and
// DefaultApplyOptions holds the default, job.DefaultMaxUnsubscribe). A dry run
// calls it to say what Apply would refuse; Apply calls it before any change.
func (pl *Plan) Check(max job.Budget) error {
	if pl.planner.opts.UnsubscribeMissing && pl.Unreadable > 0 {
		return &UnreadableError{Records: pl.Unreadable}
	}
	if pl.Unsubscribes > 0 && pl.Named() == 0 {
		return &GuardError{EmptySource: true, Unsubscribes: pl.Unsubscribes, Members: pl.Members, Allowed: max.Allowed(pl.Members), Limit: max, KeptNotOwned: pl.KeptNotOwned}
	}
	if allowed := max.Allowed(pl.Members); allowed >= 0 && pl.Unsubscribes > allowed {
		return &GuardError{Unsubscribes: pl.Unsubscribes, Members: pl.Members, Allowed: allowed, Limit: max, KeptNotOwned: pl.KeptNotOwned}
	}
	return nil
}

// Named counts the rows that name a subscriber: added, updated, unchanged or skipped.
func (pl *Plan) Named() int {
	return pl.Adds + pl.Updates + pl.Unchanged + pl.SkippedUnsubscribed + pl.SkippedSuppressed + pl.SkippedStatus
}

// Package browse lets the sync engine (listsync) read a list's members without the cost of
// the whole Subscriber record: package sendloop sets Members, which walks the list as
// Subscribers.BrowseIter does but decodes only what a sync compares.
package browse

import (
	"context"
	"iter"
)

// Member is a list member as a sync reads it. Its Values are those of the field IDs the
// walk was given, in that order ("" for a field the record does not carry); the slice is
// the walk's and is written over once the iteration moves on, so a caller copies what it
// keeps. ID, Email and Status may be kept.
type Member struct {
	ID     int
	Email  string
	Status string
	Values []string
}

// Members walks the members of listID through subscribers (a *sendloop.SubscribersService)
// with up to concurrency pages in flight, by the rules of Subscribers.BrowseIter: the same
// records in the same order, the same errors. It is set by package sendloop when it is
// initialised, so it is never nil for a package that imports sendloop.
var Members func(ctx context.Context, subscribers any, listID, concurrency int, fieldIDs []int) iter.Seq2[Member, error]

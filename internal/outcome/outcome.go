// Package outcome holds the one sentinel that every sendloop package returns when a write
// may or may not have taken effect, so that errors.Is works across the root, legacy and
// smtp packages alike, and the one error type that carries it (exported by the root and
// legacy packages as OutcomeUnknownError).
package outcome

import (
	"errors"
	"strings"
)

// ErrUnknown is matched (errors.Is) by every error after which a write may or may not have
// taken effect: the request may have reached the service, and nothing proves what it did.
var ErrUnknown = errors.New("outcome unknown: the write may or may not have taken effect")

// Error is an outcome-unknown failure. It wraps ErrUnknown and the failure that made the
// outcome unknown (First), so that errors.Is and errors.As reach both. The answer that
// caused the doubt (Last, e.g. an "already exists" to the retry of a write whose first
// attempt may have run) and a read-back's failure (ReadBack) are kept in their fields and in
// the message but not wrapped: an "already exists" that the call's own first attempt may
// have caused must not read as "it was there before".
type Error struct {
	// Prefix starts the message, e.g. "sendloop: subscriber.subscribe".
	Prefix string
	// First is the failure that made the outcome unknown: an attempt that may have reached
	// the service and left no answer (a reset, a timeout, a 502 or 504). Wrapped.
	First error
	// Last is the call's last answer or failure when it is not First: the answer that
	// caused the doubt ("already exists", "not found", a page that is not the service's)
	// or the last attempt's failure. Not wrapped; nil when there is none.
	Last error
	// ReadBack is why the read that should have proved the write's end state did not: its
	// failure, or what it showed instead. Not wrapped; nil when no read-back was made.
	ReadBack error
}

// Error returns the prefix, the sentinel's text, then the first failure, the last answer
// and the read-back's failure where set.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Prefix != "" {
		b.WriteString(e.Prefix)
		b.WriteString(": ")
	}
	b.WriteString(ErrUnknown.Error())
	if e.First != nil {
		b.WriteString("; first failure: ")
		b.WriteString(e.First.Error())
	}
	if e.Last != nil && e.Last != e.First {
		b.WriteString("; last answer: ")
		b.WriteString(e.Last.Error())
	}
	if e.ReadBack != nil {
		b.WriteString("; the read-back does not prove the write: ")
		b.WriteString(e.ReadBack.Error())
	}
	return b.String()
}

// Unwrap gives ErrUnknown, then First where set; never Last or ReadBack.
func (e *Error) Unwrap() []error {
	if e.First == nil {
		return []error{ErrUnknown}
	}
	return []error{ErrUnknown, e.First}
}

// Settle decides an "already done" answer (already exists, not found) to a write of which an
// earlier attempt may have run, first being that attempt's failure: prove reads the service
// and returns nil when it shows the write's intended end state, and the call succeeded.
// Otherwise the outcome is unknown: an *Error wrapping first, with the answer and prove's
// error in Last and ReadBack.
func Settle(prefix string, first, answer error, prove func() error) error {
	proveErr := prove()
	if proveErr == nil {
		return nil
	}
	return &Error{Prefix: prefix, First: first, Last: answer, ReadBack: proveErr}
}

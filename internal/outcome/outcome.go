// Package outcome holds the one sentinel that every sendloop package returns when a write
// may or may not have taken effect, so that errors.Is works across the root, legacy and
// smtp packages alike.
package outcome

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknown is matched (errors.Is) by every error after which a write may or may not have
// taken effect: the request may have reached the service, and nothing proves what it did.
var ErrUnknown = errors.New("outcome unknown: the write may or may not have taken effect")

// Error is an outcome-unknown failure. It wraps the failure that made the outcome unknown
// (First) and the last answer or failure of the call (Last), either of which may be nil,
// so that errors.Is and errors.As reach both as well as ErrUnknown.
type Error struct {
	// Prefix starts the message, e.g. "sendloop: subscriber.subscribe".
	Prefix string
	First  error
	Last   error
}

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
	return b.String()
}

// Unwrap gives ErrUnknown, then First and Last where set.
func (e *Error) Unwrap() []error {
	errs := []error{ErrUnknown}
	if e.First != nil {
		errs = append(errs, e.First)
	}
	if e.Last != nil && e.Last != e.First {
		errs = append(errs, e.Last)
	}
	return errs
}

// Settle decides an "already done" answer (already exists, not found) to a write of which an
// earlier attempt may have run, first being that attempt's failure: prove reads the service
// and returns nil when it shows the write's intended end state, and the call succeeded.
// Otherwise the outcome is unknown: an *Error wrapping first, the answer and prove's error.
func Settle(prefix string, first, answer error, prove func() error) error {
	proveErr := prove()
	if proveErr == nil {
		return nil
	}
	return &Error{Prefix: prefix, First: first,
		Last: errors.Join(answer, fmt.Errorf("the read-back does not prove the write: %w", proveErr))}
}

package legacy

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/go-sendloop/sendloop/internal/outcome"
	"github.com/go-sendloop/sendloop/internal/transport"
)

// ErrOutcomeUnknown is matched (errors.Is) by the error of a write that may or may not have
// taken effect (see the package doc). It is the same sentinel as sendloop.ErrOutcomeUnknown
// and smtp.ErrOutcomeUnknown. Such an error is an *OutcomeUnknownError.
var ErrOutcomeUnknown = outcome.ErrUnknown

// OutcomeUnknownError is the error of a write that may or may not have taken effect. It
// matches ErrOutcomeUnknown and wraps the failure that made the outcome unknown (a
// *TransportError keeps context.DeadlineExceeded and the like). The answer that caused the
// doubt is not wrapped: an "already exists" (ErrEmailExists, 6) or "not in the list"
// (ErrEmailNotInList, 8) that the read-back could not settle may be this call's own doing,
// so errors.Is(err, ErrEmailExists) is false. That answer and the read-back's failure are
// in the message and in the fields. It is the same type as sendloop.OutcomeUnknownError.
//
// OutcomeUnknownError is declared once, in an internal package, for every package of the
// module; go doc does not list the fields of such an alias, so here they are:
//
//	type OutcomeUnknownError struct {
//		// Prefix starts the message, e.g. "sendloop/legacy: Subscriber.Add".
//		Prefix string
//		// First is the failure that made the outcome unknown (a *TransportError, an
//		// *HTTPError for a gateway's 502 or 504). Wrapped.
//		First error
//		// Last is the call's last answer or failure when it is not First, e.g. the *Error
//		// with code 6 answered to the retry. Not wrapped; nil when there is none.
//		Last error
//		// ReadBack is why the read-back did not prove the write's end state. Not wrapped;
//		// nil when none was made.
//		ReadBack error
//	}
type OutcomeUnknownError = outcome.Error

// TransportError is a failure that left no answer to read (a dial error, a reset, a
// timeout, a body cut short, a cancellation), with the command, the attempts made and the
// cause. It is the same type as sendloop.TransportError.
//
// TransportError is declared once, in an internal package, for both clients; go doc does
// not list the fields of such an alias, so here they are:
//
//	type TransportError struct {
//		// Command is the command that failed, e.g. "list.get".
//		Command string
//		// Attempts is how many times the request was sent.
//		Attempts int
//		// Err is the cause, with any secret removed from its text; Unwrap returns it.
//		Err error
//	}
type TransportError = transport.Error

// ErrorCode is a numeric error code of the legacy API (the APIErrorCode member of a failure
// answer).
//
// An ErrorCode is itself an error, so each named code (ErrListNotFound, …) is also the
// sentinel: errors.Is(err, ErrListNotFound) matches an *Error or a *ValidationError with
// code 3, and e.Code == ErrListNotFound compares the code.
type ErrorCode int

// The error codes of the legacy API, each both the code and the sentinel error.
const (
	// ErrIncompatibleConnection (1): connection type is not compatible (the request's
	// input form could not be read). Raised by every command.
	ErrIncompatibleConnection ErrorCode = 1
	// ErrInvalidAPIKey (2): invalid API key or user account is not available. Raised by
	// every command.
	ErrInvalidAPIKey ErrorCode = 2
	// ErrListNotFound (3): subscriber list does not exist or is not available.
	ErrListNotFound ErrorCode = 3
	// ErrEmailMissing (4): email address is missing.
	ErrEmailMissing ErrorCode = 4
	// ErrEmailFormat (5): email address format is illegal.
	ErrEmailFormat ErrorCode = 5
	// ErrEmailExists (6): email address already exists in the subscriber list.
	ErrEmailExists ErrorCode = 6
	// ErrEmailInvalid (7): email address is invalid (e.g. refused by the suppression list).
	ErrEmailInvalid ErrorCode = 7
	// ErrEmailNotInList (8): email address does not exist in the subscriber list.
	ErrEmailNotInList ErrorCode = 8
	// ErrMediaTooLarge (9): media exceeds maximum allowed size.
	ErrMediaTooLarge ErrorCode = 9
)

// message is the service's meaning of a code, or "".
func (c ErrorCode) message() string {
	switch c {
	case ErrIncompatibleConnection:
		return "connection type is not compatible"
	case ErrInvalidAPIKey:
		return "invalid API key or user account is not available"
	case ErrListNotFound:
		return "subscriber list does not exist or is not available"
	case ErrEmailMissing:
		return "email address is missing"
	case ErrEmailFormat:
		return "email address format is illegal"
	case ErrEmailExists:
		return "email address already exists in the subscriber list"
	case ErrEmailInvalid:
		return "email address is invalid"
	case ErrEmailNotInList:
		return "email address does not exist in the subscriber list"
	case ErrMediaTooLarge:
		return "media exceeds maximum allowed size"
	}
	return ""
}

// Message returns the service's meaning of the code, or "" for a code it does not document.
func (c ErrorCode) Message() string { return c.message() }

// String returns the code and its meaning, e.g. "3 (subscriber list does not exist or is
// not available)".
func (c ErrorCode) String() string { return transport.CodeString(int(c), c.message()) }

// Error makes an ErrorCode usable as a sentinel error. It is String, so that a code reads
// the same whether fmt sees it as an error or a Stringer.
func (c ErrorCode) Error() string { return c.String() }

// Error is a failure answered by the legacy API: an XML-RPC struct with the members
// APIError (the message) and APIErrorCode.
type Error struct {
	// Code is the APIErrorCode member.
	Code ErrorCode
	// Message is the APIError member, as it came (with the API key removed, should the
	// server echo it).
	Message string
	// Command is the legacy command that failed, e.g. "Subscriber.Add".
	Command string
	// HTTPStatus is the status of the response that carried the failure.
	HTTPStatus int
	// Attempts is how many times the request was sent.
	Attempts int
	// EarlierAttemptMayHaveRun reports that an attempt before the one answered failed in a
	// way that leaves unknown whether the service processed it (a reset, a timeout, a 502 or
	// 504): "already exists" (6) or "not in the list" (8) may then describe that attempt's
	// own effect. SubscriberAdd and SubscriberUnsubscribe settle it themselves.
	EarlierAttemptMayHaveRun bool

	earlierFailure error // the first failure that may have run, for ErrOutcomeUnknown
}

// Error returns the command, the code and the message, e.g. "sendloop/legacy: Subscriber.Add:
// error 6: Email address already exists in the subscriber list".
func (e *Error) Error() string {
	msg := cmp.Or(e.Message, e.Code.Message())
	b := transport.Describe(pkgName, e.Command)
	transport.WriteCode(b, int(e.Code), msg)
	if e.Attempts > 1 {
		fmt.Fprintf(b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's code.
func (e *Error) Is(target error) bool {
	code, ok := target.(ErrorCode)
	return ok && code == e.Code
}

// Fault is an XML-RPC fault answer (<fault> with faultCode and faultString). The legacy
// API reports its own failures as an Error; a fault comes from the XML-RPC layer, e.g. an
// unknown command or parameters it cannot use. Fault codes are not ErrorCodes and match
// no sentinel.
type Fault struct {
	// Code is the faultCode member.
	Code int
	// Message is the faultString member (with the API key removed).
	Message string
	// Command is the legacy command that failed; empty when the fault came from Decode.
	Command string
	// HTTPStatus is the status of the response that carried the fault; 0 from Decode.
	HTTPStatus int
}

// Error returns the command, the fault code and the fault string.
func (f *Fault) Error() string {
	b := transport.Describe(pkgName, f.Command)
	b.WriteString("XML-RPC fault " + strconv.Itoa(f.Code))
	if f.Message != "" {
		b.WriteString(": " + f.Message)
	}
	return b.String()
}

// ValidationError is returned before anything is sent when parameters break a rule of the
// legacy API. When the service has a code for the fault (a missing email address is 4, a
// list ID that cannot exist is 3, media over the maximum size is 9) Code holds it and the
// error matches that sentinel; otherwise Code is 0.
type ValidationError struct {
	// Code is the ErrorCode the service would have answered with, or 0.
	Code ErrorCode
	// Command is the legacy command that was not sent.
	Command string
	// Field names the parameter at fault.
	Field string
	// Reason says what is wrong, for people.
	Reason string
}

// Error returns the command, the reason, the field and the code the service would have
// answered with.
func (e *ValidationError) Error() string {
	b := transport.Describe(pkgName, e.Command)
	b.WriteString("invalid parameters: " + e.Reason)
	if e.Field != "" {
		b.WriteString(" (field " + e.Field + ")")
	}
	if e.Code != 0 {
		b.WriteString(" [error " + strconv.Itoa(int(e.Code)) + "]")
	}
	return b.String()
}

// Is reports whether target is the sentinel for e's code.
func (e *ValidationError) Is(target error) bool {
	code, ok := target.(ErrorCode)
	return ok && e.Code != 0 && code == e.Code
}

func invalid(command string, code ErrorCode, field, reason string) *ValidationError {
	return &ValidationError{Code: code, Command: command, Field: field, Reason: reason}
}

// HTTPError is a response that is no legacy answer: a body that is not XML-RPC (an HTML
// error page, a truncated body), a non-2xx status without a failure struct, or a redirect
// that was not followed. It is the same type as sendloop.HTTPError.
//
// HTTPError is declared once, in an internal package, for both clients; go doc does not
// list the fields of such an alias, so here they are:
//
//	type HTTPError struct {
//		// Command is the command that failed.
//		Command string
//		// HTTPStatus is the HTTP status of the final response.
//		HTTPStatus int
//		// Attempts is how many times the request was sent.
//		Attempts int
//		// RetryAfter is the wait the server asked for (Retry-After), if any. When it
//		// exceeds RetryPolicy.MaxRetryAfter the request is not retried and this error
//		// carries the wait.
//		RetryAfter time.Duration
//		// Excerpt is at most the first 200 bytes of the body, with the API key
//		// removed and made printable.
//		Excerpt string
//		// Reason says what was wrong with the response.
//		Reason string
//	}
type HTTPError = transport.HTTPError

package sendloop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/check"
	"github.com/go-sendloop/sendloop/internal/outcome"
	"github.com/go-sendloop/sendloop/internal/transport"
)

// ErrorCode is a numeric error code of the v3 API (ErrorCode in a failure response).
//
// An ErrorCode is itself an error, so each named code (ErrListNotFound, …) is also the
// sentinel: errors.Is(err, ErrListNotFound) matches an *APIError or a *ValidationError with
// code 118, and apiErr.Code == ErrListNotFound compares the code.
type ErrorCode int

// Message returns the service's meaning of the code: "undocumented error" for the codes
// seen in the wild but not documented, "" for any other.
func (c ErrorCode) Message() string { return codeMessages[c] }

// String returns the code and its meaning, e.g. "118 (invalid list ID; list not found)".
func (c ErrorCode) String() string { return transport.CodeString(int(c), codeMessages[c]) }

// Error makes an ErrorCode usable as a sentinel error. It is String, so that printing a
// code reads the same whether fmt sees it as an error or a Stringer.
func (c ErrorCode) Error() string { return c.String() }

// ErrOutcomeUnknown is matched (errors.Is) by the error of a write that may or may not have
// taken effect: an attempt may have reached the service (a reset after the request was
// written, a timeout, a 502 or 504 answer) and no answer or read-back proves what it did.
// Such an error is an *OutcomeUnknownError. It is the same sentinel as
// legacy.ErrOutcomeUnknown and smtp.ErrOutcomeUnknown.
var ErrOutcomeUnknown = outcome.ErrUnknown

// OutcomeUnknownError is the error of a write that may or may not have taken effect. It
// matches ErrOutcomeUnknown and wraps the failure that made the outcome unknown, so that
// errors.Is(err, context.DeadlineExceeded) and errors.As(err, &transportErr) reach it. The
// answer that caused the doubt is not wrapped: after an attempt that may have run, an
// "already exists" (ErrEmailExists) or "not found" that the read-back could not settle may
// be this call's own doing, so errors.Is(err, ErrEmailExists) is false. That answer and the
// read-back's failure are in the message and in the fields. It is the same type as
// legacy.OutcomeUnknownError.
//
// OutcomeUnknownError is declared once, in an internal package, for every package of the
// module; go doc does not list the fields of such an alias, so here they are:
//
//	type OutcomeUnknownError struct {
//		// Prefix starts the message, e.g. "sendloop: subscriber.subscribe".
//		Prefix string
//		// First is the failure that made the outcome unknown: a *TransportError for a
//		// reset or a timeout, an *HTTPError for a gateway's 502 or 504. Wrapped.
//		First error
//		// Last is the call's last answer or failure when it is not First, e.g. the
//		// *APIError "already exists" answered to the retry, or the *HTTPError of a proxy
//		// page. Not wrapped; nil when there is none.
//		Last error
//		// ReadBack is why the read-back did not prove the write's end state: its failure,
//		// or what it showed instead. Not wrapped; nil when none was made.
//		ReadBack error
//	}
type OutcomeUnknownError = outcome.Error

// TransportError is a failure that left no answer to read: a dial error, a reset, a timeout,
// a body cut short, a cancellation. It names the command and how many attempts were made,
// and keeps the cause for errors.Is and errors.As (context.DeadlineExceeded, a *url.Error,
// …). It is the same type as legacy.TransportError.
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

// APIError is a failure reported by the service in its response envelope
// (Success = false with ErrorCode, ErrorMessage and ErrorFields).
type APIError struct {
	// Code is the service's ErrorCode.
	Code ErrorCode
	// Message is the service's ErrorMessage, as it came.
	Message string
	// Fields names the parameters at fault (ErrorFields), e.g. for code 105.
	Fields []string
	// Command is the API command that failed, e.g. "list.get".
	Command string
	// HTTPStatus is the status of the response that carried the error; the service uses 200
	// for most failures and 500 for some validation errors.
	HTTPStatus int
	// Attempts is how many times the request was sent.
	Attempts int
	// EarlierAttemptMayHaveRun reports that an attempt before the one answered failed in a
	// way that leaves unknown whether the service processed it (a reset, a timeout, a 502 or
	// 504): an "already exists" or "not found" answer may then describe that attempt's own
	// effect rather than a conflict. The typed methods apply this rule themselves; callers of
	// Call can apply it too.
	EarlierAttemptMayHaveRun bool

	earlierFailure error // the first failure that may have run, for ErrOutcomeUnknown
}

// Is reports whether target is the sentinel for e's code, or for a code of the same
// meaning (111, 124 and 128 all mean a malformed address; 114 and 126 an invalid one).
func (e *APIError) Is(target error) bool {
	code, ok := target.(ErrorCode)
	return ok && code.sameAs(e.Code)
}

// Error describes the failure: command, code, message and the fields at fault.
func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Code.Message()
	}
	b := transport.Describe("sendloop", e.Command)
	transport.WriteCode(b, int(e.Code), msg)
	if len(e.Fields) > 0 {
		b.WriteString(" (fields: " + strings.Join(e.Fields, ", ") + ")")
	}
	return b.String()
}

// ValidationError is returned before anything is sent when parameters break a rule of the
// service. It matches the sentinel the service would have answered with, e.g.
// ErrMissingParameters (105) with the missing parameter names in Fields.
type ValidationError struct {
	// Code is the ErrorCode the service would have returned.
	Code ErrorCode
	// Command is the API command that was not sent.
	Command string
	// Fields names the parameters at fault.
	Fields []string
	// Reason says what is wrong, for people.
	Reason string
}

// Error describes what is wrong, with the code the service would have answered.
func (e *ValidationError) Error() string {
	b := transport.Describe("sendloop", e.Command)
	b.WriteString("invalid parameters: " + e.Reason)
	if len(e.Fields) > 0 {
		b.WriteString(" (fields: " + strings.Join(e.Fields, ", ") + ")")
	}
	b.WriteString(" [error " + strconv.Itoa(int(e.Code)) + "]")
	return b.String()
}

// Is reports whether target is the sentinel for e's code, or for a code of the same meaning.
func (e *ValidationError) Is(target error) bool {
	code, ok := target.(ErrorCode)
	return ok && code.sameAs(e.Code)
}

// synonyms maps codes that several modules of the service raise for the same fault to
// one of them.
var synonyms = map[ErrorCode]ErrorCode{
	ErrInvalidEmailFormat2: ErrInvalidEmailFormat,
	ErrInvalidEmailFormat3: ErrInvalidEmailFormat,
	ErrInvalidEmail2:       ErrInvalidEmail,
}

func (c ErrorCode) sameAs(other ErrorCode) bool {
	canonical := func(c ErrorCode) ErrorCode {
		if s, ok := synonyms[c]; ok {
			return s
		}
		return c
	}
	return canonical(c) == canonical(other)
}

// invalid builds a ValidationError with the given code for one parameter.
func invalid(command string, code ErrorCode, field, reason string) *ValidationError {
	return &ValidationError{Code: code, Command: command, Fields: []string{field}, Reason: reason}
}

// HTTPError is a response that is not a service envelope: a non-2xx status without an error
// envelope, a body that is not the JSON the command answers with (an HTML error page, a
// truncated body), or a redirect that was not followed. Excerpt is a short beginning of the
// body with the API key removed. It is the same type as legacy.HTTPError.
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

// alreadyDone reports whether err is an answer with one of codes to a call of which an
// earlier attempt may have run: "already exists" or "not found" may then be that attempt's
// own effect rather than a conflict.
func alreadyDone(err error, codes ...ErrorCode) (*APIError, bool) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !apiErr.EarlierAttemptMayHaveRun {
		return nil, false
	}
	for _, code := range codes {
		if apiErr.Code == code {
			return apiErr, true
		}
	}
	return nil, false
}

// settleRetry decides an "already done" answer (see alreadyDone) with a read-back: prove
// returns nil when the service shows the write's intended end state, and the call
// succeeded. Otherwise the outcome is unknown: an *OutcomeUnknownError that wraps the first
// failure only, with the answer and the read-back's failure in its fields.
func settleRetry(command string, answer *APIError, prove func() error) error {
	return outcome.Settle("sendloop: "+command, answer.earlierFailure, answer, prove)
}

// checkID refuses a required ID parameter outside 1..2147483647, the int32 range the
// specification types IDs with: 0 is a missing parameter (105), a negative or oversized ID
// an invalid value (116).
func checkID(command, field string, id int) error {
	return idError(command, field, id, false, ErrInvalidParameterValue)
}

// checkOptionalID is checkID for an ID where 0 means "not sent" (or, for the suppression
// list, "global").
func checkOptionalID(command, field string, id int) error {
	return idError(command, field, id, true, ErrInvalidParameterValue)
}

// idError is the one ID rule (internal/check, shared with the legacy package); outOfRange
// is the code a negative or oversized ID gets where the service names the fault better
// than 116 (a segment, 121; a custom field, 135).
func idError(command, field string, id int, optional bool, outOfRange ErrorCode) error {
	switch check.ID(id) {
	case check.IDMissing:
		if optional {
			return nil
		}
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{field}, Reason: field + " is required"}
	case check.IDOutOfRange:
		return invalid(command, outOfRange, field, fmt.Sprintf("%s %d is not an ID: IDs run from 1 to 2147483647", field, id))
	}
	return nil
}

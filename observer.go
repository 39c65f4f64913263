package sendloop

import (
	"errors"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// Observer is told of every command call a Client sends, and of those of its Legacy client:
// when the call starts, after each attempt, and when its answer has been read. It is the
// hook for tracing, metrics or logs (package github.com/go-sendloop/sendloop/otel
// implements it for OpenTelemetry); WithObserver sets it. Its methods are called from the
// goroutine that makes the call, and must be safe for concurrent use: a Client is.
//
// Nothing an Observer is given holds a secret or personal data: no key, no URL (the host
// only), no body, no error text (a service's message may quote an address); only the
// command's name, its retry class, numbers, times and kinds of failure. Without an Observer
// the request path does no extra work and makes no extra allocation.
//
// Observer is declared once, in an internal package, for both clients; go doc does not list
// the methods of such an alias, so here they are:
//
//	type Observer interface {
//		// CallStarted is called before the first attempt. The context it returns is the
//		// one the attempts are sent with and the one the other two methods get: a tracer
//		// puts its span there, so that a tracing RoundTripper under WithHTTPClient nests
//		// under it. It must not return nil.
//		CallStarted(ctx context.Context, call CallStart) context.Context
//		// AttemptEnded is called after each attempt, answered or failed, before any wait
//		// for the next.
//		AttemptEnded(ctx context.Context, attempt AttemptEnd)
//		// CallEnded is called once, when the answer has been read or no answer came.
//		CallEnded(ctx context.Context, call CallEnd)
//	}
type Observer = transport.Observer

// CallStart describes a call about to be sent (Observer.CallStarted):
//
//	type CallStart struct {
//		Package     string    // "sendloop" or "sendloop/legacy"
//		Command     string    // e.g. "subscriber.subscribe"
//		Class       RetryClass
//		Method      string    // the HTTP method
//		Host        string    // the service's host[:port], never a path or a query
//		RequestSize int       // the request body's size in bytes
//		Start       time.Time
//	}
type CallStart = transport.CallStart

// AttemptEnd describes one attempt of a call (Observer.AttemptEnded):
//
//	type AttemptEnd struct {
//		Package    string // as in CallStart
//		Command    string
//		Attempt    int    // from 1
//		StatusCode int    // the answer's HTTP status, 0 if none came
//		Failure    string // "" when an answer came, else FailureTransport, FailureCanceled, FailureDeadline
//		Retry      bool   // the call will be sent again
//		RequestSize, ResponseSize int
//		Window     int    // the congestion window's bound: attempts allowed in flight at once
//		Start, End time.Time
//	}
type AttemptEnd = transport.AttemptEnd

// CallEnd describes a finished call (Observer.CallEnded):
//
//	type CallEnd struct {
//		Command    string
//		Class      RetryClass
//		Method     string // as in CallStart
//		Host       string // as in CallStart
//		Attempts   int    // how many times the request was sent
//		StatusCode int    // the final answer's HTTP status, 0 if none came
//		ErrorCode  int    // the service's error code of a failure answer, 0 if none
//		Failure    string // "" for a success, else one of the Failure constants
//		// OutcomeUnknown reports a write that may or may not have taken effect (its
//		// error matches ErrOutcomeUnknown). A read-back the SDK then makes to settle it
//		// is a call of its own.
//		OutcomeUnknown bool
//		RequestSize, ResponseSize int // the final attempt's bodies' sizes in bytes
//		Start, End time.Time
//	}
type CallEnd = transport.CallEnd

// The kinds of failure in CallEnd.Failure and AttemptEnd.Failure: few, fixed names, fit for
// a metric's attribute or a span's error.type.
const (
	FailureService        = transport.FailureService        // the service answered with an error code
	FailureHTTP           = transport.FailureHTTP           // an answer that is not the service's (a proxy page)
	FailureTransport      = transport.FailureTransport      // no answer: a dial error, a reset, a timeout
	FailureCanceled       = transport.FailureCanceled       // the caller's context was canceled
	FailureDeadline       = transport.FailureDeadline       // the caller's deadline passed
	FailureOutcomeUnknown = transport.FailureOutcomeUnknown // a write that may or may not have run
	FailureOther          = transport.FailureOther          // any other failure
)

// WithObserver sets the Observer told of every call of the Client and of its Legacy
// client. nil, the default, observes nothing.
func WithObserver(o Observer) Option {
	return Option(settingOf(transport.ObserverSetting(o, errorCodeOf)))
}

// errorCodeOf returns the service's error code an error read from an answer carries.
func errorCodeOf(err error) int {
	if apiErr, ok := errors.AsType[*APIError](err); ok {
		return int(apiErr.Code)
	}
	return 0
}

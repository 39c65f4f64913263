package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// Observer is told of every command call a Client sends: when it starts, after each attempt
// and when its answer has been read. The root and legacy packages export it as Observer.
// Nothing it is given holds a secret: no key, no URL (only the host), no body, no error
// text (which may quote an address), only names, numbers and kinds.
type Observer interface {
	// CallStarted is called before the first attempt of a call. The context it returns is
	// the one the attempts are sent with and the one the other two methods get (a tracer
	// puts its span there, so that a tracing RoundTripper underneath nests under it); it
	// must not be nil.
	CallStarted(ctx context.Context, call CallStart) context.Context
	// AttemptEnded is called after each attempt, answered or failed, before any wait for
	// the next.
	AttemptEnded(ctx context.Context, attempt AttemptEnd)
	// CallEnded is called once, when the call's answer has been read (or no answer came).
	CallEnded(ctx context.Context, call CallEnd)
}

// CallStart describes a call about to be sent.
type CallStart struct {
	// Package is the client that sends it: "sendloop" or "sendloop/legacy".
	Package string
	// Command is the command's name, e.g. "subscriber.subscribe".
	Command string
	// Class is the command's retry class.
	Class Class
	// Method is the HTTP method, e.g. "POST".
	Method string
	// Host is the service's host name (and port, when not the scheme's), never a path or
	// a query.
	Host string
	// RequestSize is the request body's size in bytes.
	RequestSize int
	// Start is when the call started.
	Start time.Time
}

// AttemptEnd describes one attempt of a call.
type AttemptEnd struct {
	// Package is the client that sent it, as in CallStart.
	Package string
	// Command is the command's name.
	Command string
	// Attempt numbers the attempt, from 1.
	Attempt int
	// StatusCode is the HTTP status of the attempt's answer, 0 if none came.
	StatusCode int
	// Failure is the kind of failure of an attempt that got no answer ("" if it got one):
	// FailureTransport, FailureCanceled, FailureDeadline.
	Failure string
	// Retry reports that the call will be sent again.
	Retry bool
	// RequestSize and ResponseSize are the bodies' sizes in bytes (0 when none came).
	RequestSize, ResponseSize int
	// Window is the congestion window's bound as the attempt ended: how many attempts the
	// client lets be in flight at once, halved by each 429 or 503 and grown back by
	// answers (MaxInFlight when the service never pushed back).
	Window int
	// Start and End bound the attempt.
	Start, End time.Time
}

// CallEnd describes a finished call.
type CallEnd struct {
	// Command is the command's name.
	Command string
	// Class is the command's retry class.
	Class Class
	// Method and Host are CallStart's: a span made whole at the call's end needs them.
	Method, Host string
	// Attempts is how many times the request was sent.
	Attempts int
	// StatusCode is the HTTP status of the final answer, 0 if none came.
	StatusCode int
	// ErrorCode is the service's error code of a failure answer, 0 if none.
	ErrorCode int
	// Failure is "" for a call that succeeded, otherwise the kind of its failure:
	// FailureService, FailureHTTP, FailureTransport, FailureCanceled, FailureDeadline,
	// FailureOutcomeUnknown or FailureOther.
	Failure string
	// OutcomeUnknown reports a write that may or may not have taken effect (the error
	// matches ErrOutcomeUnknown). A read-back the SDK then makes is a call of its own.
	OutcomeUnknown bool
	// RequestSize and ResponseSize are the final attempt's bodies' sizes in bytes.
	RequestSize, ResponseSize int
	// Start and End bound the call, retries and waits included.
	Start, End time.Time
}

// The kinds of failure of CallEnd.Failure and AttemptEnd.Failure: few, fixed names, fit for
// a metric's attribute.
const (
	FailureService        = "service_error"   // the service answered with an error code
	FailureHTTP           = "http_error"      // an answer that is not the service's (a proxy, a 5xx page)
	FailureTransport      = "transport_error" // no answer: a dial error, a reset, a timeout
	FailureCanceled       = "canceled"        // the caller's context was canceled
	FailureDeadline       = "deadline_exceeded"
	FailureOutcomeUnknown = "outcome_unknown" // a write that may or may not have run
	FailureOther          = "other"
)

// observation is the state of one observed call, kept in its call.
type observation struct {
	obs    Observer
	ctx    context.Context
	codeOf func(error) int
	start  CallStart
	st     *call
	ended  bool
	window *window // the client's, whose bound each attempt reports
	// status and size of the final attempt
	status, respSize int
}

// startObservation tells the observer of a call; it returns the context to send with.
func (c *Client) startObservation(ctx context.Context, r *Request, st *call, o *observation) context.Context {
	start := CallStart{Package: c.pkg, Command: r.Command, Class: st.class, Method: r.Method,
		Host: hostOf(r.URL), RequestSize: len(r.Body), Start: time.Now()}
	if out := c.observer.CallStarted(ctx, start); out != nil {
		ctx = out
	}
	*o = observation{obs: c.observer, ctx: ctx, codeOf: c.codeOf, start: start, st: st, window: c.window}
	st.obs = o
	return ctx
}

// observedCall is a call with its observation, allocated together.
type observedCall struct {
	call call
	obs  observation
}

// attemptEnded tells the observer of an attempt.
func (o *observation) attemptEnded(resp *http.Response, err error, retry bool) {
	a := AttemptEnd{Package: o.start.Package, Command: o.start.Command, Attempt: o.st.attempts, Retry: retry,
		RequestSize: o.start.RequestSize, Start: o.st.attemptStart, End: time.Now()}
	if err == nil && resp != nil {
		a.StatusCode = resp.StatusCode
		a.ResponseSize = int(max(resp.ContentLength, 0))
	} else {
		a.Failure = failureOf(err)
		var be *bodyError
		if errors.As(err, &be) {
			a.StatusCode = be.status
		}
	}
	if o.window != nil {
		_, a.Window = o.window.state()
	}
	o.status, o.respSize = a.StatusCode, a.ResponseSize
	o.obs.AttemptEnded(o.ctx, a)
}

// end tells the observer of the call's end, once.
func (o *observation) end(err error) {
	if o == nil || o.ended {
		return
	}
	o.ended = true
	e := CallEnd{Command: o.start.Command, Class: o.start.Class, Method: o.start.Method,
		Host: o.start.Host, Attempts: o.st.attempts, StatusCode: o.status,
		RequestSize: o.start.RequestSize, ResponseSize: o.respSize, Start: o.start.Start, End: time.Now()}
	if err != nil {
		if o.codeOf != nil {
			e.ErrorCode = o.codeOf(err)
		}
		e.OutcomeUnknown = errors.Is(err, outcome.ErrUnknown)
		var httpErr *HTTPError
		switch {
		case e.OutcomeUnknown:
			e.Failure = FailureOutcomeUnknown
		case e.ErrorCode != 0:
			e.Failure = FailureService
		case errors.As(err, &httpErr):
			e.Failure = FailureHTTP
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, new(*Error)):
			e.Failure = failureOf(err)
		default:
			e.Failure = FailureOther // an answer that could not be read, a fault of the legacy API
		}
	}
	o.obs.CallEnded(o.ctx, e)
}

// failureOf names the kind of a failure that left no answer.
func failureOf(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return FailureCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return FailureDeadline
	case err != nil:
		return FailureTransport
	}
	return FailureOther
}

// hostOf returns the host (and port) of a request URL, "" without a scheme: what url.Parse
// gives as Host, without its allocations (it runs once per observed call), and never the
// user information before an "@". A loop, not strings.IndexAny, which builds its set of
// bytes on every call: a tenth of a microsecond a call in a profile of Account.Get.
func hostOf(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	for i := range len(rest) {
		if c := rest[i]; c == '/' || c == '?' || c == '#' {
			rest = rest[:i]
			break
		}
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// Ended ends the observation of the call that answered resp with err, the error read from
// its answer (nil for a success), and returns err. A caller whose reading of an answer does
// not end in Outcome calls it; a second call does nothing.
func (c *Client) Ended(resp *Response, err error) error {
	if resp != nil {
		resp.observation.end(err)
	}
	return err
}

// ObserverSetting sets the observer of the calls, and codeOf, which returns the service's error
// code of an error read from an answer (0 for none).
func ObserverSetting(o Observer, codeOf func(error) int) Setting {
	return func(s *Settings) { s.Observer, s.CodeOf = o, codeOf }
}

// ended ends the call's observation, if any, with err, and returns err.
func (st *call) ended(err error) error {
	st.obs.end(err)
	return err
}

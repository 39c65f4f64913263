// Call options and the HTTP error, shared by the root and legacy packages.

package transport

import (
	"fmt"
	"strings"
	"time"
)

// CallOption changes how one command is sent by the root and legacy packages' Call.
type CallOption func(*CallOptions)

// CallOptions is what the CallOption values of one call set.
type CallOptions struct {
	Class    Class
	HasClass bool
}

// WithRetryClass sets the retry class of one call.
func WithRetryClass(class Class) CallOption {
	return func(o *CallOptions) { o.Class, o.HasClass = class, true }
}

// ClassFor returns the retry class opts set, or def when they set none; a class that is
// none of Read, Idempotent and OneShot is an error.
func ClassFor(def Class, opts []CallOption) (Class, error) {
	var o CallOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if !o.HasClass {
		return def, nil
	}
	if o.Class != Read && o.Class != Idempotent && o.Class != OneShot {
		return def, fmt.Errorf("unknown retry class %d", int(o.Class))
	}
	return o.Class, nil
}

// HTTPError is a response that is not an answer of the service's: a non-2xx status without
// an error envelope or failure struct, a body that is not what the command answers with (an
// HTML error page, a truncated body), or a redirect that was not followed. Excerpt is a short
// beginning of the body with the API key removed. The root and legacy packages export it.
type HTTPError struct {
	// Command is the command that failed.
	Command string
	// HTTPStatus is the HTTP status of the final response.
	HTTPStatus int
	// Attempts is how many times the request was sent.
	Attempts int
	// RetryAfter is the wait the server asked for (Retry-After), if any. When it exceeds
	// RetryPolicy.MaxRetryAfter the request is not retried and this error carries the wait.
	RetryAfter time.Duration
	// Excerpt is at most the first 200 bytes of the body, redacted and made printable.
	Excerpt string
	// Reason says what was wrong with the response.
	Reason string

	pkg string // starts the text: the package of the client that sent the command
}

// Error describes the response: command, status, reason, wait and excerpt.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: HTTP %d", packageOr(e.pkg), e.Command, e.HTTPStatus)
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (server asks to retry after %s)", e.RetryAfter)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Excerpt != "" {
		fmt.Fprintf(&b, ": %q", e.Excerpt)
	}
	return b.String()
}

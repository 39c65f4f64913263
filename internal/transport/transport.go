// Package transport sends the sendloop packages' HTTP requests through a go-retryablehttp
// client configured for the service: retries by command class, never a retry of a plain 500,
// a capped Retry-After, jittered exponential backoff, the final body kept for the typed
// error, and logging of command, attempt, status and duration only.
package transport

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// Class tells which failures a command may be retried after. The zero Class is none of
// them: the command registry's test refuses an entry without one, and Do sends a request
// without one as OneShot.
type Class int

const (
	// Read commands change nothing: retried after any transient failure.
	Read Class = iota + 1
	// Idempotent writes give the same result when repeated: retried like reads.
	Idempotent
	// OneShot writes create something each time: retried only when the request surely was
	// not processed (a dial error, 429, 503).
	OneShot
)

func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Idempotent:
		return "idempotent"
	case OneShot:
		return "one-shot"
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// Policy holds the retry settings, exported by the root and legacy packages as RetryPolicy.
// Zero fields take the defaults.
type Policy struct {
	// MaxRetries is how many times a request may be sent again after its first attempt:
	// 0 for the default (3), negative for none.
	MaxRetries int
	// MinWait and MaxWait bound the jittered exponential backoff between attempts
	// (defaults 250ms and 10s).
	MinWait time.Duration
	// MaxWait is the longest wait between attempts.
	MaxWait time.Duration
	// MaxRetryAfter caps the wait a Retry-After header may impose (default one minute); a
	// longer wait fails the call at once with an *HTTPError carrying the requested wait.
	MaxRetryAfter time.Duration
}

// Defaults of Policy.
const (
	DefaultMaxRetries    = 3
	DefaultMinWait       = 250 * time.Millisecond
	DefaultMaxWait       = 10 * time.Second
	DefaultMaxRetryAfter = time.Minute
)

// WithDefaults returns p with its zero fields set to the defaults.
func (p Policy) WithDefaults() Policy {
	switch {
	case p.MaxRetries == 0:
		p.MaxRetries = DefaultMaxRetries
	case p.MaxRetries < 0:
		p.MaxRetries = 0
	}
	if p.MinWait <= 0 {
		p.MinWait = DefaultMinWait
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.MaxWait < p.MinWait {
		p.MaxWait = p.MinWait
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return p
}

// MaxBodySize bounds what is read of a response.
const MaxBodySize = 64 << 20

// bodyPrealloc is the largest body allocated at once from its Content-Length; a larger one
// grows as its bytes arrive.
const bodyPrealloc = 1 << 20

// Limiter paces requests: Wait blocks until one may be sent, or fails when the context ends
// first. *rate.Limiter of golang.org/x/time/rate fits.
type Limiter interface {
	Wait(ctx context.Context) error
}

// Config configures a Client.
type Config struct {
	// Limiter, when set, is waited on before every attempt, retries included.
	Limiter    Limiter
	HTTPClient *http.Client // used as given; nil for a default client
	Logger     *slog.Logger // nil for silence
	Policy     Policy
	UserAgent  string
	// Secrets are removed from every error text and log line (the API key, passwords).
	Secrets []string
	// Package starts the text of the errors the Client makes: "sendloop" (the default),
	// "sendloop/legacy".
	Package string
	// Observer, when set, is told of every call (see Observer); CodeOf reads the service's
	// error code of an error read from an answer.
	Observer Observer
	CodeOf   func(error) int

	// maxBody bounds what is read of a response: MaxBodySize when 0. The tests set a
	// smaller bound, to go past it without reading 64 MiB.
	maxBody int64
}

// maxIdleConnsPerHost is how many idle connections the default transport keeps to a host.
const maxIdleConnsPerHost = 16

// Client sends requests. It is safe for concurrent use.
type Client struct {
	rc        *retryablehttp.Client
	logger    *slog.Logger
	policy    Policy
	userAgent string
	redactor  Redactor
	pkg       string // starts error texts: "sendloop", "sendloop/legacy"
	maxBody   int64  // bounds what is read of a response
	observer  Observer
	codeOf    func(error) int
	window    *window // the calls in flight: an observer is told its bound
}

// New returns a Client for cfg. It works on a copy of cfg.HTTPClient, whose Transport it
// keeps underneath its own (so tracing wrappers see every attempt) and whose CheckRedirect
// it replaces with the package's redirect rule; the caller's client is left untouched.
// Given the HTTPClient of another Client, the new Client shares that one's connections and
// window of calls in flight (the legacy client of a root client is built so).
func New(cfg Config) *Client {
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	} else {
		hc.Timeout = 60 * time.Second
	}
	base := hc.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// net/http keeps 2 idle connections per host by default: a client with more calls
		// in flight (paged reads ahead, import workers) would close the others after each
		// answer and dial again.
		t.MaxIdleConnsPerHost = maxIdleConnsPerHost
		base = t
	}
	window := newWindow()
	if shared, ok := base.(*attemptTransport); ok {
		// The HTTP client of another Client (its HTTPClient): one pool of connections and
		// one window of calls in flight for both, so that a push-back either meets slows
		// both. The limiter is cfg's, waited on once per attempt, as the other's is.
		base, window = shared.base, shared.window
	}
	maxBody := cmp.Or(cfg.maxBody, MaxBodySize)
	hc.Transport = &attemptTransport{base: base, limiter: cfg.Limiter, window: window, maxBody: maxBody}
	hc.CheckRedirect = checkRedirect
	c := &Client{
		logger:    cfg.Logger,
		policy:    cfg.Policy.WithDefaults(),
		userAgent: cfg.UserAgent,
		pkg:       cmp.Or(cfg.Package, "sendloop"),
		maxBody:   maxBody,
		observer:  cfg.Observer,
		codeOf:    cfg.CodeOf,
		window:    window,
	}
	c.redactor = NewRedactor(cfg.Secrets...)
	c.rc = &retryablehttp.Client{
		HTTPClient:     &hc,
		Logger:         nil, // its own log lines carry URLs; ours go through slog
		RetryWaitMin:   c.policy.MinWait,
		RetryWaitMax:   c.policy.MaxWait,
		RetryMax:       c.policy.MaxRetries,
		CheckRetry:     c.checkRetry,
		Backoff:        c.backoff,
		ErrorHandler:   keepLastResponse,
		RequestLogHook: onAttempt,
	}
	return c
}

// Request is one command to send.
type Request struct {
	Command     string // for logs and errors
	Class       Class
	Method      string
	URL         string
	Body        []byte
	ContentType string
	Header      http.Header // extra headers, e.g. Authorization
}

// Response is the final response of a request, whatever its status.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Attempts   int
	// RetryAfter is the server's Retry-After wait on the final response, 0 if none.
	RetryAfter time.Duration
	// EarlierAttemptMayHaveRun reports that an attempt before the final one failed in a way
	// that leaves unknown whether the service processed it (a reset, a timeout, 502, 504):
	// a retried idempotent write may then be refused for having already happened.
	EarlierAttemptMayHaveRun bool
	// Class is the request's retry class.
	Class Class
	// RedirectOrigin is set on a redirect answer (3xx other than 304) that was not followed:
	// the origin (scheme://host:port) of its Location, never its path or query.
	RedirectOrigin string
	// EarlierFailure is the first failure after which the service may have processed the
	// request (redacted), or nil; it is what an outcome-unknown error wraps.
	EarlierFailure error

	observation *observation // nil unless the client has an observer; ended by Outcome or Ended
}

// Error is a failure that left no response to interpret: a dial error, a reset, a timeout,
// a cancellation. The cause is kept for errors.Is and errors.As. The root and legacy
// packages export it as TransportError.
type Error struct {
	// Command is the command that failed, e.g. "list.get".
	Command string
	// Attempts is how many times the request was sent.
	Attempts int
	// Err is the cause, with any secret removed from its text.
	Err error

	pkg string // starts the text: the package of the client that sent the command
}

// Error returns "<package>: <command>: <cause>", with the attempts made when more than one.
func (e *Error) Error() string {
	attempts := ""
	if e.Attempts > 1 {
		attempts = fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return fmt.Sprintf("%s: %s: %v%s", packageOr(e.pkg), e.Command, e.Err, attempts)
}

// packageOr returns pkg, or "sendloop" for an error made outside a Client.
func packageOr(pkg string) string { return cmp.Or(pkg, "sendloop") }

// failed returns the transport error of a command of c's.
func (c *Client) failed(command string, attempts int, err error) *Error {
	return &Error{Command: command, Attempts: attempts, Err: c.redactError(err), pkg: c.pkg}
}

// Package returns the package name that starts the client's error texts.
func (c *Client) Package() string { return c.pkg }

func (e *Error) Unwrap() error { return e.Err }

// HTTPClient returns the HTTP client the Client sends with: its copy of Config.HTTPClient,
// whose Transport keeps the window of calls in flight and waits on the limiter. Given to
// New, it makes a Client that shares the window and the connections.
func (c *Client) HTTPClient() *http.Client { return c.rc.HTTPClient }

// Redact removes the configured secrets from s.
func (c *Client) Redact(s string) string { return c.redactor.Redact(s) }

// Redactor returns the client's Redactor.
func (c *Client) Redactor() Redactor { return c.redactor }

// call is the per-request state that the retryablehttp hooks reach through the context.
type call struct {
	client       *Client // the Client that sent it: a derived one has its own secrets
	command      string
	class        Class
	attempts     int
	attemptStart time.Time
	ambiguous    bool         // a failed attempt may have been processed
	waiting      bool         // the last attempt was answered or judged, and the next not sent
	firstFailure error        // the first such failure
	obs          *observation // nil unless the client has an observer
}

// failure returns the error of a call that ended with no answer: for a write whose request
// may have reached the service (now or in an earlier attempt), an outcome-unknown error
// wrapping the first such failure, with this one in its Last field; otherwise final itself.
func (st *call) failure(final *Error, cause error) error {
	if st.class == Read || st.attempts == 0 {
		return final
	}
	// A failure while waiting to retry (the context ending during the backoff or a
	// Retry-After) befell no request: only the attempts before it may have run.
	if !st.ambiguous && (st.waiting || !mayHaveRun(cause)) {
		return final
	}
	first := st.firstFailure
	if first == nil {
		first = final
	}
	return &outcome.Error{Prefix: st.client.pkg + ": " + st.command, First: first, Last: final}
}

// mayHaveRun tells whether a request that failed with err may have been processed: only a
// failure to connect or to verify the server, or a 429 or 503 whose body was cut, proves that
// nothing reached the service.
func mayHaveRun(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	return !isDialError(err) && !isLimiterError(err) && !refusedBeforeBody(err) &&
		!errors.As(err, &certErr) && !errors.As(err, &unknownAuthority) && !errors.As(err, &hostnameErr)
}

func isLimiterError(err error) bool {
	var le *limiterError
	return errors.As(err, &le)
}

// mayHaveRun records a failed attempt that the service may have processed.
func (st *call) mayHaveRun(failure error) {
	if !st.ambiguous {
		st.ambiguous, st.firstFailure = true, failure
	}
}

type callKey struct{}

func callOf(ctx context.Context) *call {
	if st, ok := ctx.Value(callKey{}).(*call); ok {
		return st
	}
	return &call{}
}

// Do sends r, retrying as its class allows, and returns the final response with its body
// read. A non-2xx status is not an error here: the caller interprets the body.
func (c *Client) Do(ctx context.Context, r *Request) (*Response, error) {
	class := r.Class
	if class != Read && class != Idempotent {
		class = OneShot
	}
	var st *call
	if c.observer != nil {
		// The call and its observation in one allocation: both live as long as the call.
		oc := &observedCall{call: call{client: c, command: r.Command, class: class}}
		st = &oc.call
		ctx = c.startObservation(ctx, r, st, &oc.obs)
	} else {
		st = &call{client: c, command: r.Command, class: class}
	}
	ctx = context.WithValue(ctx, callKey{}, st)
	var body any
	if r.Body != nil {
		body = r.Body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, st.ended(c.failed(r.Command, 0, err))
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	resp, err := c.rc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %v", ctxErr, err)
		}
		return nil, st.ended(st.failure(c.failed(r.Command, st.attempts, err), err))
	}
	defer resp.Body.Close()
	var data []byte
	if b, ok := resp.Body.(*bufferedBody); ok {
		data = b.data
	} else if data, err = readBody(resp, c.maxBody); err != nil { // a response attemptTransport did not see
		return nil, st.ended(st.failure(c.failed(r.Command, st.attempts, err), err))
	}
	out := &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: data, Attempts: st.attempts,
		EarlierAttemptMayHaveRun: st.ambiguous, EarlierFailure: st.firstFailure, Class: class,
		observation: st.obs}
	out.RetryAfter, _ = RetryAfter(resp.Header, time.Now())
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 && resp.StatusCode != http.StatusNotModified {
		out.RedirectOrigin = "(no Location)"
		if loc, err := resp.Location(); err == nil {
			out.RedirectOrigin = origin(loc)
		}
	}
	return out, nil
}

// RedirectReason says why a redirect answer ends the call, naming the target's origin only.
func RedirectReason(resp *Response) string {
	return fmt.Sprintf("redirect to %s not followed: requests carrying the key follow only GET redirects within the configured origin", resp.RedirectOrigin)
}

// attemptTransport reads each response's body within its attempt, so that a body that
// stalls, breaks or comes short is a failure of that attempt, retried by the command's class
// like a reset, rather than a failure after the retry loop has ended.
//
// Every attempt, retries included, takes a place in the client's window first (see window):
// import workers, paged reads ahead and single calls share it, so that a client told to
// slow down by 429 or 503 keeps fewer calls in flight, whichever of them sent it.
type attemptTransport struct {
	base    http.RoundTripper
	limiter Limiter // waited on before every attempt, retries included; may be nil
	window  *window // the attempts in flight
	maxBody int64   // bounds what is read of a response
}

func (t *attemptTransport) RoundTrip(req *http.Request) (_ *http.Response, err error) {
	epoch, err := t.window.acquire(req.Context())
	if err != nil {
		return nil, &limiterError{"waiting for a place among the calls in flight", err}
	}
	var resp *http.Response
	defer func() { t.window.release(epoch, signalOf(resp, err)) }()
	if t.limiter != nil {
		if err := t.limiter.Wait(req.Context()); err != nil {
			return nil, &limiterError{"waiting for the rate limiter", err}
		}
	}
	resp, err = t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	data, err := readBody(resp, t.maxBody)
	resp.Body.Close()
	if err != nil {
		return nil, &bodyError{status: resp.StatusCode, err: err}
	}
	resp.Body = &bufferedBody{Reader: bytes.NewReader(data), data: data}
	resp.ContentLength = int64(len(data))
	return resp, nil
}

// limiterError is a refusal of the rate limiter, or a context that ended while waiting for
// a place in the window: nothing was sent, and it is final.
type limiterError struct {
	waiting string // what the attempt was waiting for
	err     error
}

func (e *limiterError) Error() string { return e.waiting + ": " + e.err.Error() }
func (e *limiterError) Unwrap() error { return e.err }

// bodyError is a failure to read the body of an answer whose status came: the status
// still tells whether the request was processed (a 429 or 503 says it was not).
type bodyError struct {
	status int
	err    error
}

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// refusedBeforeBody reports a failure to read the body of a 429 or 503: an answer that
// says the request was not processed, whatever became of its body.
func refusedBeforeBody(err error) bool {
	var be *bodyError
	return errors.As(err, &be) && (be.status == http.StatusTooManyRequests || be.status == http.StatusServiceUnavailable)
}

// bufferedBody is a body already read whole.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (*bufferedBody) Close() error { return nil }

// bodyTooLargeError is an answer over the bound on a body. It is final: the same answer
// would come again.
type bodyTooLargeError struct{ limit int64 }

func (e bodyTooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes", e.limit)
}

// errBodyTooLarge is the error of a body over MaxBodySize.
var errBodyTooLarge error = bodyTooLargeError{MaxBodySize}

// checkRedirect follows a redirect only for a GET (or HEAD) and only within the origin of the
// first request: every request carries a credential, a POST would repeat a write, and an
// https → http hop would expose the key. Any other redirect answer is handed back as the
// final response, which the callers turn into an error naming the target's origin.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	if first.Method != http.MethodGet && first.Method != http.MethodHead ||
		origin(req.URL) != origin(first.URL) || len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	return nil
}

// origin returns scheme://host:port of u, with the scheme's default port made explicit so
// that https://h and https://h:443 compare equal.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// onAttempt counts attempts; RequestLogHook is the one hook that runs before each of them.
func onAttempt(_ retryablehttp.Logger, req *http.Request, _ int) {
	st := callOf(req.Context())
	st.attempts++
	st.attemptStart = time.Now()
	st.waiting = false
}

// keepLastResponse hands the final response back, body unread, so that the caller can turn
// it into a typed error instead of retryablehttp's "giving up" text.
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil && resp != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, err
}

func (c *Client) logAttempt(ctx context.Context, st *call, resp *http.Response, err error) {
	if c.logger == nil || !c.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{
		slog.String("command", st.command),
		slog.Int("attempt", st.attempts),
		slog.Duration("duration", time.Since(st.attemptStart)),
	}
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", c.Redact(err.Error())))
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "sendloop request", attrs...)
}

// redactError removes secrets from a *url.Error's URL (the legacy API's GET form carries the
// key in the query) and from the error text, keeping the cause for errors.Is.
func (c *Client) redactError(err error) error {
	if c.redactor.replacer == nil {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: c.Redact(ue.URL), Err: ue.Err}
	}
	if text := err.Error(); c.Redact(text) != text {
		return &redacted{text: c.Redact(text), cause: err}
	}
	return err
}

// redacted shows a cleaned text while keeping the cause for errors.Is.
type redacted struct {
	text  string
	cause error
}

func (r *redacted) Error() string { return r.text }

// Is reports whether target is in the cause's chain; Unwrap is deliberately absent so that
// the unredacted text cannot be reached.
func (r *redacted) Is(target error) bool { return errors.Is(r.cause, target) }

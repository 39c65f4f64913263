package legacy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// DefaultBaseURL is the service's generic host, as in the root package. Accounts also have
// their own host (https://<subdomain>.sendloop.com), which WithBaseURL selects.
const DefaultBaseURL = "https://app.sendloop.com"

// Endpoint is the path of the legacy API under the base URL.
const Endpoint = "/api/index.php"

// DefaultMaxMediaSize is the largest media MediaUpload sends unless WithMaxMediaSize says
// otherwise: 1 MiB. The service does not publish its limit.
const DefaultMaxMediaSize = 1 << 20

// userAgent is the SDK's own User-Agent token for the legacy API.
const userAgent = "sendloop-go/legacy"

// pkgName starts the text of every error of the package: "sendloop/legacy: <command>: …".
const pkgName = "sendloop/legacy"

// InputForm is how a request carries its parameters to the legacy endpoint.
type InputForm int

const (
	// PostForm sends a POST whose form fields carry the FormValue_ prefix
	// (FormValue_APIKey, FormValue_Command, FormValue_ListID, …). The default.
	PostForm InputForm = iota
	// GetForm sends a GET with the bare names in the query string (APIKey, Command, …).
	//
	// GetForm PUTS THE API KEY IN THE URL, where proxies, web server access logs, browser
	// histories and monitoring tools keep it. This package removes the key from its own
	// errors and log lines, but cannot reach those. Use it only where POST is impossible.
	GetForm
	// MessageForm sends a POST whose one form field, FormValue_Message, holds an XML
	// document Entry > Message with APIKey, Command and the parameters as child elements.
	MessageForm
	// MessageGetForm sends the FormValue_Message document in the query string of a GET.
	//
	// Like GetForm, it PUTS THE API KEY IN THE URL.
	MessageGetForm
)

// String returns the form's name: "post", "get", "message" or "message-get".
func (f InputForm) String() string {
	switch f {
	case PostForm:
		return "post"
	case GetForm:
		return "get"
	case MessageForm:
		return "message"
	case MessageGetForm:
		return "message-get"
	}
	return "form(" + strconv.Itoa(int(f)) + ")"
}

// RetryPolicy tunes retries: the same type as sendloop.RetryPolicy, with the same
// defaults. Zero fields take the defaults; a negative MaxRetries disables retries.
//
// RetryPolicy is declared once, in an internal package, for both clients; go doc does not
// list the fields of such an alias, so here they are:
//
//	type RetryPolicy struct {
//		// MaxRetries is how many times a request may be sent again after its first
//		// attempt: 0 for the default (3), negative for none.
//		MaxRetries int
//		// MinWait is the shortest wait between attempts, where the jittered
//		// exponential backoff starts (default 250ms).
//		MinWait time.Duration
//		// MaxWait is the longest wait between attempts (default 10s).
//		MaxWait time.Duration
//		// MaxRetryAfter caps the wait a Retry-After header may impose (default one
//		// minute): a longer wait fails the call at once with an *HTTPError that
//		// carries the requested wait.
//		MaxRetryAfter time.Duration
//	}
//
// Its method WithDefaults returns the policy with its zero fields set to the defaults.
type RetryPolicy = transport.Policy

// Option configures a Client in NewClient.
type Option func(*config)

type config struct {
	transport.Settings
	form         InputForm
	maxMediaSize int64
	maxChartDays int
	secrets      []string // removed from errors and logs besides the key
	sharedGiven  []string // the options given for settings a Shared value holds, by name
}

// shared makes an Option of a setting both clients have (internal/transport's Setting),
// noting its name when sets is true, which NewSharedClient refuses. An option that sets
// nothing (a nil HTTP client, a zero RetryPolicy) passes sets false.
func shared(name string, sets bool, set transport.Setting) Option {
	return func(c *config) {
		set(&c.Settings)
		if sets {
			c.sharedGiven = append(c.sharedGiven, "legacy."+name)
		}
	}
}

// WithBaseURL sets the address of the service, e.g. the account's own host or a
// sendlooptest server: the host, and any prefix a proxy adds, which is kept; requests go
// to its /api/index.php. A base URL ending in the API's own path (/api/index.php, /api/v3
// or /api/v4, with or without a trailing slash or a format segment) is refused by
// NewClient: the client adds that path itself. Plain http is refused unless the host is
// loopback or WithInsecureHTTP is given: the API key travels in every request.
func WithBaseURL(baseURL string) Option {
	return shared("WithBaseURL", baseURL != "", transport.BaseURL(baseURL))
}

// WithHTTPClient sets the HTTP client to send requests with. The Client copies it, so later
// changes to hc do not affect the Client. Its Timeout bounds each attempt; use a context
// deadline to bound a whole call, retries included.
func WithHTTPClient(hc *http.Client) Option {
	return shared("WithHTTPClient", hc != nil, transport.HTTPClient(hc))
}

// WithLogger sets a logger for request attempts: command, attempt, status and duration at
// debug level, never a body, a URL or a key. The default is silence.
func WithLogger(l *slog.Logger) Option { return shared("WithLogger", l != nil, transport.Logger(l)) }

// WithRetry sets the retry policy.
func WithRetry(p RetryPolicy) Option {
	return shared("WithRetry", p != (RetryPolicy{}), transport.Retry(p))
}

// WithUserAgent puts product (e.g. "myapp/1.2") before the SDK's own User-Agent token.
func WithUserAgent(product string) Option {
	return shared("WithUserAgent", product != "", transport.UserAgent(product))
}

// RateLimiter paces requests: Wait blocks until one may be sent, or returns an error when
// the context ends first. *rate.Limiter of golang.org/x/time/rate fits, without this module
// depending on it.
type RateLimiter = transport.Limiter

// WithRateLimiter makes the client wait on l before every attempt, retries included, so that
// it keeps to a rate the account allows. The service's request rate limits are not
// published; the SMTP relay is not paced by this.
func WithRateLimiter(l RateLimiter) Option {
	return shared("WithRateLimiter", l != nil, transport.RateLimiter(l))
}

// WithInsecureHTTP allows a plain http base URL on a host that is not loopback. The API key
// then crosses the network in clear text; use it only on a network you trust.
func WithInsecureHTTP() Option { return shared("WithInsecureHTTP", true, transport.InsecureHTTP()) }

// WithSecrets adds texts that the client removes from its error texts and log lines, as it
// removes the API key: a password sent in a Call's parameters, or the credential of another
// client sharing the HTTP client (sendloop.Client.Legacy gives the root client's), in
// every form a server might echo it (as sent, URL-escaped, JSON-escaped). Several calls
// add up; "" is ignored.
func WithSecrets(secrets ...string) Option {
	return func(c *config) { c.secrets = append(c.secrets, secrets...) }
}

// WithInputForm selects how requests carry their parameters; the default is PostForm.
// GetForm and MessageGetForm put the API key in the URL: see their documentation.
func WithInputForm(f InputForm) Option { return func(c *config) { c.form = f } }

// WithMaxMediaSize sets the largest media, in bytes before base64 encoding, that
// MediaUpload sends; larger media fail before sending with a *ValidationError matching
// ErrMediaTooLarge (code 9). 0 keeps DefaultMaxMediaSize; a negative size leaves the
// limit to the service.
func WithMaxMediaSize(n int64) Option { return func(c *config) { c.maxMediaSize = n } }

// WithMaxChartDays sets the largest ChartListActivityParams.Days that ChartListActivity sends;
// more fail before sending with a *ValidationError. 0 keeps DefaultMaxChartDays; a negative
// value leaves the limit to the service.
func WithMaxChartDays(n int) Option { return func(c *config) { c.maxChartDays = n } }

// Client talks to the legacy single-endpoint API. It is safe for concurrent use; create one
// and share it.
type Client struct {
	baseURL      string        // without a trailing slash
	key          func() string // a func, not a string: fmt cannot print what a closure holds
	form         InputForm
	maxMediaSize int64 // negative: no limit
	maxChartDays int   // negative: no limit
	transport    *transport.Client
}

// NewClient returns a Client that authenticates with apiKey. It makes no network call.
// Options are applied in any order; the result is checked once they all are.
//
// The key is checked as the root package's NewClient checks it: trimmed of surrounding
// white space, then refused when it holds white space or control characters inside, or is
// shorter than 8 characters (a sanity floor: the service does not publish its key format).
//
// A sendloop.Client has a legacy client of its own, built by this function with the root
// client's key, base URL, HTTP client, retries, rate limiter, logger and secrets:
// sendloop.Client.Legacy.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	var cfg config
	cfg.BaseURL = DefaultBaseURL
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	return build(apiKey, cfg)
}

// build checks cfg and builds the client on it.
func build(apiKey string, cfg config) (*Client, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	ch, err := transport.Build(pkgName, apiKey, cfg.Settings, userAgent, func(key string) []string {
		return append(keySpellings(key), cfg.secrets...)
	})
	if err != nil {
		return nil, err
	}
	return newClient(ch, cfg), nil
}

// check refuses what no option should have set.
func (cfg *config) check() error {
	if cfg.form < PostForm || cfg.form > MessageGetForm {
		return fmt.Errorf("sendloop/legacy: unknown input form %d", int(cfg.form))
	}
	return nil
}

// keySpellings are the forms of the key beyond itself that must be removed from errors and
// logs. The key travels as itself (form fields), query-escaped (the GET forms; the
// transport adds that spelling of every secret) and XML-escaped inside the message
// document. A server echoing that document in its XML answer escapes it once more: every
// spelling is a secret.
func keySpellings(key string) []string {
	xmlKey := escapeXML(key)
	return []string{xmlKey, escapeXML(xmlKey)}
}

// newClient returns a Client on a built chassis.
func newClient(ch *transport.Chassis, cfg config) *Client {
	maxMedia := cfg.maxMediaSize
	if maxMedia == 0 {
		maxMedia = DefaultMaxMediaSize
	}
	key := ch.Key
	return &Client{
		baseURL:      ch.BaseURL,
		key:          func() string { return key },
		form:         cfg.form,
		maxMediaSize: maxMedia,
		maxChartDays: cmp.Or(cfg.maxChartDays, DefaultMaxChartDays),
		transport:    ch.Transport,
	}
}

// String describes the client without its key.
func (c *Client) String() string {
	return "legacy.Client{BaseURL: " + c.baseURL + ", InputForm: " + c.form.String() + "}"
}

// GoString describes the client without its key.
func (c *Client) GoString() string { return c.String() }

// LogValue describes the client without its key.
func (c *Client) LogValue() slog.Value { return slog.StringValue(c.String()) }

// BaseURL returns the base address the client sends to; requests go to its /api/index.php.
func (c *Client) BaseURL() string { return c.baseURL }

// InputForm returns the input form the client sends requests in.
func (c *Client) InputForm() InputForm { return c.form }

// RetryClass says which failures a command may be sent again after: RetryRead and
// RetryIdempotent after any transient failure, RetryOneShot only where the request surely
// did not reach the service. It is the same type as sendloop.RetryClass.
type RetryClass = transport.Class

// The retry classes, for WithRetryClass.
const (
	RetryRead       RetryClass = transport.Read
	RetryIdempotent RetryClass = transport.Idempotent
	RetryOneShot    RetryClass = transport.OneShot
)

// CallOption changes how one command is sent by Call.
type CallOption = transport.CallOption

// WithRetryClass sets the retry class of the command sent by Call, for a command the
// package does not know (which it takes for a one-shot write) or whose effect the caller
// knows better.
func WithRetryClass(class RetryClass) CallOption { return transport.WithRetryClass(class) }

// Call sends any legacy command, typed by this package or not (Subscriber.Get,
// Subscribers.Get, Subscriber.Update, Subscriber.Delete, the Report.* functions, …), and
// returns the answer's struct. params may be nil, url.Values, map[string]string, or a
// struct tagged for github.com/google/go-querystring; array parameters use bracket
// notation (Fields[CustomField7]). APIKey and Command are added by the client and may not
// be given. A failure struct becomes an *Error, an XML-RPC fault a *Fault.
//
// Retries follow the command: the functions the specification names keep their class
// (Subscriber.Update and Subscriber.Delete are idempotent, Subscriber.Get, Subscribers.Get
// and the Report.* functions reads, Media.Upload one-shot); another name is a read when it
// says so (Chart.*, Report.*, names ending in .Get or .Browse) and a one-shot write
// otherwise, sent again only when it surely did not reach the service, unless
// WithRetryClass says otherwise.
func (c *Client) Call(ctx context.Context, command string, params any, opts ...CallOption) (Struct, error) {
	if err := checkCommand(command); err != nil {
		return nil, err
	}
	class, err := transport.ClassFor(commands.LegacyClassOf(command), opts)
	if err != nil {
		return nil, invalid(command, 0, "", err.Error())
	}
	form, err := wire.Values(params)
	if err != nil {
		return nil, invalid(command, 0, "", err.Error())
	}
	return c.callAs(ctx, command, class, form)
}

// checkCommand refuses a command name that cannot be sent (the registry's one check).
func checkCommand(command string) error {
	if err := commands.Check(command); err != nil {
		return invalid(command, 0, "Command", err.Error())
	}
	return nil
}

// call sends a typed method's command, with the registry's retry class, and returns its
// answer's struct.
func (c *Client) call(ctx context.Context, command string, params url.Values) (Struct, error) {
	return c.callAs(ctx, command, commands.LegacyClassOf(command), params)
}

// callAs sends a command with the given retry class and returns its answer's struct.
func (c *Client) callAs(ctx context.Context, command string, class transport.Class, params url.Values) (Struct, error) {
	resp, err := c.send(ctx, command, class, params)
	if err != nil {
		return nil, err
	}
	v, err := c.decode(resp.Body)
	st, err := c.answer(command, resp, v, err)
	if err = c.transport.Outcome(command, resp, err); err != nil {
		return nil, err
	}
	return st, nil
}

// decode is Decode with the API key removed from every text of the answer, fault included:
// a key echoed inside escaped markup survives the removal from the raw body.
func (c *Client) decode(body []byte) (Value, error) {
	v, err := Decode(body)
	var fault *Fault
	if errors.As(err, &fault) {
		fault.Message = c.transport.Redact(fault.Message)
	}
	c.redactValue(&v)
	return v, err
}

func (c *Client) redactValue(v *Value) {
	switch v.kind {
	case KindString:
		v.text = c.transport.Redact(v.text)
	case KindStruct:
		for i := range v.members {
			v.members[i].Name = c.transport.Redact(v.members[i].Name)
			c.redactValue(&v.members[i].Value)
		}
	case KindArray:
		for i := range v.elems {
			c.redactValue(&v.elems[i])
		}
	}
}

// send builds the request in the client's input form and sends it. The answer's body comes
// back with the API key removed, should the server echo it.
func (c *Client) send(ctx context.Context, command string, class transport.Class, params url.Values) (*transport.Response, error) {
	if ctx == nil {
		return nil, errors.New("sendloop/legacy: nil context")
	}
	req, err := c.request(command, class, params)
	if err != nil {
		return nil, err
	}
	resp, err := c.transport.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if redacted := c.transport.Redact(string(resp.Body)); redacted != string(resp.Body) {
		resp.Body = []byte(redacted)
	}
	return resp, nil
}

// request encodes a command in the client's input form.
func (c *Client) request(command string, class transport.Class, params url.Values) (*transport.Request, error) {
	for _, reserved := range []string{"APIKey", "Command"} {
		if _, ok := params[reserved]; ok {
			return nil, invalid(command, 0, reserved, reserved+" is set by the client, not a parameter")
		}
	}
	req := &transport.Request{
		Command: command,
		Class:   class,
		Method:  http.MethodPost,
		URL:     c.baseURL + Endpoint,
		Header:  http.Header{"Accept": {"text/xml"}},
	}
	// net/http sends a GET again by itself when a kept-alive connection dies before the
	// answer, beneath any retry policy: a one-shot command goes as a POST in every form.
	inputForm := c.form
	if class == transport.OneShot {
		switch inputForm {
		case GetForm:
			inputForm = PostForm
		case MessageGetForm:
			inputForm = MessageForm
		}
	}
	var form url.Values
	switch inputForm {
	case PostForm:
		if _, ok := params["Message"]; ok {
			return nil, invalid(command, 0, "Message", "a parameter named Message would be read as the FormValue_Message document")
		}
		form = make(url.Values, len(params)+2)
		for k, v := range params {
			form["FormValue_"+k] = v
		}
		form.Set("FormValue_APIKey", c.key())
		form.Set("FormValue_Command", command)
	case GetForm:
		if _, ok := params["FormValue_Message"]; ok {
			return nil, invalid(command, 0, "FormValue_Message", "a parameter named FormValue_Message would be read as the message document")
		}
		form = make(url.Values, len(params)+2)
		for k, v := range params {
			form[k] = v
		}
		form.Set("APIKey", c.key())
		form.Set("Command", command)
	default: // MessageForm, MessageGetForm
		doc, err := message(c.key(), command, params)
		if err != nil {
			return nil, err
		}
		form = url.Values{"FormValue_Message": {string(doc)}}
	}
	encoded := form.Encode()
	if inputForm == GetForm || inputForm == MessageGetForm {
		req.Method = http.MethodGet
		req.URL += "?" + encoded
	} else {
		req.Body = []byte(encoded)
		req.ContentType = "application/x-www-form-urlencoded"
	}
	return req, nil
}

// answer turns a decoded response into the answer's struct or the failure it reports.
func (c *Client) answer(command string, resp *transport.Response, v Value, err error) (Struct, error) {
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	var fault *Fault
	switch {
	case resp.RedirectOrigin != "":
		return nil, c.transport.RedirectError(c.transport.Redactor(), command, resp)
	case errors.As(err, &fault):
		fault.Command, fault.HTTPStatus = command, resp.StatusCode
		return nil, fault
	case err != nil && !ok:
		return nil, c.httpError(command, resp, "unexpected status; the body is not an XML-RPC answer")
	case err != nil:
		return nil, c.httpError(command, resp, "the body is not an XML-RPC answer: "+err.Error())
	case v.Kind() != KindStruct:
		return nil, c.httpError(command, resp, "the XML-RPC answer is a "+v.Kind().String()+", not a struct")
	}
	st := v.Struct()
	if e := failure(st); e != nil {
		e.Command, e.HTTPStatus, e.Attempts = command, resp.StatusCode, resp.Attempts
		e.EarlierAttemptMayHaveRun, e.earlierFailure = resp.EarlierAttemptMayHaveRun, resp.EarlierFailure
		return nil, e
	}
	if !ok {
		return nil, c.httpError(command, resp, "unexpected status")
	}
	return st, nil
}

// failure reads the failure members of an answer: APIErrorCode (a string, or any scalar)
// and APIError. A struct carrying them with code 0 and no message is no failure.
func failure(st Struct) *Error {
	codeValue, hasCode := st.Get("APIErrorCode")
	msgValue, hasMsg := st.Get("APIError")
	if !hasCode && !hasMsg {
		return nil
	}
	code, err := codeValue.Int()
	if err != nil || code != int64(int(code)) {
		code = 0
	}
	msg := strings.TrimSpace(msgValue.Text())
	if code == 0 && msg == "" {
		return nil
	}
	return &Error{Code: ErrorCode(code), Message: msg}
}

func (c *Client) httpError(command string, resp *transport.Response, reason string) *HTTPError {
	return c.transport.HTTPError(c.transport.Redactor(), command, resp, reason)
}

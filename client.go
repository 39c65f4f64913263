package sendloop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
	"github.com/go-sendloop/sendloop/legacy"
)

// Version is the SDK's version, sent in the User-Agent header.
const Version = "0.5.0"

// DefaultBaseURL is the service's generic host. Accounts also have their own host
// (https://<subdomain>.sendloop.com), which WithBaseURL selects.
const DefaultBaseURL = "https://app.sendloop.com"

// Environment variables read by NewClientFromEnv.
const (
	EnvAPIKey  = "SENDLOOP_API_KEY"  // the API key
	EnvBaseURL = "SENDLOOP_BASE_URL" // the account's host, e.g. https://acme.sendloop.com
	// EnvInsecureHTTP, set to 1 (or true), allows a plain http SENDLOOP_BASE_URL on a host
	// that is not loopback, as WithInsecureHTTP does: for a `sendloop fake --listen-any`
	// reached by its CI service name. The CLI reads the same variable.
	EnvInsecureHTTP = "SENDLOOP_INSECURE_HTTP"
)

// Client talks to the v3 command API. It is safe for concurrent use; create one and share it.
type Client struct {
	common service // the one value every service shares

	// Account reads and updates the account's details.
	Account *AccountService
	// Lists creates, reads and configures subscriber lists.
	Lists *ListsService
	// Subscribers subscribes, reads, updates and imports list members.
	Subscribers *SubscribersService
	// Suppression reads and extends the suppression list.
	Suppression *SuppressionService
	// Campaigns creates, reads, updates and deletes email campaigns.
	Campaigns *CampaignsService
	// Reports reads list and campaign statistics.
	Reports *ReportsService
	// CampaignData pages through a campaign's activity records.
	CampaignData *CampaignDataService
	// Exports reads unsubscriptions, suppressions, spam complaints and bounces.
	Exports *ExportsService
	// People tracks person profiles (the engagement API).
	People *PeopleService
	// System reads the service's clock and time zones.
	System *SystemService

	baseURL   string        // without a trailing slash
	key       func() string // a func, not a string: fmt cannot print what a closure holds
	transport *transport.Client
	legacy    *legacy.Client // built by NewClient on the same chassis
}

type service struct{ client *Client }

// RetryPolicy tunes retries. Zero fields take the defaults: 3 retries, waits from 250ms to
// 10s with jitter, and Retry-After honoured up to one minute. A negative MaxRetries
// disables retries. Which failures are retried depends on the command (see the package
// doc). It is the same type as legacy.RetryPolicy.
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
	legacyOpts []legacy.Option
}

// settingOf adapts a setting both clients have (internal/transport's Setting) to config.
func settingOf(set transport.Setting) func(*config) {
	return func(c *config) { set(&c.Settings) }
}

// WithBaseURL sets the address of the service, e.g. the account's own host or a
// sendlooptest server: the host, and any prefix a proxy adds, which is kept. A base URL
// ending in the API's own path (/api/v3, /api/v4 or /api/index.php, with or without a
// trailing slash or a format segment such as /json) is refused by NewClient: the client
// adds that path itself. Plain http is refused unless the host is loopback or
// WithInsecureHTTP is given: the API key travels in every request.
func WithBaseURL(baseURL string) Option {
	return Option(settingOf(transport.BaseURL(baseURL)))
}

// WithHTTPClient sets the HTTP client to send requests with. The Client copies it, so later
// changes to hc do not affect the Client. Its Timeout bounds each attempt; use a context
// deadline to bound a whole call, retries included.
func WithHTTPClient(hc *http.Client) Option {
	return Option(settingOf(transport.HTTPClient(hc)))
}

// WithLogger sets a logger for request attempts: command, attempt, status and duration at
// debug level, never a body, a URL query or a key. The default is silence.
func WithLogger(l *slog.Logger) Option {
	return Option(settingOf(transport.Logger(l)))
}

// WithRetry sets the retry policy.
func WithRetry(p RetryPolicy) Option {
	return Option(settingOf(transport.Retry(p)))
}

// WithUserAgent puts product (e.g. "myapp/1.2") before the SDK's own User-Agent token.
func WithUserAgent(product string) Option {
	return Option(settingOf(transport.UserAgent(product)))
}

// RateLimiter paces requests: Wait blocks until one may be sent, or returns an error when
// the context ends first. *rate.Limiter of golang.org/x/time/rate fits, without this module
// depending on it.
type RateLimiter = transport.Limiter

// WithRateLimiter makes the client wait on l before every attempt, retries included, so that
// it keeps to a rate the account allows. The service's request rate limits are not
// published; the SMTP relay is not paced by this.
func WithRateLimiter(l RateLimiter) Option {
	return Option(settingOf(transport.RateLimiter(l)))
}

// WithInsecureHTTP allows a plain http base URL on a host that is not loopback. The API key
// then crosses the network in clear text; use it only on a network you trust.
func WithInsecureHTTP() Option {
	return Option(settingOf(transport.InsecureHTTP()))
}

// WithLegacyOptions gives the legacy-only settings of the client Legacy returns, such as
// legacy.WithInputForm, legacy.WithMaxMediaSize and legacy.WithMaxChartDays. Several calls
// add up. The settings both clients share (base URL, HTTP client, logger, retries, user
// agent, rate limiter, plain http) come from the root client's options: a legacy option
// for one of them makes NewClient fail rather than be ignored.
func WithLegacyOptions(opts ...legacy.Option) Option {
	return func(c *config) { c.legacyOpts = append(c.legacyOpts, opts...) }
}

// NewClient returns a Client that authenticates with apiKey. It makes no network call.
// Options are applied in any order; the result is checked once they all are, the legacy
// client's settings (WithLegacyOptions) included.
//
// The key is trimmed of surrounding white space, then refused when it holds white space or
// control characters inside, or is shorter than 8 characters. The service does not publish
// its key format: 8 is a sanity floor that catches a placeholder or a cut-off value before
// any request, not a rule of the service.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	var cfg config
	cfg.BaseURL = DefaultBaseURL
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	ch, err := transport.Build("sendloop", apiKey, cfg.Settings, "sendloop-go/"+Version, keySpellings)
	if err != nil {
		return nil, err
	}
	lc, err := newLegacy(ch, cfg)
	if err != nil {
		return nil, fmt.Errorf("sendloop: WithLegacyOptions: %w", err)
	}
	key := ch.Key
	c := &Client{
		baseURL:   ch.BaseURL,
		key:       func() string { return key },
		transport: ch.Transport,
		legacy:    lc,
	}
	c.common.client = c
	c.Account = (*AccountService)(&c.common)
	c.Lists = (*ListsService)(&c.common)
	c.Subscribers = (*SubscribersService)(&c.common)
	c.Suppression = (*SuppressionService)(&c.common)
	c.Campaigns = (*CampaignsService)(&c.common)
	c.Reports = (*ReportsService)(&c.common)
	c.CampaignData = (*CampaignDataService)(&c.common)
	c.Exports = (*ExportsService)(&c.common)
	c.People = (*PeopleService)(&c.common)
	c.System = (*SystemService)(&c.common)
	return c, nil
}

// keySpellings are the forms of the key beyond itself that must be removed from errors and
// logs: it travels as itself, and as the person GETs' Basic credential.
func keySpellings(key string) []string {
	return []string{base64.StdEncoding.EncodeToString([]byte(key + ":"))}
}

// newLegacy builds the client Legacy returns through legacy.NewSharedClient, handing it in
// one value what the root client was built with: its key and checked base URL, its HTTP
// client (the copy whose transport holds the window of calls in flight and the pool of
// connections, which the legacy client then shares), its rate limiter, retry policy,
// logger and User-Agent product, and its secrets; then the legacy-only settings of
// WithLegacyOptions. legacy refuses an option there for a setting the root client owns: it
// would be overridden or would split what both clients share.
func newLegacy(ch *transport.Chassis, cfg config) (*legacy.Client, error) {
	return legacy.NewSharedClient(ch.Key, legacy.Shared{
		BaseURL:      ch.BaseURL,
		HTTPClient:   ch.Transport.HTTPClient(),
		Logger:       cfg.Logger,
		Retry:        cfg.Policy,
		RateLimiter:  cfg.Limiter,
		UserAgent:    ch.Product,
		InsecureHTTP: cfg.AllowInsecure,
		Secrets:      keySpellings(ch.Key),
		Observer:     cfg.Observer,
	}, cfg.legacyOpts...)
}

// NewClientFromEnv is NewClient with the key from SENDLOOP_API_KEY, the base URL from
// SENDLOOP_BASE_URL when set, and WithInsecureHTTP when SENDLOOP_INSECURE_HTTP is true.
// Options given here override the environment. The key and the base URL are checked as
// NewClient checks them; a variable that is missing or unusable is an *EnvError naming
// it. See NewClientFromLookup.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	return NewClientFromLookup(os.LookupEnv, opts...)
}

// NewClientFromLookup is NewClientFromEnv with the variables read through lookup instead
// of the process's environment (os.LookupEnv has its shape; a variable set to "" counts as
// unset), for a program that keeps its settings elsewhere, or a test.
func NewClientFromLookup(lookup func(name string) (string, bool), opts ...Option) (*Client, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	key := get(EnvAPIKey)
	if strings.TrimSpace(key) == "" {
		return nil, &EnvError{Variable: EnvAPIKey, Unset: true, Reason: " is not set"}
	}
	var fromEnv []Option
	insecure := false
	if v := strings.TrimSpace(get(EnvInsecureHTTP)); v != "" {
		var err error
		if insecure, err = strconv.ParseBool(v); err != nil {
			return nil, &EnvError{Variable: EnvInsecureHTTP,
				Reason: fmt.Sprintf("=%q is not a boolean: use 1 to allow plain http, 0 or nothing to refuse it", v)}
		}
		if insecure {
			fromEnv = append(fromEnv, WithInsecureHTTP())
		}
	}
	if base := strings.TrimSpace(get(EnvBaseURL)); base != "" {
		// The variable is checked by the rule NewClient applies, unless an option replaces
		// it, so that its error can name it.
		var given config
		for _, opt := range opts {
			if opt != nil {
				opt(&given)
			}
		}
		if given.BaseURL == "" {
			if _, err := transport.CheckBaseURL(base, insecure || given.AllowInsecure); err != nil {
				return nil, &EnvError{Variable: EnvBaseURL, Reason: ": " + err.Error(), Err: err}
			}
		}
		fromEnv = append(fromEnv, WithBaseURL(base))
	}
	return NewClient(key, append(fromEnv, opts...)...)
}

// EnvError is a setting of the environment that NewClientFromEnv cannot use: missing or
// malformed. Its text names the variable, never the key.
type EnvError struct {
	// Variable is the variable at fault: EnvAPIKey, EnvBaseURL or EnvInsecureHTTP.
	Variable string
	// Unset reports that a required variable is unset or empty.
	Unset bool
	// Reason says what is wrong, after the variable's name.
	Reason string
	// Err is the cause, when there is one.
	Err error
}

// Error names the variable and what is wrong with it.
func (e *EnvError) Error() string { return "sendloop: " + e.Variable + e.Reason }

// Unwrap returns the cause, or nil.
func (e *EnvError) Unwrap() error { return e.Err }

// String describes the client without its key.
func (c *Client) String() string { return "sendloop.Client{BaseURL: " + c.baseURL + "}" }

// GoString describes the client without its key.
func (c *Client) GoString() string { return c.String() }

// LogValue describes the client without its key.
func (c *Client) LogValue() slog.Value { return slog.StringValue(c.String()) }

// BaseURL returns the address the client sends to.
func (c *Client) BaseURL() string { return c.baseURL }

// Legacy returns the client of the legacy single-endpoint API (/api/index.php) for the same
// account. NewClient builds it once, with the root client, through legacy.NewClient: it
// shares the key, the base URL, the HTTP client (the client's own copy, with its redirect
// rules), the retry policy, the rate limiter, the logger, the User-Agent product and the
// secrets removed from errors and logs, so that calls of both APIs count against one
// limiter, one window of calls in flight (see the package doc) and one pool of
// connections. Its User-Agent token is the legacy package's ("sendloop-go/legacy").
// Legacy-only settings such as the input form are given to NewClient with
// WithLegacyOptions; without them the legacy package's defaults apply (PostForm,
// DefaultMaxMediaSize, DefaultMaxChartDays). Subscribers.Unsubscribe goes through it.
func (c *Client) Legacy() *legacy.Client { return c.legacy }

// Format is a response format of the v3 API.
type Format string

// The response formats of the v3 API.
const (
	FormatJSON Format = "json"
	FormatXML  Format = "xml"
	FormatPHP  Format = "php"
)

// RetryClass says which failures a command may be sent again after. There are three
// classes:
//
//   - RetryRead: a command that changes nothing. It is sent again after any transient
//     failure: a dial error, a reset, a timeout, 429, 502, 503, 504, a body that stalls
//     or breaks.
//   - RetryIdempotent: a write that gives the same result when repeated. It is sent again
//     as a read is.
//   - RetryOneShot: a write that acts anew each time. It is sent again only where the
//     request surely did not reach the service: a dial error, 429, 503.
//
// Every command the package knows has its class; Call and CallRaw send any other as a
// one-shot write unless WithRetryClass says otherwise. A class prints as "read",
// "idempotent" or "one-shot".
//
// RetryClass, its values, CallOption and WithRetryClass are declared once, in package
// legacy (which this package builds its legacy client with), so that their values can be
// given to either client.
type RetryClass = legacy.RetryClass

// The retry classes, for WithRetryClass.
const (
	RetryRead       = legacy.RetryRead
	RetryIdempotent = legacy.RetryIdempotent
	RetryOneShot    = legacy.RetryOneShot
)

// CallOption changes how one command is sent by Call and CallRaw. There is one option:
//
//   - WithRetryClass(class) sends the command with the given RetryClass instead of the
//     one the package knows for it (a one-shot write for a command it does not know).
//
// CallOption is legacy's, so that its values can be given to either client.
type CallOption = legacy.CallOption

// WithRetryClass sets the retry class of the command sent by Call or CallRaw, for a command the
// package does not know (which it takes for a one-shot write) or whose effect the caller
// knows better. A class that is none of RetryRead, RetryIdempotent and RetryOneShot fails
// the call before sending, with a *ValidationError.
func WithRetryClass(class RetryClass) CallOption { return legacy.WithRetryClass(class) }

// Call sends any v3 command, typed by this package or not (custom fields, segments, commands
// the specification does not show), and decodes the JSON response into out with
// encoding/json, envelope (Success) included. params may be nil, url.Values,
// map[string]string, or a struct tagged for github.com/google/go-querystring. A failure
// envelope becomes an *APIError.
//
// Retries follow the command: the writes the specification shows keep their class (creates
// are one-shot, the others idempotent); *.get, *.getlist, browse, search, report.*, data.*,
// export.* and system.* are reads; any other command is taken for a one-shot write and
// sent again only when it surely did not reach the service, unless WithRetryClass says
// otherwise.
func (c *Client) Call(ctx context.Context, command string, params, out any, opts ...CallOption) error {
	body, err := c.CallRaw(ctx, command, params, FormatJSON, opts...)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("sendloop: %s: decoding response: %w", command, err)
	}
	return nil
}

// CallRaw is Call returning the response body as the service sent it, in the given format.
// Failures are still recognised in every format and returned as an *APIError.
func (c *Client) CallRaw(ctx context.Context, command string, params any, format Format, opts ...CallOption) ([]byte, error) {
	if err := checkCommand(command); err != nil {
		return nil, err
	}
	class, err := transport.ClassFor(commands.ClassOf(command), opts)
	if err != nil {
		return nil, &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	switch format {
	case FormatJSON, FormatXML, FormatPHP:
	default:
		return nil, invalid(command, ErrInvalidFormat, "format", fmt.Sprintf("unknown response format %q", format))
	}
	form, err := wire.Values(params)
	if err != nil {
		return nil, &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	resp, err := c.roundTrip(ctx, &apiCall{command: command, form: form, format: format, class: &class})
	if err != nil {
		return nil, err
	}
	if format == FormatJSON {
		err = c.decodeEnvelope(command, resp, nil)
	} else {
		err = c.checkForeignEnvelope(command, format, resp)
	}
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// checkCommand refuses a command name that cannot be sent (the registry's one check).
func checkCommand(command string) error {
	if err := commands.Check(command); err != nil {
		return &ValidationError{Code: ErrInvalidCommand, Command: command, Reason: err.Error()}
	}
	return nil
}

package legacy

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// Shared is what a legacy client takes, as one value, from the client that builds it:
// sendloop.NewClient hands its legacy client the settings both APIs share, already checked
// and set up for the root client (its base URL, its own copy of the HTTP client, whose
// transport holds the window of calls in flight and the pool of connections, its retry
// policy, rate limiter, logger, User-Agent product and secrets). A program that builds a
// standalone legacy client uses NewClient and the options instead.
type Shared struct {
	// BaseURL is the address of the service, checked as WithBaseURL's.
	BaseURL string
	// HTTPClient sends the requests. Given a client another client of this module built,
	// the legacy client sends through the same window of calls in flight and the same
	// connections.
	HTTPClient *http.Client
	// Logger is as WithLogger sets it.
	Logger *slog.Logger
	// Retry is as WithRetry sets it.
	Retry RetryPolicy
	// RateLimiter is as WithRateLimiter sets it.
	RateLimiter RateLimiter
	// UserAgent is the caller's product token, as WithUserAgent sets it.
	UserAgent string
	// InsecureHTTP is as WithInsecureHTTP.
	InsecureHTTP bool
	// Secrets are removed from errors and logs, as WithSecrets's are.
	Secrets []string
	// Observer is told of every call, as WithObserver's is.
	Observer Observer
}

// NewSharedClient returns a Client built on sh, with the legacy-only options opts
// (WithInputForm, WithMaxMediaSize, WithMaxChartDays, WithSecrets). An option for a
// setting sh holds (WithBaseURL, WithHTTPClient, WithLogger, WithRetry, WithUserAgent,
// WithRateLimiter, WithInsecureHTTP, WithObserver) is refused rather than ignored: it would split what
// the two clients share. It makes no network call.
func NewSharedClient(apiKey string, sh Shared, opts ...Option) (*Client, error) {
	var cfg config
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	if len(cfg.sharedGiven) > 0 {
		return nil, errors.New("sendloop/legacy: " + strings.Join(cfg.sharedGiven, ", ") +
			": the legacy client of a sendloop.Client shares the root client's settings; give the root package's option instead")
	}
	cfg.Settings = transport.Settings{
		BaseURL: sh.BaseURL, HTTPClient: sh.HTTPClient, Logger: sh.Logger, Policy: sh.Retry,
		UserAgent: sh.UserAgent, AllowInsecure: sh.InsecureHTTP, Limiter: sh.RateLimiter,
	}
	if sh.Observer != nil {
		transport.ObserverSetting(sh.Observer, errorCodeOf)(&cfg.Settings)
	}
	cfg.secrets = append(cfg.secrets, sh.Secrets...)
	return build(apiKey, cfg)
}

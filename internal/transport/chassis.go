package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Settings are what the root and legacy clients are configured with; both packages'
// options write here, and Build checks them.
type Settings struct {
	BaseURL       string
	HTTPClient    *http.Client // copied, never modified
	Logger        *slog.Logger
	Policy        Policy
	UserAgent     string // the caller's product token, put before the SDK's
	AllowInsecure bool
	Limiter       Limiter
	// Observer, when set, is told of every call; CodeOf reads the service's error code of
	// the errors the package makes (see ObserverSetting).
	Observer Observer
	CodeOf   func(error) int
}

// Chassis is what a client is built on: its checked base URL and key, and its transport.
type Chassis struct {
	BaseURL   string // without a trailing slash
	Key       string
	Product   string // the caller's User-Agent product token, "" if none
	Transport *Client
}

// MinKeyLength is the fewest characters an API key may have. The service does not publish
// its key format: this is a sanity floor that catches a placeholder or a truncated value
// before its first request, not a rule of the service.
const MinKeyLength = 8

// Build checks apiKey and s and sets up the transport. The key is trimmed, then refused
// when it holds control characters, invalid UTF-8 or white space, or is shorter than
// MinKeyLength. pkg starts the errors' texts ("sendloop", "sendloop/legacy"); agent is the SDK's own
// User-Agent token; spellings gives the forms of the key, beyond the key itself, that must
// be removed from errors and logs (the key as an XML text, as a Basic credential).
func Build(pkg, apiKey string, s Settings, agent string, spellings func(key string) []string) (*Chassis, error) {
	apiKey = strings.TrimSpace(apiKey)
	switch {
	case apiKey == "":
		return nil, errors.New(pkg + ": the API key is empty")
	case strings.ContainsFunc(apiKey, unicode.IsControl) || !utf8.ValidString(apiKey):
		return nil, errors.New(pkg + ": the API key holds control characters or invalid UTF-8")
	case strings.ContainsFunc(apiKey, unicode.IsSpace):
		return nil, errors.New(pkg + ": the API key holds white space: give the key alone, as the account's settings show it")
	case utf8.RuneCountInString(apiKey) < MinKeyLength:
		return nil, fmt.Errorf("%s: the API key is shorter than %d characters, which no real key is: give the key as the account's settings show it", pkg, MinKeyLength)
	case hasControl(s.UserAgent):
		return nil, errors.New(pkg + ": the user agent holds control characters")
	}
	base, err := CheckBaseURL(s.BaseURL, s.AllowInsecure)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	product := strings.TrimSpace(s.UserAgent)
	if product != "" {
		agent = product + " " + agent
	}
	secrets := []string{apiKey}
	if spellings != nil {
		secrets = append(secrets, spellings(apiKey)...)
	}
	return &Chassis{
		BaseURL: base,
		Key:     apiKey,
		Product: product,
		Transport: New(Config{
			HTTPClient: s.HTTPClient,
			Logger:     s.Logger,
			Policy:     s.Policy,
			UserAgent:  agent,
			Secrets:    secrets,
			Limiter:    s.Limiter,
			Package:    pkg,
			Observer:   s.Observer,
			CodeOf:     s.CodeOf,
		}),
	}, nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Setting sets one of the Settings. The root and legacy packages' options of the same
// names (WithBaseURL, WithHTTPClient, …) are these, wrapped in each package's Option type.
type Setting func(*Settings)

// BaseURL sets the service's address.
func BaseURL(u string) Setting { return func(s *Settings) { s.BaseURL = u } }

// HTTPClient sets the HTTP client, copied by New.
func HTTPClient(hc *http.Client) Setting { return func(s *Settings) { s.HTTPClient = hc } }

// Logger sets the logger of request attempts.
func Logger(l *slog.Logger) Setting { return func(s *Settings) { s.Logger = l } }

// Retry sets the retry policy.
func Retry(p Policy) Setting { return func(s *Settings) { s.Policy = p } }

// UserAgent sets the caller's product token.
func UserAgent(product string) Setting { return func(s *Settings) { s.UserAgent = product } }

// RateLimiter sets the limiter waited on before every attempt.
func RateLimiter(l Limiter) Setting { return func(s *Settings) { s.Limiter = l } }

// InsecureHTTP allows a plain http base URL on a host that is not loopback.
func InsecureHTTP() Setting { return func(s *Settings) { s.AllowInsecure = true } }

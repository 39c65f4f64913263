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

// Settings are what the root and legacy clients are configured with; their options write
// here, and Build checks them once for both.
type Settings struct {
	BaseURL       string
	HTTPClient    *http.Client // copied, never modified
	Logger        *slog.Logger
	Policy        Policy
	UserAgent     string // the caller's product token, put before the SDK's
	AllowInsecure bool
	Limiter       Limiter
}

// Chassis is what a client is built on: its checked base URL and key, and its transport.
type Chassis struct {
	BaseURL   string // without a trailing slash
	Key       string
	Transport *Client
}

// MinKeyLength is the fewest characters an API key may have. The service does not publish
// its key format: this is a sanity floor that catches a placeholder or a truncated value
// before its first request, not a rule of the service.
const MinKeyLength = 8

// Build checks apiKey and s and sets up the transport. The key is trimmed, then refused
// when it holds control characters, invalid UTF-8 or white space, or is shorter than
// MinKeyLength. pkg prefixes the errors ("sendloop", "legacy"); agent is the SDK's own
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
		return nil, fmt.Errorf("%s: the API key is shorter than %d characters: no real key is (give the key as the account's settings show it)", pkg, MinKeyLength)
	case hasControl(s.UserAgent):
		return nil, errors.New(pkg + ": the user agent holds control characters")
	}
	base, err := CheckBaseURL(s.BaseURL, s.AllowInsecure)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	if p := strings.TrimSpace(s.UserAgent); p != "" {
		agent = p + " " + agent
	}
	secrets := []string{apiKey}
	if spellings != nil {
		secrets = append(secrets, spellings(apiKey)...)
	}
	return &Chassis{
		BaseURL: base,
		Key:     apiKey,
		Transport: New(Config{
			HTTPClient: s.HTTPClient,
			Logger:     s.Logger,
			Policy:     s.Policy,
			UserAgent:  agent,
			Secrets:    secrets,
			Limiter:    s.Limiter,
		}),
	}, nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

package transport

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// CheckBaseURL validates the address of the service and returns it without a trailing
// slash. Plain http is refused unless the host is loopback or allowInsecure is set: the
// API key travels in every request.
func CheckBaseURL(raw string, allowInsecure bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("invalid base URL: %w", err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("base URL %q must be an absolute http(s) URL", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("base URL must not carry credentials, a query or a fragment")
	}
	if u.Scheme == "http" && !allowInsecure && !IsLoopback(u.Hostname()) {
		return "", fmt.Errorf("refusing plain http to %s: the API key would travel in clear text (use https, or WithInsecureHTTP)", u.Host)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// IsLoopback reports whether host names this machine: localhost (and *.localhost) or a
// loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

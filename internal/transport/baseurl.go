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
// API key travels in every request. A path that ends in the API's own path (see
// APIPathIndex) is refused: the clients append it themselves, and every call would then go
// to a page that does not exist. Any other path is a proxy's prefix and is kept.
func CheckBaseURL(raw string, allowInsecure bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("invalid base URL: %w", err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("base URL %q must be an absolute http(s) URL", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", errors.New("base URL must not carry credentials, a query or a fragment")
	}
	if i := APIPathIndex(u.Path); i >= 0 {
		host := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path[:i]}
		return "", fmt.Errorf("base URL %s ends in the API's own path %s: give the host (and any proxy prefix) only, %s; the client adds /api/v3/… and /api/index.php itself",
			u.String(), u.Path[i:], host.String())
	}
	if u.Scheme == "http" && !allowInsecure && !IsLoopback(u.Hostname()) {
		return "", &PlainHTTPError{Host: u.Host}
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// PlainHTTPError is CheckBaseURL's refusal of plain http to a host that is not loopback.
type PlainHTTPError struct {
	Host string // the host and port of the base URL
}

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("refusing plain http to %s: the API key would travel in clear text (use https, or WithInsecureHTTP)", e.Host)
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

// APIPathIndex returns where, in a base URL's path, the API's own path starts: a segment
// "api" followed by a segment "v3", "v4" or "index.php" (in any case), whatever comes
// after it (a trailing slash, a format segment such as /json, a command). It returns -1
// when the path holds none: the host, or a proxy's prefix such as /sendloop or /api.
func APIPathIndex(path string) int {
	for start := 0; start < len(path); {
		if path[start] != '/' {
			start++
			continue
		}
		seg, rest, _ := strings.Cut(path[start+1:], "/")
		if strings.EqualFold(seg, "api") && rest != "" {
			next, _, _ := strings.Cut(rest, "/")
			if strings.EqualFold(next, "v3") || strings.EqualFold(next, "v4") || strings.EqualFold(next, "index.php") {
				return start
			}
		}
		start += 1 + len(seg)
	}
	return -1
}

package legacy

import (
	"errors"
	"strings"

	"github.com/go-sendloop/sendloop/internal/legacylink"
	"github.com/go-sendloop/sendloop/internal/transport"
)

func init() {
	legacylink.New = func(root *transport.Chassis, opts any) (any, error) {
		o, _ := opts.([]Option)
		c, err := newShared(root, o)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// newShared returns the legacy client of a root client: the root's chassis (key, base URL,
// HTTP client, retries, rate limiter, logger, the caller's User-Agent product) under this
// package's own User-Agent token and key spellings, with the legacy-only settings of opts.
// An option setting what the root client owns is refused rather than ignored.
func newShared(root *transport.Chassis, opts []Option) (*Client, error) {
	var cfg config
	cfg.apply(opts)
	s := cfg.Settings
	var owned []string
	for _, o := range []struct {
		set  bool
		name string
	}{
		{s.BaseURL != "", "WithBaseURL"},
		{s.HTTPClient != nil, "WithHTTPClient"},
		{s.Logger != nil, "WithLogger"},
		{s.Policy != (transport.Policy{}), "WithRetry"},
		{s.UserAgent != "", "WithUserAgent"},
		{s.AllowInsecure, "WithInsecureHTTP"},
		{s.Limiter != nil, "WithRateLimiter"},
	} {
		if o.set {
			owned = append(owned, "legacy."+o.name)
		}
	}
	if len(owned) > 0 {
		return nil, errors.New("sendloop/legacy: " + strings.Join(owned, ", ") +
			": the legacy client of a sendloop.Client shares the root client's settings; give the root package's option instead")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return newClient(root.Derive(pkgName, userAgent, keySpellings), cfg), nil
}

package legacy

import "github.com/go-sendloop/sendloop/internal/transport"

// SharedSetting returns the name of the option o is ("WithBaseURL", …) when it sets one of
// the settings that the legacy client of a sendloop.Client takes from the root client: the
// base URL, the HTTP client, the logger, the retry policy, the User-Agent product, the rate
// limiter, plain http and the observer. It returns "" for a legacy-only option (WithInputForm,
// WithMaxMediaSize, WithMaxChartDays, WithSecrets), for one that sets nothing (a nil
// HTTP client, a zero RetryPolicy) and for nil. sendloop.NewClient refuses an option of
// the first kind in sendloop.WithLegacyOptions rather than ignore it.
func (o Option) SharedSetting() string {
	if o == nil {
		return ""
	}
	var cfg config
	o(&cfg)
	s := cfg.Settings
	for _, setting := range []struct {
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
		{s.Observer != nil, "WithObserver"},
	} {
		if setting.set {
			return setting.name
		}
	}
	return ""
}

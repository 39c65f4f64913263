package transport

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHostOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{"https://acme.sendloop.com/api/v3/account.info.get/json", "acme.sendloop.com"},
		{"http://127.0.0.1:8080/api/index.php?APIKey=secret", "127.0.0.1:8080"},
		{"http://[::1]:9/x", "[::1]:9"},
		{"https://user:pass@host.example/p", "host.example"},
		{"https://host.example?q=1", "host.example"},
		{"https://host.example#f", "host.example"},
		{"no scheme/path", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, hostOf(tt.raw))
		})
	}
}

// FuzzHostOf: hostOf gives url.Parse's Host for every URL it parses with a scheme (and no
// escapes, which url.Parse decodes), never user information, and never allocates.
func FuzzHostOf(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "http://u:p@h:1/?q#f", "http://[::1]/", "x://@/", "http://a%2eb/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := hostOf(raw)
		if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Opaque == "" && !strings.Contains(raw, "%") &&
			strings.HasPrefix(raw, u.Scheme+"://") {
			assert.Equal(t, u.Host, got)
		}
		assert.NotContains(t, got, "@")
		assert.Zero(t, testing.AllocsPerRun(1, func() { _ = hostOf(raw) }))
	})
}

package transport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckBaseURLRefusesTheAPIsOwnPath: the clients append /api/v3/<command>/json and
// /api/index.php themselves, so a base URL that ends in either (or in /api/v4) would send
// every call to a page that does not exist; any other path is a proxy's prefix.
func TestCheckBaseURLRefusesTheAPIsOwnPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    string // the checked URL, when accepted
		wantErr string // a part of the error, when refused
	}{
		{raw: "https://acme.sendloop.com", want: "https://acme.sendloop.com"},
		{raw: "https://acme.sendloop.com/", want: "https://acme.sendloop.com"},
		{raw: " https://proxy.example/sendloop/ ", want: "https://proxy.example/sendloop"},
		{raw: "https://proxy.example/api", want: "https://proxy.example/api"},
		{raw: "https://proxy.example/api/", want: "https://proxy.example/api"},
		{raw: "https://proxy.example/api/v2", want: "https://proxy.example/api/v2"},
		{raw: "https://proxy.example/api/v3x", want: "https://proxy.example/api/v3x"},
		{raw: "https://proxy.example/v3", want: "https://proxy.example/v3"},
		{raw: "https://proxy.example/rapi/v3", want: "https://proxy.example/rapi/v3"},
		{raw: "https://proxy.example/api/index.html", want: "https://proxy.example/api/index.html"},
		{raw: "https://acme.sendloop.com/api/v3", wantErr: "ends in the API's own path /api/v3: give the host (and any proxy prefix) only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/v3/", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/v3/json", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/v3/list.get/json", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/API/V3", wantErr: "own path /API/V3:"},
		{raw: "https://acme.sendloop.com/api/v4", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/v4/", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/v4/json", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/index.php", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://acme.sendloop.com/api/index.php/", wantErr: "only, https://acme.sendloop.com;"},
		{raw: "https://proxy.example/sendloop/api/v3/", wantErr: "only, https://proxy.example/sendloop;"},
		{raw: "https://proxy.example/api/api/v3", wantErr: "only, https://proxy.example/api;"},
		{raw: "https://proxy.example:8443/x/api/index.php", wantErr: "only, https://proxy.example:8443/x;"},
		{raw: "http://127.0.0.1:8080/api/v3", wantErr: "only, http://127.0.0.1:8080;"},
		// An empty query or fragment still ends the URL: the paths appended after it would
		// land in the query.
		{raw: "https://acme.sendloop.com/?", wantErr: "a query or a fragment"},
		{raw: "https://acme.sendloop.com?", wantErr: "a query or a fragment"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			got, err := CheckBaseURL(tt.raw, false)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr == "" && got != tt.want:
				t.Fatalf("got %q, want %q", got, tt.want)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("accepted as %q, want an error with %q", got, tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q lacks %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzAPIPathIndex(f *testing.F) {
	for _, seed := range []string{"", "/", "/api", "/api/", "/api/v3", "/x/API/v4/json", "//api//v3", "/api/index.php/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		i := APIPathIndex(path)
		if i < -1 || i >= len(path) {
			t.Fatalf("APIPathIndex(%q) = %d: out of range", path, i)
		}
		if i >= 0 && !strings.HasPrefix(strings.ToLower(path[i:]), "/api/") {
			t.Fatalf("APIPathIndex(%q) = %d: not at /api/", path, i)
		}
	})
}

// TestIsLoopback pins the one rule of what names this machine, which the clients, the
// relay and the CLI share.
func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "app.localhost": true, "A.B.LocalHost": true,
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true,
		"example.com": false, "10.0.0.1": false, "::2": false, "128.0.0.1": false,
		"localhost.example.com": false, "notlocalhost": false, "": false,
	} {
		assert.Equal(t, want, IsLoopback(host), host)
	}
}

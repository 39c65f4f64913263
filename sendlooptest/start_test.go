package sendlooptest

import (
	"net"
	"net/http"
	"net/url"
	"testing"
)

// testing.TB satisfies TB, so every *testing.T, *testing.B and *testing.F caller compiles.
var _ TB = testing.TB(nil)

// recordingTB is a TB that records what the fake asked of it.
type recordingTB struct {
	cleanups []func()
	fatal    string
}

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Fatalf(format string, args ...any) { r.fatal = format }

func TestConstructors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start func(t *testing.T) (srv *Server, closeByHand bool)
	}{
		{name: "NewServer(t)", start: func(t *testing.T) (*Server, bool) { return NewServer(t), false }},
		{name: "NewServer(nil)", start: func(*testing.T) (*Server, bool) { return NewServer(nil), true }},
		{name: "Start", start: func(t *testing.T) (*Server, bool) {
			srv, err := Start(WithAPIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			return srv, true
		}},
		{name: "Start with a listener", start: func(t *testing.T) (*Server, bool) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv, err := Start(WithListener(ln))
			if err != nil {
				t.Fatal(err)
			}
			if srv.URL != "http://"+ln.Addr().String() {
				t.Errorf("URL = %s, want the listener's address %s", srv.URL, ln.Addr())
			}
			return srv, true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, byHand := tt.start(t)
			if byHand {
				defer srv.Close()
			}
			status, body := post(t, srv, "/api/v3/System.SystemDate.Get/json", url.Values{"APIKey": {srv.APIKey}})
			if status != 200 || body == "" {
				t.Fatalf("status %d, body %q", status, body)
			}
			relay, err := srv.StartRelay(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := relay.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNewServerRegistersItsClose checks that NewServer and StartRelay hand their Close to
// the TB, and report nothing when all goes well.
func TestNewServerRegistersItsClose(t *testing.T) {
	t.Parallel()
	var tb recordingTB
	srv := NewServer(&tb)
	if _, err := srv.StartRelay(&tb); err != nil {
		t.Fatal(err)
	}
	if len(tb.cleanups) != 2 || tb.fatal != "" {
		t.Fatalf("%d cleanups, fatal %q; want 2 cleanups and no failure", len(tb.cleanups), tb.fatal)
	}
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
	if resp, err := http.Post(srv.URL+"/api/v3/System.SystemDate.Get/json", "text/plain", nil); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after the cleanups ran")
	}
}

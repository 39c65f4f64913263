package transport

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPolicyDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Policy
		want Policy
	}{
		{"zero", Policy{}, Policy{DefaultMaxRetries, DefaultMinWait, DefaultMaxWait, DefaultMaxRetryAfter}},
		{"disabled", Policy{MaxRetries: -1}, Policy{0, DefaultMinWait, DefaultMaxWait, DefaultMaxRetryAfter}},
		{"max below min", Policy{MaxRetries: 2, MinWait: time.Second, MaxWait: time.Millisecond}, Policy{2, time.Second, time.Second, DefaultMaxRetryAfter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.in.WithDefaults())
		})
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	t.Parallel()
	for attempt := 0; attempt < 70; attempt++ {
		for i := 0; i < 50; i++ {
			w := Backoff(10*time.Millisecond, time.Second, attempt)
			full := min(10*time.Millisecond<<min(attempt, 20), time.Second)
			require.GreaterOrEqual(t, w, full/2, "attempt %d", attempt)
			require.LessOrEqual(t, w, full, "attempt %d", attempt)
		}
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		seen[Backoff(time.Second, time.Minute, 3)] = true
	}
	assert.Greater(t, len(seen), 1, "waits are jittered")
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, false},
		{"5", 5 * time.Second, true},
		{" 0 ", 0, true},
		{"-3", 0, true},
		{"Sat, 21 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sat, 21 Nov 2026 11:00:00 GMT", 0, true},
		{"soon", 0, false},
		{"99999999999999", 365 * 24 * time.Hour, true},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.value != "" {
			h.Set("Retry-After", tt.value)
		}
		got, ok := RetryAfter(h, now)
		assert.Equal(t, tt.ok, ok, tt.value)
		assert.Equal(t, tt.want, got, tt.value)
	}
}

func TestRetryableError(t *testing.T) {
	t.Parallel()
	dial := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	reset := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
	cert := &url.Error{Op: "Post", URL: "https://x", Err: x509.UnknownAuthorityError{}}
	tests := []struct {
		name string
		err  error
		want map[Class]bool
	}{
		{"dial", dial, map[Class]bool{Read: true, Idempotent: true, OneShot: true}},
		{"reset", reset, map[Class]bool{Read: true, Idempotent: true, OneShot: false}},
		{"eof", io.ErrUnexpectedEOF, map[Class]bool{Read: true, Idempotent: true, OneShot: false}},
		{"unknown certificate authority", cert, map[Class]bool{Read: false, Idempotent: false, OneShot: false}},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), map[Class]bool{Read: false, Idempotent: false, OneShot: false}},
	}
	for _, tt := range tests {
		for class, want := range tt.want {
			assert.Equal(t, want, retryableError(tt.err, class), "%s for %s", tt.name, class)
		}
	}
}

func TestClassString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "read", Read.String())
	assert.Equal(t, "idempotent", Idempotent.String())
	assert.Equal(t, "one-shot", OneShot.String())
	assert.Equal(t, "class(9)", Class(9).String())
}

func TestRedactErrorHidesSecretsAndKeepsCause(t *testing.T) {
	t.Parallel()
	c := New(Config{Secrets: []string{"s3cr3t key"}})
	err := &url.Error{Op: "Get", URL: "http://x/api?APIKey=s3cr3t+key", Err: context.DeadlineExceeded}
	red := c.redactError(err)
	assert.NotContains(t, red.Error(), "s3cr3t")
	assert.Contains(t, red.Error(), "[REDACTED]")
	assert.ErrorIs(t, red, context.DeadlineExceeded)
	for e := red; e != nil; e = errors.Unwrap(e) {
		assert.NotContains(t, e.Error(), "s3cr3t")
	}
	plain := errors.New("no secret here")
	assert.Same(t, plain, c.redactError(plain))
}

func TestDoKeepsTheFinalBodyAndLogsOnlyWhatItMay(t *testing.T) {
	t.Parallel()
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body, _ := io.ReadAll(r.Body)
		assert.Equal(t, "APIKey=top-secret", string(body), "the body is resent whole on each attempt")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "busy, try later")
	}))
	defer hs.Close()
	var logs bytes.Buffer
	c := New(Config{
		Logger:  slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Policy:  Policy{MaxRetries: 2, MinWait: time.Millisecond, MaxWait: time.Millisecond},
		Secrets: []string{"top-secret"},
	})
	resp, err := c.Do(context.Background(), &Request{Command: "x.get", Class: Read, Method: http.MethodPost,
		URL: hs.URL + "/api", Body: []byte("APIKey=top-secret"), ContentType: "application/x-www-form-urlencoded"})
	require.NoError(t, err)
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "busy, try later", string(resp.Body))
	assert.Equal(t, 3, resp.Attempts)
	assert.Equal(t, 3, calls)

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 3)
	for i, line := range lines {
		assert.Contains(t, line, `"command":"x.get"`)
		assert.Contains(t, line, fmt.Sprintf(`"attempt":%d`, i+1))
		assert.Contains(t, line, `"status":503`)
		assert.Contains(t, line, `"duration"`)
		assert.NotContains(t, line, "top-secret")
		assert.NotContains(t, line, hs.URL, "no URL is logged")
	}
}

func TestDoRefusesAnOversizedBody(t *testing.T) {
	t.Parallel()
	// The body comes from memory, without a server, and the bound is 1 MiB rather than
	// MaxBodySize: reading 64 MiB took seconds, and over a minute under -race through a
	// loopback socket on a loaded machine. The bound's value is checked apart.
	const limit = 1 << 20
	var read atomic.Int64
	endless := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Request: req,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   io.NopCloser(countingReader{&read})}, nil
	})
	c := New(Config{HTTPClient: &http.Client{Transport: endless}, maxBody: limit})
	_, err := c.Do(context.Background(), &Request{Command: "big.get", Method: http.MethodGet, URL: "http://127.0.0.1:1"})
	require.ErrorContains(t, err, fmt.Sprintf("larger than %d bytes", limit))
	assert.LessOrEqual(t, read.Load(), int64(2*(limit+1)), "the body is read no further than the limit (on each attempt)")
	assert.Equal(t, int64(64<<20), New(Config{}).maxBody, "the default bound")
}

// countingReader is an endless body of x's that counts what is read of it.
type countingReader struct{ n *atomic.Int64 }

// xs is copied rather than written byte by byte: the race detector checks a copy once.
var xs = bytes.Repeat([]byte("x"), 64<<10)

func (r countingReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], xs)
	}
	r.n.Add(int64(n))
	return n, nil
}

// TestDefaultTransportKeepsConnectionsOfConcurrentCalls sends rounds of four calls at once
// (the handler holds each until the round's four have arrived): between rounds the default
// transport must keep all four connections, not close those above net/http's 2 idle ones,
// which dials at least 2 more a round (22 in all). A connection handed back to the pool a
// moment after its call returned may cost a dial or two more: hence the margin.
func TestDefaultTransportKeepsConnectionsOfConcurrentCalls(t *testing.T) {
	t.Parallel()
	const calls, rounds = 4, 10
	barriers := make([]sync.WaitGroup, rounds)
	for i := range barriers {
		barriers[i].Add(calls)
	}
	var dialed atomic.Int32
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		round, _ := strconv.Atoi(r.URL.Query().Get("round"))
		barriers[round].Done()
		barriers[round].Wait()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Success":true}`)
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	hs.Start()
	defer hs.Close()
	c := New(Config{})
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		for i := 0; i < calls; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Do(context.Background(), &Request{Command: "x.get", Method: http.MethodGet,
					URL: hs.URL + "?round=" + strconv.Itoa(round)})
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
	}
	assert.LessOrEqual(t, dialed.Load(), int32(2*calls), "connections dialed for %d rounds of %d calls", rounds, calls)
}

// TestDeclaredLengthIsNotAllocatedBeforeTheBytesCome serves bodies that promise more than
// they send, and bodies that promise more than the bound: the memory read follows the bytes
// that arrive, and an over-long promise is refused at once.
func TestDeclaredLengthIsNotAllocatedBeforeTheBytesCome(t *testing.T) {
	tests := []struct {
		name     string
		declared int64
		sent     string
		wantErr  error // nil: any read error
		wantBody string
	}{
		{name: "honest small body", declared: 5, sent: "hello", wantBody: "hello"},
		{name: "promises 60 MiB, sends 10 bytes", declared: 60 << 20, sent: "0123456789"},
		{name: "promises more than the bound", declared: MaxBodySize + 1, sent: "x", wantErr: errBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				defer conn.Close()
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", tt.declared, tt.sent)
				buf.Flush()
			}))
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			body, err := readBody(resp, MaxBodySize)
			runtime.ReadMemStats(&after)
			if tt.wantBody != "" {
				if err != nil || string(body) != tt.wantBody {
					t.Fatalf("readBody = %q, %v; want %q", body, err, tt.wantBody)
				}
				return
			}
			if err == nil {
				t.Fatalf("readBody of a body that broke its promise = %d bytes, no error", len(body))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 8<<20 {
				t.Errorf("allocated %d bytes for a body that sent %d", allocated, len(tt.sent))
			}
		})
	}
}

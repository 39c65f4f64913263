// Package testkit holds what tests of several packages share: a log buffer safe for
// concurrent writes, a debug logger writing to one, a retry policy that never sleeps long,
// an address nothing listens on, a context that ends when the test says (EndingContext),
// and the walk of the module's tree that every test walking it uses (WalkGoTree). Only test
// files import it; it imports no testing package (nor testify), so that nothing shipped
// could link one through it.
package testkit

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// FastRetry keeps retry waits tiny so that no test sleeps.
var FastRetry = transport.Policy{
	MaxRetries:    3,
	MinWait:       time.Millisecond,
	MaxWait:       2 * time.Millisecond,
	MaxRetryAfter: 50 * time.Millisecond,
}

// SyncBuffer lets concurrent log writes land in one buffer.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// DebugLogger returns a logger at debug level and the buffer it writes to.
func DebugLogger() (*SyncBuffer, *slog.Logger) {
	logs := new(SyncBuffer)
	return logs, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Transport returns an HTTP transport of the test's own, with http.DefaultTransport's
// settings. A test must not send through http.DefaultTransport while others run in
// parallel: every httptest.Server.Close (a sendlooptest fake's too) closes its idle
// connections and cancels its dials, and a request that was about to use one fails with
// "http: CloseIdleConnections called".
func Transport() *http.Transport { return http.DefaultTransport.(*http.Transport).Clone() }

// DeadURL returns an http URL on loopback where nothing listens: a dial there fails.
func DeadURL() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return "http://" + addr, nil
}

// Context returns a background context, bounded by timeout when it is positive.
func Context(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(context.Background(), timeout)
	}
	return context.WithCancel(context.Background())
}

// ParallelWaits raises go test's -parallel to twice GOMAXPROCS, unless the command line
// gave it, for a package whose parallel tests mostly wait (on a subprocess, a per-attempt
// timeout): with the default, GOMAXPROCS tests at once, a core sits idle while they wait.
// TestMain calls it after flag.Parse.
func ParallelWaits() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

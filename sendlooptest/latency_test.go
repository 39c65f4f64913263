package sendlooptest

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timedPost sends a request to path and returns how long the answer took.
func timedPost(t *testing.T, hc *http.Client, srv *Server, path string) time.Duration {
	t.Helper()
	start := time.Now()
	resp, err := hc.Post(srv.URL+path, "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"APIKey": {srv.APIKey}}.Encode()))
	if !assert.NoError(t, err) {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start)
}

func TestLatencyHoldsEveryAPIBack(t *testing.T) {
	t.Parallel()
	const d, jitter = 40 * time.Millisecond, 20 * time.Millisecond
	srv := NewServer(t, WithLatency(d, jitter))
	for _, path := range []string{
		"/api/v3/system.systemdate.get/json", // v3
		"/api/v4/person.json",                // person (v4)
		LegacyPath,                           // legacy
		"/api/v3/no.such.command/json",       // refused, but still over the link
	} {
		took := timedPost(t, srv.hs.Client(), srv, path)
		assert.GreaterOrEqual(t, took, d, path)
		// Time is what is tested: held back once, not for ever nor once per step. The
		// bound is 40 times the median under -race (50 ms, 20 runs).
		assert.Less(t, took, 2*time.Second, path)
	}

	srv.SetLatency(0, 0)
	// Not timed: a request on a busy machine can take longer than d without any latency.
	assert.Zero(t, srv.latency.next(), "SetLatency(0, 0) removes it")
	timedPost(t, srv.hs.Client(), srv, "/api/v3/system.systemdate.get/json")
}

func TestLatencyJitterIsBoundedAndVaries(t *testing.T) {
	t.Parallel()
	l := newLatency(10*time.Millisecond, 5*time.Millisecond)
	seen := map[time.Duration]bool{}
	for range 200 {
		d := l.next()
		require.GreaterOrEqual(t, d, 10*time.Millisecond)
		require.LessOrEqual(t, d, 15*time.Millisecond)
		seen[d] = true
	}
	assert.Greater(t, len(seen), 100, "the jitter is random")

	again := newLatency(10*time.Millisecond, 5*time.Millisecond)
	first := newLatency(10*time.Millisecond, 5*time.Millisecond)
	for range 10 {
		assert.Equal(t, first.next(), again.next(), "seeded: the same sequence in every run")
	}
	assert.Equal(t, time.Duration(0), (&latency{}).next(), "the zero latency holds nothing back")
}

// TestLatencyIsSpentOutsideTheLock proves that concurrent requests overlap: with a latency
// that holds every answer back for an hour, 16 requests at once all reach the server (its
// request hook runs after the state lock is released, before the latency), which they
// could not if the first one waited out its latency holding the lock. No duration is
// measured: a busy machine cannot break it.
func TestLatencyIsSpentOutsideTheLock(t *testing.T) {
	t.Parallel()
	const n = 16
	var arrived atomic.Int32
	srv := NewServer(t, WithLatency(time.Hour, 0), WithRequestHook(func(Request) { arrived.Add(1) }))
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v3/subscriber.browse/json",
				strings.NewReader(url.Values{"APIKey": {srv.APIKey}}.Encode()))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
				t.Error("an answer came before its hour of latency")
			}
		}()
	}
	// Polled, as nothing tells when a request is held; the minute only bounds how long a
	// failing test waits.
	assert.Eventually(t, func() bool { return arrived.Load() == n }, time.Minute, time.Millisecond,
		"requests held back by the latency of another")
	cancel()
	wg.Wait()
	assert.Equal(t, int32(n), arrived.Load(), "requests held back by the latency of another")
}

// TestRelayLatencyHoldsEveryReplyBack: the greeting and each reply come one latency later.
func TestRelayLatencyHoldsEveryReplyBack(t *testing.T) {
	t.Parallel()
	const d = 40 * time.Millisecond
	tests := []struct {
		name  string
		start func(t *testing.T) (*Relay, error)
	}{
		{"RelayLatency", func(t *testing.T) (*Relay, error) {
			return StartRelay(t, "u", "p", RelayWithoutSTARTTLS(), RelayLatency(d, 0))
		}},
		{"the server's", func(t *testing.T) (*Relay, error) {
			return NewServer(t, WithLatency(d, 0)).StartRelay(t, RelayWithoutSTARTTLS())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			relay, err := tt.start(t)
			require.NoError(t, err)
			start := time.Now()
			conn, err := net.Dial("tcp", relay.Addr())
			require.NoError(t, err)
			defer conn.Close()
			r := bufio.NewReader(conn)
			// readReply reads a whole reply, its continuation lines included.
			readReply := func() string {
				var last string
				for {
					line, err := r.ReadString('\n')
					require.NoError(t, err)
					if last = line; len(line) < 4 || line[3] != '-' {
						return last
					}
				}
			}
			assert.True(t, strings.HasPrefix(readReply(), "220"))
			assert.GreaterOrEqual(t, time.Since(start), d, "the greeting")
			for _, cmd := range []string{"EHLO client.example", "NOOP", "RSET"} {
				start := time.Now()
				_, err := io.WriteString(conn, cmd+"\r\n")
				require.NoError(t, err)
				reply := readReply()
				took := time.Since(start)
				assert.True(t, strings.HasPrefix(reply, "250"), "%s: %q", cmd, reply)
				assert.GreaterOrEqual(t, took, d, cmd)
				// Held back once and not for ever. The bound is far above the median under
				// -race (45 ms, 20 runs).
				assert.Less(t, took, 2*time.Second, cmd)
			}
			// One delay for each reply, not one for each of its lines (the EHLO reply has
			// several): counted, not timed.
			relay.latency.mu.Lock()
			defer relay.latency.mu.Unlock()
			assert.Equal(t, 4, relay.latency.draws, "the greeting and three replies")
		})
	}
}

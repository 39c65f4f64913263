package sendlooptest

import (
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// latencySeed seeds the jitter of every latency: the same sequence of delays in every run.
const latencySeed = 25

// latency holds answers back as a link to a distant service does: base plus a random
// jitter of up to jitter, drawn from a generator with a fixed seed. The zero value holds
// nothing back. It is safe for concurrent use; the delay itself is spent by the caller,
// outside any lock, so that concurrent requests overlap as they would over a real link.
type latency struct {
	mu           sync.Mutex
	base, jitter time.Duration
	rng          *rand.Rand
	draws        int // the delays drawn: a test counts the answers held back without a clock
}

func newLatency(base, jitter time.Duration) *latency {
	l := &latency{}
	l.set(base, jitter)
	return l
}

// set replaces the delays; a negative one counts as 0.
func (l *latency) set(base, jitter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base, l.jitter = max(base, 0), max(jitter, 0)
	if l.rng == nil {
		l.rng = rand.New(rand.NewPCG(latencySeed, latencySeed))
	}
}

// next draws the delay of the next answer.
func (l *latency) next() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draws++
	d := l.base
	if l.jitter > 0 {
		d += time.Duration(l.rng.Int64N(int64(l.jitter) + 1))
	}
	return d
}

// WithLatency holds every answer of the server back by d plus a random jitter of up to
// jitter (uniform, from a generator with a fixed seed): v3, person (v4) and legacy
// requests alike, and every reply of the relay that StartRelay starts. It is the way to see
// how a job behaves over a real link, where the service is tens of milliseconds away and
// the number of calls in flight decides the wall time: each request waits on its own,
// outside the server's lock, so concurrent requests overlap as they would there. It comes
// on top of a Fault's Delay. SetLatency changes it later.
func WithLatency(d, jitter time.Duration) Option {
	return func(s *Server) { s.latency.set(d, jitter) }
}

// SetLatency changes the latency of WithLatency, for the requests that arrive from now on
// and for the replies of the relays StartRelay started; 0, 0 removes it.
func (s *Server) SetLatency(d, jitter time.Duration) { s.latency.set(d, jitter) }

// RelayLatency holds every reply of the relay back by d plus a random jitter of up to
// jitter, as WithLatency does for the API: the first reply after each command (or each
// batch of pipelined commands, or the TLS handshake's messages) waits, as one round trip
// over a real link would. Server.StartRelay gives its relay the server's latency unless
// this option says otherwise.
func RelayLatency(d, jitter time.Duration) RelayOption {
	return func(c *relayConfig) { c.latency = newLatency(d, jitter) }
}

// latentConn holds the first write after each read back by the relay's latency: each
// reply, as the client sees it, comes one round trip after its command.
type latentConn struct {
	net.Conn
	latency *latency
	closing <-chan struct{} // ends a delay when the relay closes
	read    atomic.Bool     // a read came since the last reply began (true at first: the greeting waits too)
}

func newLatentConn(c net.Conn, l *latency, closing <-chan struct{}) *latentConn {
	lc := &latentConn{Conn: c, latency: l, closing: closing}
	lc.read.Store(true)
	return lc
}

func (c *latentConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}

func (c *latentConn) Write(p []byte) (int, error) {
	if c.read.Swap(false) {
		if d := c.latency.next(); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.closing:
				t.Stop()
			}
		}
	}
	return c.Conn.Write(p)
}

// sleep waits d or until the client goes away; it reports whether to go on. It holds
// answers back for a Fault's Delay and for the latency.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

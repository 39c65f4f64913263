package smtp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// pool holds the open connections of a Relay. slots bounds the connections
// open at once (idle or in use); idle holds the ones ready for a message.
type pool struct {
	slots  chan struct{}
	mu     sync.Mutex
	idle   []*session
	closed bool
	// noSTARTTLS remembers that the server offered no STARTTLS (and plain text is
	// allowed), so that later connections skip the probe connection; a plain-text
	// connection that is offered STARTTLS clears it.
	noSTARTTLS atomic.Bool
}

// session is one authenticated connection to the relay.
type session struct {
	client  *gosmtp.Client
	conn    *ctxConn
	used    int       // transactions started
	broken  bool      // not to be used again
	clean   bool      // no transaction open: the last one ended with the reply to its final dot, or RSET
	idle    time.Time // when it was last returned to the pool
	utf8    bool      // the server offers SMTPUTF8
	maxSize int       // the server's SIZE; 0 when none
}

func (s *session) quit() {
	// Bound through the context, not the connection's deadline: go-smtp sets its own
	// five-minute deadline on QUIT, which the binding caps.
	ctx, cancel := context.WithTimeout(context.Background(), quitTimeout)
	defer cancel()
	release := s.conn.bind(ctx)
	if err := s.client.Quit(); err != nil {
		_ = s.client.Close()
	}
	release()
}

// ctxConn is a connection whose deadlines never pass the deadline of the
// context of the current step: go-smtp sets its own per-command deadlines,
// and clears them after each command.
type ctxConn struct {
	net.Conn
	mu       sync.Mutex
	deadline time.Time
}

func (c *ctxConn) clamp(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.deadline.IsZero() && (t.IsZero() || c.deadline.Before(t)) {
		return c.deadline
	}
	return t
}

func (c *ctxConn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.clamp(t)) }
func (c *ctxConn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.clamp(t)) }
func (c *ctxConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

// bind makes ctx's deadline bound every read and write, and ctx's
// cancellation close the connection (a deadline does not see a
// cancellation), until the returned function is called. That function
// reports false if ctx ended meanwhile and closed the connection.
func (c *ctxConn) bind(ctx context.Context) func() bool {
	deadline, _ := ctx.Deadline()
	c.mu.Lock()
	c.deadline = deadline
	c.mu.Unlock()
	_ = c.Conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.Conn.Close() })
	return func() bool {
		stopped := stop()
		c.mu.Lock()
		c.deadline = time.Time{}
		c.mu.Unlock()
		_ = c.Conn.SetDeadline(time.Time{})
		return stopped
	}
}

// probeAfter is the idle time after which a connection is checked with RSET
// before its next message.
const probeAfter = 2 * time.Second

// acquire takes a free slot and returns an idle connection, or a new one.
//
// Between messages on one connection, RSET is sent only where it does
// something: when the previous transaction did not reach the reply to its
// final dot (it was aborted), and, as a check that the server still holds
// the connection, when the connection sat idle for probeAfter. After a
// completed transaction the server has already cleared its state (RFC 5321,
// section 4.1.1.4), and go-smtp follows its RSET with a new EHLO, so an RSET
// there would cost two round trips per message for nothing: a reused
// connection sends messages twice as fast without it.
func (r *Relay) acquire(ctx context.Context, b *bulk) (*session, error) {
	select {
	case r.pool.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("sendloop/smtp: waiting for a connection: %w", ctx.Err())
	}
	for {
		r.pool.mu.Lock()
		if r.pool.closed {
			r.pool.mu.Unlock()
			<-r.pool.slots
			return nil, ErrRelayClosed
		}
		var s *session
		if n := len(r.pool.idle); n > 0 {
			s, r.pool.idle = r.pool.idle[n-1], r.pool.idle[:n-1]
		}
		r.pool.mu.Unlock()
		if s == nil {
			break
		}
		if s.clean && time.Since(s.idle) < probeAfter {
			return s, nil
		}
		// RSET where a transaction may be open, or after a long idle time:
		// it also tells a connection the server closed meanwhile, which is
		// replaced without counting an attempt.
		release := s.conn.bind(ctx)
		err := s.client.Reset()
		if release() && err == nil {
			s.clean = true
			return s, nil
		}
		r.log(ctx, slog.LevelDebug, "smtp: idle connection unusable, reconnecting", slog.Any("error", r.redact(err)))
		_ = s.client.Close()
		if ctx.Err() != nil {
			<-r.pool.slots
			return nil, fmt.Errorf("sendloop/smtp: %w", ctx.Err())
		}
	}
	// A setup failure that will not change is recorded before the slot is
	// freed, so that the other messages of a SendAll do not try again.
	if err := b.failed(); err != nil {
		<-r.pool.slots
		return nil, err
	}
	s, err := r.dial(ctx)
	if err != nil {
		err = r.redact(err)
		if !isTemporarySetup(err) && ctx.Err() == nil {
			b.fail(err)
		}
		<-r.pool.slots
		return nil, err
	}
	return s, nil
}

// release returns s to the idle connections, or closes it, and frees its
// slot.
func (r *Relay) release(s *session) {
	defer func() { <-r.pool.slots }()
	if !s.broken && (r.maxPerConn == 0 || s.used < r.maxPerConn) {
		s.idle = time.Now()
		r.pool.mu.Lock()
		if !r.pool.closed {
			r.pool.idle = append(r.pool.idle, s)
			r.pool.mu.Unlock()
			return
		}
		r.pool.mu.Unlock()
	}
	if s.broken {
		_ = s.client.Close()
		return
	}
	s.quit()
}

// errPlaintext tells dial that the server offers no STARTTLS and plain text
// is allowed: go-smtp closed the connection, so dial opens another.
var errPlaintext = errors.New("no STARTTLS: plain text")

// errSTARTTLSOffered tells dial that a connection opened for plain text was
// offered STARTTLS: nothing may then go in clear, so dial starts over with TLS.
var errSTARTTLSOffered = errors.New("STARTTLS offered on a plain-text connection")

// ErrSTARTTLSFlapping is returned when the server offers STARTTLS on one
// connection and not on the next: the sender will not guess which to trust.
var ErrSTARTTLSFlapping = errors.New("sendloop/smtp: the server offers STARTTLS on some connections and not on others")

// quitTimeout bounds the QUIT that ends a connection. A variable: the tests shorten it, to
// wait out a QUIT that never answers in less time.
var quitTimeout = 2 * time.Second

// dial connects, upgrades to TLS, says EHLO and authenticates.
func (r *Relay) dial(ctx context.Context) (*session, error) {
	s, err := r.dialOnce(ctx, r.pool.noSTARTTLS.Load())
	if errors.Is(err, errPlaintext) {
		r.log(ctx, slog.LevelDebug, "smtp: no STARTTLS offered, continuing in plain text")
		r.pool.noSTARTTLS.Store(true)
		s, err = r.dialOnce(ctx, true)
	}
	if errors.Is(err, errSTARTTLSOffered) {
		r.pool.noSTARTTLS.Store(false)
		if s, err = r.dialOnce(ctx, false); errors.Is(err, errPlaintext) {
			return nil, ErrSTARTTLSFlapping
		}
	}
	return s, err
}

func (r *Relay) dialOnce(ctx context.Context, plaintext bool) (s *session, err error) {
	r.log(ctx, slog.LevelDebug, "smtp: dial")
	dialer := net.Dialer{Timeout: r.dialTimeout}
	raw, err := dialer.DialContext(ctx, "tcp", r.addr)
	if err != nil {
		return nil, r.ctxError(ctx, "dial", err)
	}
	conn := &ctxConn{Conn: raw}
	release := conn.bind(ctx)
	defer func() {
		if !release() && err == nil {
			err = fmt.Errorf("sendloop/smtp: connecting to %s: %w", r.addr, ctx.Err())
		}
		if err != nil {
			conn.Close()
		}
	}()
	client, err := r.connect(ctx, conn, plaintext)
	if err != nil {
		return nil, err
	}
	s = &session{client: client, conn: conn, clean: true}
	s.utf8, _ = client.Extension("SMTPUTF8")
	s.maxSize, _ = client.MaxMessageSize()
	if err := r.authenticate(ctx, client); err != nil {
		_ = client.Quit()
		return nil, err
	}
	return s, nil
}

// connect returns a client past EHLO, over TLS unless plaintext.
func (r *Relay) connect(ctx context.Context, conn *ctxConn, plaintext bool) (*gosmtp.Client, error) {
	var client *gosmtp.Client
	switch {
	case r.implicitTLS:
		tlsConn := tls.Client(conn, r.tlsConfig)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			return nil, r.ctxError(ctx, "TLS handshake", err)
		}
		client = gosmtp.NewClient(tlsConn)
	case plaintext:
		client = gosmtp.NewClient(conn)
	default:
		r.log(ctx, slog.LevelDebug, "smtp: starttls")
		// NewClientStartTLS says EHLO as "localhost", then STARTTLS; the EHLO
		// after it uses the local name.
		var err error
		client, err = gosmtp.NewClientStartTLS(conn, r.tlsConfig)
		if err != nil {
			var goErr *gosmtp.SMTPError
			if errors.As(err, &goErr) || !strings.Contains(err.Error(), errNoSTARTTLS) {
				return nil, r.commandError(ctx, "STARTTLS", err)
			}
			if !r.plaintextOK() {
				return nil, ErrInsecureAuth
			}
			return nil, errPlaintext
		}
	}
	if err := client.Hello(r.localName); err != nil {
		return nil, r.commandError(ctx, "EHLO", err)
	}
	if offered, _ := client.Extension("STARTTLS"); plaintext && !r.implicitTLS && offered {
		return nil, errSTARTTLSOffered
	}
	return client, nil
}

func (r *Relay) plaintextOK() bool {
	return r.allowPlaintext || (transport.IsLoopback(r.host) && !r.loopbackIsRemote)
}

func (r *Relay) authenticate(ctx context.Context, client *gosmtp.Client) error {
	_, isTLS := client.TLSConnectionState()
	if !isTLS && !r.plaintextOK() {
		return ErrInsecureAuth
	}
	ok, offered := client.Extension("AUTH")
	if !ok {
		return ErrNoAuthMechanism
	}
	auth, mech, err := chooseAuth(offered, r.auth)
	if err != nil {
		return err
	}
	r.log(ctx, slog.LevelDebug, "smtp: auth", slog.String("mechanism", mech), slog.Bool("tls", isTLS))
	if err := client.Auth(auth); err != nil {
		return r.commandError(ctx, "AUTH", err)
	}
	return nil
}

// commandError turns a failed command into an *ReplyError when the server
// replied, or into the context error when ctx ended the session.
func (r *Relay) commandError(ctx context.Context, command string, err error) error {
	var goErr *gosmtp.SMTPError
	if errors.As(err, &goErr) {
		return newReplyError(command, "", goErr, r.redactString)
	}
	return r.ctxError(ctx, command, err)
}

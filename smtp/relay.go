package smtp

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ports of the Sendloop relay. Any port is accepted; 25 and 587 are the
// documented ones, plain SMTP upgraded with STARTTLS. 465 is the port of
// implicit TLS (RFC 8314), used when the Relay is made WithImplicitTLS or
// for port 465.
const (
	PortSMTP        = 25
	PortSubmission  = 587
	PortSubmissions = 465
)

// Defaults of a Relay.
const (
	// DefaultMaxConnections bounds the connections a Relay keeps open at
	// once, and so how many messages it sends in parallel.
	DefaultMaxConnections = 4
	// DefaultMaxRetries is how many times a message is sent again after a
	// temporary failure (a 4xx reply, a connection lost before the final dot).
	DefaultMaxRetries = 2
	// DefaultRetryBackoff is the wait before the first retry; it doubles for
	// each next one.
	DefaultRetryBackoff = time.Second
	// DefaultDialTimeout bounds the time to connect.
	DefaultDialTimeout = 30 * time.Second
)

const redacted = "[REDACTED]"

// Relay sends messages through the Sendloop SMTP relay with the credentials
// of a sender address. It keeps up to WithMaxConnections connections open
// and sends many messages over each, so a Relay should be made once, with
// NewRelay (the zero value is not usable), and closed when done. It is safe
// for concurrent use.
//
// A Relay never prints its password: String, GoString, Format and LogValue
// redact it, and so is every error and log line.
type Relay struct {
	host, addr     string
	port           int
	auth           Auth
	tlsConfig      *tls.Config
	implicitTLS    bool
	allowPlaintext bool
	dialTimeout    time.Duration
	localName      string
	logger         *slog.Logger
	observer       MessageObserver // nil unless WithMessageObserver
	maxConns       int
	maxPerConn     int
	maxRetries     int
	backoff        time.Duration
	maxSize        int
	rate           float64
	burst          int
	limiter        *limiter // nil without WithRate
	// loopbackIsRemote makes tests able to check the no-TLS refusal against a
	// local fake relay.
	loopbackIsRemote bool

	pool *pool
}

// NewRelay returns a Relay for addr, "host:port" (PortSubmission or
// PortSMTP; a bare host means port 587), with the credentials of a Sendloop
// sender address. It makes no connection.
func NewRelay(addr string, auth Auth, opts ...Option) (*Relay, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		host, portText = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), strconv.Itoa(PortSubmission)
	}
	port, err := strconv.Atoi(portText)
	switch {
	case host == "" || strings.ContainsAny(host, " \t\r\n/@"):
		return nil, fmt.Errorf("sendloop/smtp: invalid relay host %q", host)
	case err != nil || port < 1 || port > 65535:
		return nil, fmt.Errorf("sendloop/smtp: invalid relay port %q", portText)
	}
	if err := auth.validate(); err != nil {
		return nil, err
	}
	r := &Relay{
		host:        host,
		port:        port,
		addr:        net.JoinHostPort(host, strconv.Itoa(port)),
		auth:        auth,
		dialTimeout: DefaultDialTimeout,
		localName:   "localhost",
		maxConns:    DefaultMaxConnections,
		maxRetries:  DefaultMaxRetries,
		backoff:     DefaultRetryBackoff,
		implicitTLS: port == PortSubmissions,
	}
	for _, opt := range opts {
		opt(r)
	}
	switch {
	case r.localName == "" || strings.ContainsAny(r.localName, " \t\r\n"):
		return nil, fmt.Errorf("sendloop/smtp: invalid local name %q", r.localName)
	case r.maxConns < 1:
		return nil, fmt.Errorf("sendloop/smtp: WithMaxConnections(%d): want 1 or more", r.maxConns)
	case r.maxRetries < 0 || r.backoff < 0 || r.maxSize < 0 || r.maxPerConn < 0:
		return nil, errors.New("sendloop/smtp: negative retry, size or per-connection setting")
	case r.rate < 0 || math.IsNaN(r.rate) || math.IsInf(r.rate, 0):
		return nil, fmt.Errorf("sendloop/smtp: WithRate(%v, %d): want a finite rate, 0 or more", r.rate, r.burst)
	}
	if r.rate > 0 {
		r.limiter = newLimiter(r.rate, r.burst)
	}
	if r.tlsConfig == nil {
		r.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if r.tlsConfig.ServerName == "" {
		r.tlsConfig.ServerName = r.host
	}
	r.pool = &pool{slots: make(chan struct{}, r.maxConns)}
	return r, nil
}

// Addr returns the relay address, host:port.
func (r *Relay) Addr() string { return r.addr }

// String describes the relay with its password redacted.
func (r Relay) String() string {
	return fmt.Sprintf("smtp.Relay{addr=%s username=%q password=%s}", r.addr, r.auth.Username, redacted)
}

// GoString is String: %#v must not print the password either.
func (r Relay) GoString() string { return r.String() }

// Format makes every fmt verb print String, since verbs such as %d or %x
// would otherwise print the fields, the password included.
func (r Relay) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(r.String())) }

// LogValue logs the relay without its password.
func (r Relay) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", r.addr),
		slog.String("username", r.auth.Username),
		slog.String("password", redacted),
	)
}

// Reply is the server's reply to the final dot of a message: it often
// carries the queue ID, e.g. "250 2.0.0 Ok: queued as 4Bc9X".
type Reply struct {
	// Code is the reply code, 250.
	Code int
	// EnhancedCode is the RFC 3463 status, e.g. "2.0.0", when sent.
	EnhancedCode string
	// Message is the text of the reply, without the codes.
	Message string
}

// String returns the reply as the server wrote it, on one line.
func (r Reply) String() string {
	if r.Code == 0 {
		return ""
	}
	parts := []string{strconv.Itoa(r.Code)}
	if r.EnhancedCode != "" {
		parts = append(parts, r.EnhancedCode)
	}
	if r.Message != "" {
		parts = append(parts, strings.ReplaceAll(r.Message, "\n", "; "))
	}
	return strings.Join(parts, " ")
}

// SendResult is the outcome of sending one message.
type SendResult struct {
	// Index is the position of the message in the sequence given to
	// SendAll or SendAllHooked (0 for Send).
	Index int
	// MessageID is the Message-ID header of the message as sent, with angle
	// brackets: the one given or the one generated. It is set as soon as the
	// message is built, even if sending fails.
	MessageID string
	// Reply is the server's reply to the final dot when the message was
	// accepted.
	Reply Reply
	// Accepted are the recipients the server accepted at RCPT, in envelope
	// order. They got the message only when Delivered reports true: a
	// refusal of the data, or a lost connection, leaves Accepted as it was.
	Accepted []string
	// Refused holds the server's reply to each refused recipient.
	Refused []*ReplyError
	// Attempts is how many times the message was sent (0 when it was never
	// tried: invalid, or the context ended first).
	Attempts int
	// Err is nil when the message was accepted for every recipient. A
	// *RecipientsError matching ErrSomeRecipientsRefused means it was
	// delivered to Accepted only; ErrOutcomeUnknown that it may or may not
	// have been; ErrNotAttempted that SendAll never tried it; ErrRunStopped
	// that SendAllHooked's run stopped before it.
	Err error
}

// refusedBeforeMail reports an error transact returns before MAIL: the
// server's SIZE or its lack of SMTPUTF8.
func refusedBeforeMail(err error) bool {
	var sizeErr *SizeError
	return errors.As(err, &sizeErr) || errors.Is(err, ErrSMTPUTF8Required)
}

// Delivered reports that the server accepted the message for at least one
// recipient.
func (r SendResult) Delivered() bool { return r.Reply.Code != 0 }

// Send delivers msg and returns its Message-ID and the server's reply. It
// takes an open connection of the Relay or opens one: upgraded with STARTTLS
// (or implicit TLS), authenticated with AUTH PLAIN or LOGIN, then MAIL, RCPT
// for every To, Cc and Bcc address, and DATA.
//
// Nothing is sent when msg is invalid (*AddressError, *HeaderError,
// *PartError, *SizeError). Neither the credentials nor the message are sent
// without TLS unless the host is loopback or WithAllowPlaintext
// (ErrInsecureAuth). A temporary failure is retried (WithRetry) on the same
// or a new connection; a connection lost after the final dot and before the
// reply is ErrOutcomeUnknown and is never retried. When the server refuses
// some recipients the message still goes to the others, and the error is a
// *RecipientsError matching ErrSomeRecipientsRefused. ctx bounds every step,
// and its error is returned, wrapped for errors.Is, when it ends the send.
func (r *Relay) Send(ctx context.Context, msg *Message) (SendResult, error) {
	res := r.sendOne(ctx, 0, msg, nil, nil)
	return res, res.Err
}

// Close closes the idle connections (with QUIT) and makes further sends
// fail with ErrRelayClosed. Connections in use close when their send ends.
func (r *Relay) Close() error {
	r.pool.mu.Lock()
	r.pool.closed = true
	idle := r.pool.idle
	r.pool.idle = nil
	r.pool.mu.Unlock()
	for _, s := range idle {
		s.quit()
	}
	return nil
}

// bulk is the state shared by the messages of one SendAll: a setup failure
// that will not change (bad credentials, untrusted certificate, no TLS) ends
// them all without connecting again.
type bulk struct {
	mu       sync.Mutex
	setupErr error
}

func (b *bulk) failed() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.setupErr
}

func (b *bulk) fail(err error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.setupErr == nil {
		b.setupErr = err
	}
}

// sendOne builds and delivers msg; hs, for a message of SendAllHooked, is told of its
// final dot (nil otherwise).
func (r *Relay) sendOne(ctx context.Context, index int, msg *Message, b *bulk, hs *hooked) (res SendResult) {
	if r.observer != nil {
		ev := MessageEvent{Start: time.Now()}
		defer func() { r.observed(ctx, &ev, &res) }()
		res = r.sendMessage(ctx, index, msg, b, hs, &ev)
		return res
	}
	return r.sendMessage(ctx, index, msg, b, hs, nil)
}

// observed tells the observer of a message it has finished with.
func (r *Relay) observed(ctx context.Context, ev *MessageEvent, res *SendResult) {
	ev.End = time.Now()
	ev.Accepted, ev.Refused, ev.Attempts, ev.ReplyCode = len(res.Accepted), len(res.Refused), res.Attempts, res.Reply.Code
	switch {
	case res.Err == nil:
		ev.Outcome = OutcomeDelivered
	case errors.Is(res.Err, ErrSomeRecipientsRefused):
		ev.Outcome = OutcomePartial
	case errors.Is(res.Err, ErrOutcomeUnknown):
		ev.Outcome = OutcomeUnknown
	case errors.Is(res.Err, ErrNotAttempted):
		ev.Outcome = OutcomeNotAttempted
	default:
		ev.Outcome = OutcomeFailed
	}
	r.observer.MessageSent(ctx, *ev)
}

// sendMessage is sendOne; ev, when not nil, receives the envelope's counts and the size.
func (r *Relay) sendMessage(ctx context.Context, index int, msg *Message, b *bulk, hs *hooked, ev *MessageEvent) SendResult {
	res := SendResult{Index: index}
	if msg == nil {
		res.Err = errNilMessage
		return res
	}
	env, err := msg.envelope()
	if err != nil {
		res.Err = err
		return res
	}
	data, msgID, err := msg.build()
	res.MessageID = msgID
	if ev != nil {
		ev.Recipients, ev.Size = len(env.rcpts), len(data)
	}
	if err != nil {
		res.Err = err
		return res
	}
	if r.maxSize > 0 && len(data) > r.maxSize {
		res.Err = &SizeError{Size: len(data), Limit: r.maxSize}
		return res
	}
	if err := ctx.Err(); err != nil {
		res.Err = fmt.Errorf("%w (%w)", ErrNotAttempted, err)
		return res
	}
	r.deliver(ctx, env, data, &res, b, hs)
	if res.Attempts == 0 && ctx.Err() != nil && !errors.Is(res.Err, ErrNotAttempted) {
		res.Err = fmt.Errorf("%w (%w)", ErrNotAttempted, ctx.Err())
	}
	if res.Err != nil {
		res.Err = r.redact(res.Err)
		r.log(ctx, slog.LevelDebug, "smtp: send failed", slog.String("message_id", msgID), slog.Any("error", res.Err))
	} else {
		r.log(ctx, slog.LevelInfo, "smtp: message accepted", slog.String("message_id", msgID),
			slog.String("from", env.from), slog.Int("recipients", len(res.Accepted)), slog.String("reply", res.Reply.String()))
	}
	return res
}

// ctxError reports err, first the context error if ctx ended the session:
// the conn deadline may fire a moment before ctx's own timer.
func (r *Relay) ctxError(ctx context.Context, step string, err error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
			ctxErr = context.DeadlineExceeded
		}
	}
	if ctxErr != nil {
		return fmt.Errorf("sendloop/smtp: %s with %s: %w (%w)", step, r.addr, ctxErr, err)
	}
	return fmt.Errorf("sendloop/smtp: %s with %s: %w", step, r.addr, err)
}

// secrets returns the forms in which the password could appear in a reply
// echoed by a hostile or broken server.
func (r *Relay) secrets() []string {
	return []string{
		r.auth.Password,
		base64.StdEncoding.EncodeToString([]byte(r.auth.Password)),
		base64.StdEncoding.EncodeToString([]byte("\x00" + r.auth.Username + "\x00" + r.auth.Password)),
	}
}

func (r *Relay) redactString(s string) string {
	for _, secret := range r.secrets() {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

func (r *Relay) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.redactString(msg); clean != msg {
		return &redactedError{msg: clean, cause: err}
	}
	return err
}

func (r *Relay) log(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if r.logger == nil {
		return
	}
	r.logger.LogAttrs(ctx, level, msg, append(attrs, slog.String("relay", r.addr))...)
}

// errNoSTARTTLS is go-smtp's error when the server does not offer STARTTLS
// (a plain errors.New, so it is recognised by its text).
const errNoSTARTTLS = "doesn't support STARTTLS"

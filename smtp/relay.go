package smtp

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	netsmtp "net/smtp"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"
)

// Ports of the Sendloop relay. Any port is accepted; these are the
// documented ones, both plain SMTP upgraded with STARTTLS.
const (
	PortSMTP       = 25
	PortSubmission = 587
)

const (
	defaultDialTimeout = 30 * time.Second
	redacted           = "[REDACTED]"
)

// Relay sends messages through the Sendloop SMTP relay with the credentials
// of a sender address. A Relay is immutable and safe for concurrent use; each
// Send opens its own connection.
//
// A Relay never prints its password: String, GoString, Format and LogValue
// redact it, and so is every error and log line.
type Relay struct {
	host        string
	port        int
	username    string
	password    string
	tlsConfig   *tls.Config
	dialTimeout time.Duration
	localName   string
	logger      *slog.Logger
	// loopbackIsRemote makes tests able to check the no-TLS refusal against a
	// local fake relay.
	loopbackIsRemote bool
}

// Option configures a Relay.
type Option func(*Relay)

// WithTLSConfig sets the TLS configuration used for STARTTLS, e.g. with
// RootCAs trusting a test server. It is cloned; an empty ServerName is set to
// the relay host.
func WithTLSConfig(config *tls.Config) Option {
	return func(r *Relay) {
		if config != nil {
			r.tlsConfig = config.Clone()
		}
	}
}

// WithDialTimeout bounds the time to connect (30 seconds by default). The
// context given to Send bounds the dial and the whole session as well.
func WithDialTimeout(d time.Duration) Option {
	return func(r *Relay) { r.dialTimeout = d }
}

// WithLocalName sets the name sent with EHLO ("localhost" by default).
func WithLocalName(name string) Option {
	return func(r *Relay) { r.localName = name }
}

// WithLogger logs each step of a send, and its failure, at debug level, and
// each delivered message at info level. Without it a Relay logs nothing.
func WithLogger(logger *slog.Logger) Option {
	return func(r *Relay) { r.logger = logger }
}

// NewRelay returns a Relay for host and port (PortSubmission or PortSMTP)
// with the SMTP username and password of a Sendloop sender address.
func NewRelay(host string, port int, username, password string, opts ...Option) (*Relay, error) {
	switch {
	case host == "" || strings.ContainsAny(host, " \t\r\n/"):
		return nil, fmt.Errorf("sendloop/smtp: invalid relay host %q", host)
	case port < 1 || port > 65535:
		return nil, fmt.Errorf("sendloop/smtp: invalid relay port %d", port)
	case username == "" || password == "":
		return nil, errors.New("sendloop/smtp: the relay needs a username and a password")
	case strings.ContainsAny(username, "\x00\r\n") || strings.ContainsAny(password, "\x00\r\n"):
		// NUL separates PLAIN fields; CR and LF would end an AUTH LOGIN line.
		return nil, errors.New("sendloop/smtp: the username or password contains NUL, CR or LF")
	}
	r := &Relay{
		host:        strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"),
		port:        port,
		username:    username,
		password:    password,
		dialTimeout: defaultDialTimeout,
		localName:   "localhost",
	}
	for _, opt := range opts {
		opt(r)
	}
	if r.localName == "" || strings.ContainsAny(r.localName, " \t\r\n") {
		return nil, fmt.Errorf("sendloop/smtp: invalid local name %q", r.localName)
	}
	if r.tlsConfig == nil {
		r.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if r.tlsConfig.ServerName == "" {
		r.tlsConfig.ServerName = r.host
	}
	return r, nil
}

// Addr returns the relay address, host:port.
func (r *Relay) Addr() string { return net.JoinHostPort(r.host, strconv.Itoa(r.port)) }

// String describes the relay with its password redacted.
func (r Relay) String() string {
	return fmt.Sprintf("smtp.Relay{addr=%s username=%q password=%s}", r.Addr(), r.username, redacted)
}

// GoString is String: %#v must not print the password either.
func (r Relay) GoString() string { return r.String() }

// Format makes every fmt verb print String, since verbs such as %d or %x
// would otherwise print the fields, the password included.
func (r Relay) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(r.String())) }

// LogValue logs the relay without its password.
func (r Relay) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", r.Addr()),
		slog.String("username", r.username),
		slog.String("password", redacted),
	)
}

// Send delivers msg: it connects, upgrades to TLS with STARTTLS whenever the
// server offers it, authenticates with AUTH PLAIN or else AUTH LOGIN, and
// sends the message to every To, Cc and Bcc address.
//
// Nothing is sent when msg is invalid (*AddressError, *HeaderError). The
// credentials are sent only over TLS, or in clear text to a loopback host
// (else ErrInsecureAuth). ctx bounds the dial and the whole session; its
// error is returned, wrapped for errors.Is, when it ends the send. If the
// server rejects any recipient, the send is aborted before DATA and nothing
// is delivered. Server replies that end the send are *SMTPError.
func (r *Relay) Send(ctx context.Context, msg *Message) error {
	if msg == nil {
		return errors.New("sendloop/smtp: nil message")
	}
	from, rcpts, err := msg.envelope()
	if err != nil {
		return err
	}
	data, err := msg.Bytes()
	if err != nil {
		return err
	}
	err = r.send(ctx, from, rcpts, data)
	if err != nil {
		err = r.redact(err)
		r.log(ctx, slog.LevelDebug, "smtp: send failed", slog.Any("error", err))
		return err
	}
	r.log(ctx, slog.LevelInfo, "smtp: message accepted", slog.String("from", from), slog.Int("recipients", len(rcpts)))
	return nil
}

func (r *Relay) send(ctx context.Context, from string, rcpts []string, data []byte) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sendloop/smtp: %w", err)
	}
	r.log(ctx, slog.LevelDebug, "smtp: dial")
	dialer := net.Dialer{Timeout: r.dialTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", r.Addr())
	if err != nil {
		return r.ctxError(ctx, "dial", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return fmt.Errorf("sendloop/smtp: %w", err)
		}
	}
	// A deadline does not see a cancellation: closing the connection ends any
	// read or write in progress.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	client, err := netsmtp.NewClient(conn, r.host)
	if err != nil {
		return r.commandError(ctx, "CONNECT", "", err)
	}
	defer client.Close()
	// Leave the session politely after an error; after QUIT it is a no-op.
	defer func() {
		if err != nil {
			_ = client.Quit()
		}
	}()

	if err := client.Hello(r.localName); err != nil {
		return r.commandError(ctx, "EHLO", "", err)
	}
	if ok, _ := client.Extension("STARTTLS"); ok {
		r.log(ctx, slog.LevelDebug, "smtp: starttls")
		if err := client.StartTLS(r.tlsConfig); err != nil {
			var tpErr *textproto.Error
			if errors.As(err, &tpErr) {
				return r.commandError(ctx, "STARTTLS", "", err)
			}
			return r.ctxError(ctx, "STARTTLS", err)
		}
	}
	if err := r.auth(ctx, client); err != nil {
		return err
	}

	r.log(ctx, slog.LevelDebug, "smtp: mail", slog.String("from", from))
	if err := client.Mail(from); err != nil {
		return r.commandError(ctx, "MAIL", "", err)
	}
	for _, rcpt := range rcpts {
		r.log(ctx, slog.LevelDebug, "smtp: rcpt", slog.String("to", rcpt))
		if err := client.Rcpt(rcpt); err != nil {
			// Abort rather than deliver to some recipients only.
			_ = client.Reset()
			return r.commandError(ctx, "RCPT", rcpt, err)
		}
	}
	r.log(ctx, slog.LevelDebug, "smtp: data", slog.Int("bytes", len(data)))
	w, err := client.Data()
	if err != nil {
		return r.commandError(ctx, "DATA", "", err)
	}
	if _, err := w.Write(data); err != nil {
		return r.commandError(ctx, "DATA", "", err)
	}
	if err := w.Close(); err != nil {
		return r.commandError(ctx, "DATA", "", err)
	}
	// The message is accepted: a failed QUIT changes nothing.
	_ = client.Quit()
	return nil
}

func (r *Relay) auth(ctx context.Context, client *netsmtp.Client) error {
	_, isTLS := client.TLSConnectionState()
	insecureOK := isLoopback(r.host) && !r.loopbackIsRemote
	if !isTLS && !insecureOK {
		return ErrInsecureAuth
	}
	ok, offered := client.Extension("AUTH")
	if !ok {
		return ErrNoAuthMechanism
	}
	auth, mech, err := chooseAuth(offered, r.username, r.password, insecureOK)
	if err != nil {
		return err
	}
	r.log(ctx, slog.LevelDebug, "smtp: auth", slog.String("mechanism", mech), slog.Bool("tls", isTLS))
	if err := client.Auth(auth); err != nil {
		return r.commandError(ctx, "AUTH", "", err)
	}
	return nil
}

// commandError turns a failed command into an *SMTPError when the server
// replied, or into the context error when ctx ended the session.
func (r *Relay) commandError(ctx context.Context, command, recipient string, err error) error {
	var tpErr *textproto.Error
	if errors.As(err, &tpErr) {
		return newSMTPError(command, recipient, tpErr, r.redactString)
	}
	return r.ctxError(ctx, command, err)
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
		return fmt.Errorf("sendloop/smtp: %s with %s: %w (%w)", step, r.Addr(), ctxErr, err)
	}
	return fmt.Errorf("sendloop/smtp: %s with %s: %w", step, r.Addr(), err)
}

// secrets returns the forms in which the password could appear in a reply
// echoed by a hostile or broken server.
func (r *Relay) secrets() []string {
	return []string{
		r.password,
		base64.StdEncoding.EncodeToString([]byte(r.password)),
		base64.StdEncoding.EncodeToString([]byte("\x00" + r.username + "\x00" + r.password)),
	}
}

func (r *Relay) redactString(s string) string {
	for _, secret := range r.secrets() {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

func (r *Relay) redact(err error) error {
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
	r.logger.LogAttrs(ctx, level, msg, append(attrs, slog.String("relay", r.Addr()))...)
}

// isLoopback reports whether host is "localhost" or a loopback IP address
// (127.0.0.0/8, ::1).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

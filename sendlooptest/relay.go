package sendlooptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	slsmtp "github.com/go-sendloop/sendloop/smtp"
)

// Relay is a fake Sendloop SMTP relay for tests, listening on 127.0.0.1. Like
// the real one it offers STARTTLS (with a certificate made at start, trusted
// through RootCAs), requires AUTH PLAIN or LOGIN over TLS before MAIL, and
// reads the X-SL-* headers. It also offers 8BITMIME, SMTPUTF8 and SIZE (32
// MiB unless RelayMaxMessageBytes). It keeps every accepted message, parsed
// with emersion/go-message and rendered with its merge variables, and can
// answer chosen commands with an error reply, close the connection after a
// 421 as real servers do, or drop it without a reply (InjectFault).
//
// A Relay is safe for concurrent use.
type Relay struct {
	username, password string
	mechanisms         []string
	server             *gosmtp.Server
	listener           net.Listener
	rootCAs            *x509.CertPool
	caPEM              []byte
	serveDone          chan struct{}
	closing            chan struct{} // closed by Close: ends injected delays
	latency            *latency      // holds replies back (RelayLatency); nil for none
	connections        atomic.Int64
	closeOnce          sync.Once

	clock func() time.Time // dates messages (RelayMessage.Time)
	keep  int              // messages kept, newest first; 0: all

	mu           sync.Mutex
	messages     []RelayMessage
	nextID       int // the last message's ID
	dropped      int // messages forgotten for keep since the last Reset
	faults       []RelayFault
	authAttempts int
	implicitTLS  bool
	open         map[*trackedConn]struct{} // client connections, for DropConnections
}

// RelayMessage is a message the fake relay accepted.
type RelayMessage struct {
	// ID names the message in the relay, "1" for its first one; IDs are never reused, not
	// even after Reset.
	ID string
	// Time is when the relay accepted it, by the server's clock (Server.StartRelay) or the
	// host's.
	Time time.Time
	// EnvelopeFrom and EnvelopeTo are the MAIL FROM and RCPT TO addresses.
	EnvelopeFrom string
	EnvelopeTo   []string // every accepted RCPT TO, Bcc recipients included
	MailBody     string   // MAIL FROM's BODY= parameter, e.g. "8BITMIME"; "" without one
	MailSize     int64    // MAIL FROM's SIZE= parameter; 0 without one
	MailSMTPUTF8 bool     // MAIL FROM asked for SMTPUTF8
	// Username is the authenticated user and AuthMechanism how it
	// authenticated (PLAIN or LOGIN).
	Username      string
	AuthMechanism string // "PLAIN" or "LOGIN"; "" without AUTH
	// TLS reports whether the message came over TLS.
	TLS bool
	// Raw is the message as received, with CRLF line endings.
	Raw []byte
	// Header is the message header, parsed with go-message: Get returns a
	// raw value, Subject, AddressList, MessageID and Text decode it.
	Header mail.Header
	// MessageID is the Message-ID header's identifier, without angle
	// brackets.
	MessageID string
	// Structure is the MIME tree, e.g. "multipart/alternative(text/plain,
	// text/html)".
	Structure string
	// SLHeaders are the parsed X-SL-* headers.
	SLHeaders slsmtp.Headers
	// Subject is the decoded Subject header.
	Subject string
	// Text and HTML are the first text/plain and text/html parts that are
	// not attachments, decoded from quoted-printable or base64. Charsets are
	// not converted: senders are expected to use UTF-8.
	Text, HTML string
	// Attachments are the parts with an attachment disposition, or a file
	// name and no Content-ID.
	Attachments []RelayAttachment
	// Inline are the parts with a Content-ID (inline images of a
	// multipart/related).
	Inline []RelayAttachment
	// RenderedSubject, RenderedText and RenderedHTML are Subject, Text and
	// HTML personalized with SLHeaders.MergeVars, as the service does.
	RenderedSubject, RenderedText, RenderedHTML string
}

// RelayAttachment is an attachment or inline part of a RelayMessage.
type RelayAttachment struct {
	// Filename is the decoded file name, if any.
	Filename string
	// ContentType is the media type, without parameters.
	ContentType string
	// ContentID is the Content-ID without angle brackets (inline parts).
	ContentID string
	// Data is the content, decoded from its transfer encoding.
	Data []byte
}

// RelayFault makes the fake relay answer a command with an error reply, or
// drop the connection.
type RelayFault struct {
	// Command is CONNECT (the greeting: the connection is answered with
	// the fault's reply, or dropped, and closed, as a server refusing
	// service does with 554 or 421), MAIL, RCPT or DATA (the reply to the
	// final dot, after the whole message was read).
	Command string
	// Recipient, for RCPT, restricts the fault to that address
	// (case-insensitive); empty matches every recipient.
	Recipient string
	// Code is the reply code, 400 to 599; 4xx are temporary failures, 5xx
	// permanent ones. After a 421 the relay closes the connection, as
	// servers do.
	Code int
	// Drop closes the connection instead of replying (Code is then
	// ignored). For DATA the message was read through the final dot and is
	// kept, as a server that crashes before replying may have queued it:
	// the client cannot know.
	Drop bool
	// Delay holds the reply (or the drop) back for that long, or until the
	// relay closes. With Code 0 and no Drop, the command is then processed
	// normally: a slow server.
	Delay time.Duration
	// Message is the reply text; an enhanced status code may start it
	// ("5.1.1 no such user"), else X.0.0 is sent.
	Message string
	// Times is how many matching commands the fault answers; less than 1
	// means once.
	Times int
	// Reached, if not nil, is called each time the fault applies, as its
	// command arrives and before its Delay: a test that ends its context
	// there knows the client is waiting on that very command.
	Reached func()
}

// RelayOption configures StartRelay.
type RelayOption func(*relayConfig)

type relayConfig struct {
	startTLS        bool
	insecureAuth    bool
	mechanisms      []string
	addr            string
	tlsNames        []string // more names for the certificate (RelayTLSNames)
	maxMessageBytes int64
	implicitTLS     bool
	latency         *latency // RelayLatency; nil for none
	clock           func() time.Time
	keep            int
}

// RelayKeepMessages makes the relay keep only the newest n messages it accepted (n < 1:
// all of them, the default), so that a long-lived fake's memory does not grow with its
// traffic; Dropped counts the others.
func RelayKeepMessages(n int) RelayOption {
	return func(c *relayConfig) { c.keep = max(n, 0) }
}

// RelayImplicitTLS makes the relay speak TLS from the first byte, as on port
// 465 (RFC 8314), instead of offering STARTTLS.
func RelayImplicitTLS() RelayOption {
	return func(c *relayConfig) { c.implicitTLS = true }
}

// RelayMaxMessageBytes sets the SIZE the relay announces and enforces (32 MiB
// by default).
func RelayMaxMessageBytes(n int64) RelayOption {
	return func(c *relayConfig) { c.maxMessageBytes = n }
}

// RelayAddr makes the fake relay listen on addr (a loopback "host:port") instead of a
// random port of 127.0.0.1.
func RelayAddr(addr string) RelayOption {
	return func(c *relayConfig) { c.addr = addr }
}

// RelayWithoutSTARTTLS makes the fake relay offer no STARTTLS. AUTH is then
// never possible, unless with RelayInsecureAuth.
func RelayWithoutSTARTTLS() RelayOption {
	return func(c *relayConfig) { c.startTLS = false }
}

// RelayInsecureAuth makes the fake relay offer and accept AUTH without TLS,
// as a misconfigured or hostile server would: clients must refuse to send
// their password to it (except over loopback).
func RelayInsecureAuth() RelayOption {
	return func(c *relayConfig) { c.insecureAuth = true }
}

// RelayAuthMechanisms sets the AUTH mechanisms offered, among PLAIN and
// LOGIN (both by default, PLAIN first).
func RelayAuthMechanisms(mechanisms ...string) RelayOption {
	return func(c *relayConfig) { c.mechanisms = append([]string(nil), mechanisms...) }
}

// StartRelay starts a fake relay on 127.0.0.1 with a random port, accepting
// username and password. With a non-nil t, the relay is closed when the test
// ends; otherwise (in a program) call Close. Failures are returned, never
// reported through t.
func StartRelay(t TB, username, password string, opts ...RelayOption) (*Relay, error) {
	if t != nil {
		t.Helper()
	}
	cfg := relayConfig{startTLS: true, mechanisms: []string{sasl.Plain, sasl.Login}, addr: "127.0.0.1:0", maxMessageBytes: 32 << 20}
	for _, opt := range opts {
		opt(&cfg)
	}
	for i, mech := range cfg.mechanisms {
		cfg.mechanisms[i] = strings.ToUpper(mech)
		if cfg.mechanisms[i] != sasl.Plain && cfg.mechanisms[i] != sasl.Login {
			return nil, fmt.Errorf("sendlooptest: unsupported AUTH mechanism %q", mech)
		}
	}
	r := &Relay{
		username:   username,
		password:   password,
		mechanisms: cfg.mechanisms,
		serveDone:  make(chan struct{}),
		closing:    make(chan struct{}),
		latency:    cfg.latency,
		clock:      cfg.clock,
		keep:       cfg.keep,
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	server := gosmtp.NewServer(gosmtp.BackendFunc(r.newSession))
	server.Domain = "localhost"
	server.AllowInsecureAuth = cfg.insecureAuth
	server.MaxMessageBytes = cfg.maxMessageBytes
	server.EnableSMTPUTF8 = true
	server.MaxRecipients = 1000
	server.ReadTimeout = time.Minute
	server.WriteTimeout = time.Minute
	server.ErrorLog = log.New(io.Discard, "", 0)
	if cfg.startTLS {
		cert, pool, err := relayCertificate(cfg.tlsNames)
		if err != nil {
			return nil, err
		}
		server.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		r.rootCAs = pool
		r.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[len(cert.Certificate)-1]})
	}
	listener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("sendlooptest: relay: %w", err)
	}
	r.server, r.listener, r.implicitTLS = server, listener, cfg.implicitTLS
	var serving net.Listener = trackingListener{listener, r}
	if cfg.implicitTLS {
		if server.TLSConfig == nil {
			_ = listener.Close()
			return nil, errors.New("sendlooptest: RelayImplicitTLS needs TLS: drop RelayWithoutSTARTTLS")
		}
		serving = tls.NewListener(serving, server.TLSConfig)
	}
	go func() {
		defer close(r.serveDone)
		_ = server.Serve(serving)
	}()
	if t != nil {
		t.Cleanup(func() { _ = r.Close() })
	}
	return r, nil
}

// Addr returns the address of the relay, "127.0.0.1:port".
func (r *Relay) Addr() string { return r.listener.Addr().String() }

// Host returns the host of the relay, "127.0.0.1".
func (r *Relay) Host() string { return r.listener.Addr().(*net.TCPAddr).IP.String() }

// Port returns the port of the relay.
func (r *Relay) Port() int { return r.listener.Addr().(*net.TCPAddr).Port }

// RootCAs returns a pool trusting the certificate of the relay, for the
// RootCAs of a client tls.Config; nil with RelayWithoutSTARTTLS.
func (r *Relay) RootCAs() *x509.CertPool { return r.rootCAs }

// CACertificatePEM returns the certificate of the authority that signed the
// relay's certificate, PEM-encoded, for clients in other processes; nil with
// RelayWithoutSTARTTLS.
func (r *Relay) CACertificatePEM() []byte { return append([]byte(nil), r.caPEM...) }

// Connections returns how many connections clients opened so far.
func (r *Relay) Connections() int { return int(r.connections.Load()) }

// OpenConnections returns how many client connections are open now. A connection the
// client closed leaves once the relay has finished its session: when it is 0 after the
// client closed its own, no message can still arrive.
func (r *Relay) OpenConnections() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.open)
}

// DropConnections closes every client connection open now, without a reply,
// as a server restarting or ending idle connections does. The relay keeps
// listening.
func (r *Relay) DropConnections() {
	r.mu.Lock()
	conns := make([]net.Conn, 0, len(r.open))
	for c := range r.open {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// trackingListener counts the connections accepted and keeps them for
// DropConnections.
type trackingListener struct {
	net.Listener
	relay *Relay
}

func (l trackingListener) Accept() (net.Conn, error) {
	var c net.Conn
	for {
		var err error
		c, err = l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.relay.connections.Add(1)
		f := l.relay.takeFault("CONNECT", "")
		if f == nil {
			break
		}
		go l.relay.refuseConnection(c, f)
	}
	if l.relay.latency != nil {
		c = newLatentConn(c, l.relay.latency, l.relay.closing)
	}
	tc := &trackedConn{Conn: c, relay: l.relay}
	l.relay.mu.Lock()
	if l.relay.open == nil {
		l.relay.open = make(map[*trackedConn]struct{})
	}
	l.relay.open[tc] = struct{}{}
	l.relay.mu.Unlock()
	return tc, nil
}

// refuseConnection answers a connection with the greeting fault f (over
// TLS with RelayImplicitTLS), or drops it, and closes it.
func (r *Relay) refuseConnection(c net.Conn, f *RelayFault) {
	defer c.Close()
	if f.Reached != nil {
		f.Reached()
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-r.closing:
			t.Stop()
		}
	}
	if f.Drop {
		return
	}
	if r.implicitTLS {
		c = tls.Server(c, r.server.TLSConfig)
	}
	enhanced, text := relayEnhancedCode(f.Code, f.Message)
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = fmt.Fprintf(c, "%d %d.%d.%d %s\r\n", f.Code, enhanced[0], enhanced[1], enhanced[2], text)
}

// trackedConn leaves the open connections when closed.
type trackedConn struct {
	net.Conn
	relay *Relay
}

func (c *trackedConn) Close() error {
	c.relay.mu.Lock()
	delete(c.relay.open, c)
	c.relay.mu.Unlock()
	return c.Conn.Close()
}

// ClientTLSConfig returns a client TLS configuration trusting the relay.
func (r *Relay) ClientTLSConfig() *tls.Config {
	return &tls.Config{RootCAs: r.rootCAs, ServerName: r.Host(), MinVersion: tls.VersionTLS12}
}

// Messages returns the messages accepted so far, in order. The slice is a
// copy; the messages share their fields with the relay and must be treated
// as read-only.
func (r *Relay) Messages() []RelayMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RelayMessage(nil), r.messages...)
}

// Message returns the message with the given ID, if the relay still keeps it.
func (r *Relay) Message(id string) (RelayMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Newest first: a message just listed is the likeliest to be asked for.
	for i := len(r.messages) - 1; i >= 0; i-- {
		if r.messages[i].ID == id {
			return r.messages[i], true
		}
	}
	return RelayMessage{}, false
}

// Dropped returns how many accepted messages the relay forgot for RelayKeepMessages since
// it started or was last Reset or cleared.
func (r *Relay) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// ClearMessages forgets the messages accepted, and the count of dropped ones, keeping the
// faults not yet used.
func (r *Relay) ClearMessages() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages, r.dropped = nil, 0
}

// Reset forgets the messages accepted and the faults not yet used.
func (r *Relay) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages, r.faults, r.dropped = nil, nil, 0
}

// keepMessage adds an accepted message, giving it its ID, and forgets the oldest beyond
// the bound.
func (r *Relay) keepMessage(msg RelayMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	msg.ID = strconv.Itoa(r.nextID)
	r.messages = append(r.messages, msg)
	if over := len(r.messages) - r.keep; r.keep > 0 && over > 0 {
		// Reslicing leaves the old head to the garbage collector when append next grows
		// the array: the memory stays about twice the bound.
		clear(r.messages[:over])
		r.messages = r.messages[over:]
		r.dropped += over
	}
}

// AuthAttempts returns how many AUTH exchanges clients started, successful
// or not.
func (r *Relay) AuthAttempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.authAttempts
}

// InjectFault adds f: the next matching commands are answered with its
// reply (or the connection dropped) instead of being processed. Faults are
// used in the order added. It panics if f.Command is not CONNECT, MAIL, RCPT
// or DATA, or f.Code is not 4xx or 5xx without Drop (CONNECT always needs
// one of them).
func (r *Relay) InjectFault(f RelayFault) {
	f.Command = strings.ToUpper(f.Command)
	if f.Command != "CONNECT" && f.Command != "MAIL" && f.Command != "RCPT" && f.Command != "DATA" {
		panic(fmt.Sprintf("sendlooptest: RelayFault command %q: want CONNECT, MAIL, RCPT or DATA", f.Command))
	}
	if !f.Drop && (f.Code < 400 || f.Code > 599) && !(f.Code == 0 && f.Delay > 0 && f.Command != "CONNECT") {
		panic(fmt.Sprintf("sendlooptest: RelayFault code %d: want 400 to 599 (or 0 with a Delay)", f.Code))
	}
	if f.Times < 1 {
		f.Times = 1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, f)
}

// FailNext answers the next command (MAIL, RCPT or DATA) with code and
// message.
func (r *Relay) FailNext(command string, code int, message string) {
	r.InjectFault(RelayFault{Command: command, Code: code, Message: message})
}

// Close stops the relay and closes its connections. It may be called more
// than once.
func (r *Relay) Close() error {
	var err error
	r.closeOnce.Do(func() {
		close(r.closing)
		err = r.server.Close()
		// Server.Close only knows the listener once Serve has started.
		_ = r.listener.Close()
		<-r.serveDone
	})
	return err
}

// takeFault returns the first fault matching command and recipient, using
// it up.
func (r *Relay) takeFault(command, recipient string) *RelayFault {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.faults {
		f := r.faults[i]
		if f.Command != command || (f.Recipient != "" && !strings.EqualFold(f.Recipient, recipient)) {
			continue
		}
		r.faults[i].Times--
		if r.faults[i].Times == 0 {
			r.faults = append(r.faults[:i], r.faults[i+1:]...)
		}
		return &f
	}
	return nil
}

// relayCertificate makes a CA and a certificate it signs for 127.0.0.1, ::1,
// localhost and the extra names (RelayTLSNames), valid for a day.
func relayCertificate(extra []string) (tls.Certificate, *x509.CertPool, error) {
	fail := func(err error) (tls.Certificate, *x509.CertPool, error) {
		return tls.Certificate{}, nil, fmt.Errorf("sendlooptest: relay certificate: %w", err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail(err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sendlooptest relay CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fail(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fail(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail(err)
	}
	leafTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	addTLSNames(leafTemplate, extra)
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return fail(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	cert := tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}
	return cert, pool, nil
}

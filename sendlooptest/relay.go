package sendlooptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/personalize"
	slsmtp "github.com/go-sendloop/sendloop/smtp"
)

// Relay is a fake Sendloop SMTP relay for tests, listening on 127.0.0.1. Like
// the real one it offers STARTTLS (with a certificate made at start, trusted
// through RootCAs), requires AUTH PLAIN or LOGIN over TLS before MAIL, and
// reads the X-SL-* headers. It keeps every accepted message, rendered with its
// merge variables, and can answer chosen commands with an error reply.
//
// A Relay is safe for concurrent use.
type Relay struct {
	username, password string
	mechanisms         []string
	server             *gosmtp.Server
	listener           net.Listener
	rootCAs            *x509.CertPool
	serveDone          chan struct{}
	closeOnce          sync.Once

	mu           sync.Mutex
	messages     []RelayMessage
	faults       []RelayFault
	authAttempts int
}

// RelayMessage is a message the fake relay accepted.
type RelayMessage struct {
	// EnvelopeFrom and EnvelopeTo are the MAIL FROM and RCPT TO addresses.
	EnvelopeFrom string
	EnvelopeTo   []string // every accepted RCPT TO, Bcc recipients included
	// Username is the authenticated user and AuthMechanism how it
	// authenticated (PLAIN or LOGIN).
	Username      string
	AuthMechanism string // "PLAIN" or "LOGIN"; "" without AUTH
	// TLS reports whether the message came over TLS.
	TLS bool
	// Raw is the message as received, with CRLF line endings.
	Raw []byte
	// Header is the parsed message header.
	Header mail.Header
	// SLHeaders are the parsed X-SL-* headers.
	SLHeaders slsmtp.Headers
	// Subject is the decoded Subject header.
	Subject string
	// Text and HTML are the first text/plain and text/html parts that are
	// not attachments, decoded from quoted-printable or base64. Charsets are
	// not converted: senders are expected to use UTF-8.
	Text, HTML string
	// Attachments are the parts with an attachment disposition or a filename.
	Attachments []RelayAttachment
	// RenderedSubject, RenderedText and RenderedHTML are Subject, Text and
	// HTML personalized with SLHeaders.MergeVars, as the service does.
	RenderedSubject, RenderedText, RenderedHTML string
}

// RelayAttachment is an attachment of a RelayMessage.
type RelayAttachment struct {
	Filename    string // the part's filename parameter, decoded
	ContentType string // the part's media type, without parameters
	Data        []byte // the content, decoded from its transfer encoding
}

// RelayFault makes the fake relay answer a command with an error reply.
type RelayFault struct {
	// Command is MAIL, RCPT or DATA (the reply to the end of the data).
	Command string
	// Recipient, for RCPT, restricts the fault to that address
	// (case-insensitive); empty matches every recipient.
	Recipient string
	// Code is the reply code, 400 to 599; 4xx are temporary failures, 5xx
	// permanent ones.
	Code int
	// Message is the reply text.
	Message string
	// Times is how many matching commands the fault answers; less than 1
	// means once.
	Times int
}

// RelayOption configures StartRelay.
type RelayOption func(*relayConfig)

type relayConfig struct {
	startTLS     bool
	insecureAuth bool
	mechanisms   []string
	addr         string
	tlsNames     []string // more names for the certificate (RelayTLSNames)
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
// ends; otherwise call Close.
func StartRelay(t testing.TB, username, password string, opts ...RelayOption) (*Relay, error) {
	if t != nil {
		t.Helper()
	}
	cfg := relayConfig{startTLS: true, mechanisms: []string{sasl.Plain, sasl.Login}, addr: "127.0.0.1:0"}
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
	}
	server := gosmtp.NewServer(gosmtp.BackendFunc(r.newSession))
	server.Domain = "localhost"
	server.AllowInsecureAuth = cfg.insecureAuth
	server.MaxMessageBytes = 32 << 20
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
	}
	listener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("sendlooptest: relay: %w", err)
	}
	r.server, r.listener = server, listener
	go func() {
		defer close(r.serveDone)
		_ = server.Serve(listener)
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

// Reset forgets the messages accepted and the faults not yet used.
func (r *Relay) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages, r.faults = nil, nil
}

// AuthAttempts returns how many AUTH exchanges clients started, successful
// or not.
func (r *Relay) AuthAttempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.authAttempts
}

// InjectFault adds f: the next matching commands are answered with its
// reply instead of being processed. Faults are used in the order added. It
// panics if f.Command is not MAIL, RCPT or DATA or f.Code is not 4xx or 5xx.
func (r *Relay) InjectFault(f RelayFault) {
	f.Command = strings.ToUpper(f.Command)
	if f.Command != "MAIL" && f.Command != "RCPT" && f.Command != "DATA" {
		panic(fmt.Sprintf("sendlooptest: RelayFault command %q: want MAIL, RCPT or DATA", f.Command))
	}
	if f.Code < 400 || f.Code > 599 {
		panic(fmt.Sprintf("sendlooptest: RelayFault code %d: want 400 to 599", f.Code))
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
		err = r.server.Close()
		// Server.Close only knows the listener once Serve has started.
		_ = r.listener.Close()
		<-r.serveDone
	})
	return err
}

// takeFault returns the reply of the first fault matching command and
// recipient, using it up.
func (r *Relay) takeFault(command, recipient string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.faults {
		f := &r.faults[i]
		if f.Command != command || (f.Recipient != "" && !strings.EqualFold(f.Recipient, recipient)) {
			continue
		}
		f.Times--
		if f.Times == 0 {
			r.faults = append(r.faults[:i], r.faults[i+1:]...)
		}
		return &gosmtp.SMTPError{Code: f.Code, EnhancedCode: gosmtp.EnhancedCodeNotSet, Message: f.Message}
	}
	return nil
}

func (r *Relay) newSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &relaySession{relay: r, conn: c}, nil
}

// relaySession is one SMTP session; go-smtp makes a new one after STARTTLS,
// so authentication never carries over from clear text.
type relaySession struct {
	relay     *Relay
	conn      *gosmtp.Conn
	username  string
	mechanism string
	from      string
	to        []string
}

var (
	relayErrAuthRequired = &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	relayErrAuthFailed   = &gosmtp.SMTPError{Code: 535, EnhancedCode: gosmtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
)

func (s *relaySession) AuthMechanisms() []string { return s.relay.mechanisms }

func (s *relaySession) Auth(mech string) (sasl.Server, error) {
	s.relay.mu.Lock()
	s.relay.authAttempts++
	s.relay.mu.Unlock()
	offered := false
	for _, m := range s.relay.mechanisms {
		offered = offered || m == mech
	}
	switch {
	case !offered:
		return nil, gosmtp.ErrAuthUnknownMechanism
	case mech == sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			if identity != "" && identity != username {
				return relayErrAuthFailed
			}
			return s.login(mech, username, password)
		}), nil
	default:
		return &relayLoginServer{authenticate: func(username, password string) error {
			return s.login(mech, username, password)
		}}, nil
	}
}

func (s *relaySession) login(mech, username, password string) error {
	userOK := subtle.ConstantTimeCompare([]byte(username), []byte(s.relay.username))
	passwordOK := subtle.ConstantTimeCompare([]byte(password), []byte(s.relay.password))
	if userOK&passwordOK != 1 {
		return relayErrAuthFailed
	}
	s.username, s.mechanism = username, mech
	return nil
}

func (s *relaySession) Mail(from string, _ *gosmtp.MailOptions) error {
	if s.username == "" {
		return relayErrAuthRequired
	}
	if err := s.relay.takeFault("MAIL", ""); err != nil {
		return err
	}
	s.from, s.to = from, nil
	return nil
}

func (s *relaySession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if err := s.relay.takeFault("RCPT", to); err != nil {
		return err
	}
	s.to = append(s.to, to)
	return nil
}

func (s *relaySession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := s.relay.takeFault("DATA", ""); err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	msg := RelayMessage{
		EnvelopeFrom:  s.from,
		EnvelopeTo:    append([]string(nil), s.to...),
		Username:      s.username,
		AuthMechanism: s.mechanism,
		TLS:           isTLS,
		Raw:           raw,
	}
	if err := relayParse(&msg); err != nil {
		return &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 6, 0}, Message: err.Error()}
	}
	s.relay.mu.Lock()
	s.relay.messages = append(s.relay.messages, msg)
	s.relay.mu.Unlock()
	return nil
}

func (s *relaySession) Reset() { s.from, s.to = "", nil }

func (s *relaySession) Logout() error { return nil }

// relayLoginServer is the server side of AUTH LOGIN, which go-sasl lacks.
type relayLoginServer struct {
	step         int
	username     string
	authenticate func(username, password string) error
}

func (s *relayLoginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	s.step++
	switch {
	case s.step == 1 && response == nil:
		return []byte("Username:"), false, nil
	case s.step == 1:
		// The username came as the initial response.
		s.step++
		s.username = string(response)
		return []byte("Password:"), false, nil
	case s.step == 2:
		s.username = string(response)
		return []byte("Password:"), false, nil
	case s.step == 3:
		return nil, true, s.authenticate(s.username, string(response))
	}
	return nil, false, sasl.ErrUnexpectedClientResponse
}

// relayParse fills the parsed fields of msg from msg.Raw, and personalizes
// the subject and bodies.
func relayParse(msg *RelayMessage) error {
	parsed, err := mail.ReadMessage(bytes.NewReader(msg.Raw))
	if err != nil {
		return fmt.Errorf("malformed message: %w", err)
	}
	msg.Header = parsed.Header
	if msg.SLHeaders, err = slsmtp.ParseHeaders(parsed.Header); err != nil {
		return err
	}
	decoder := new(mime.WordDecoder)
	if msg.Subject, err = decoder.DecodeHeader(parsed.Header.Get("Subject")); err != nil {
		return fmt.Errorf("malformed Subject: %w", err)
	}
	if err := relayWalkPart(msg, textproto.MIMEHeader(parsed.Header), parsed.Body, 0); err != nil {
		return err
	}
	vars := msg.SLHeaders.MergeVars
	for _, field := range []struct {
		name     string
		in       string
		rendered *string
	}{
		{"subject", msg.Subject, &msg.RenderedSubject},
		{"text", msg.Text, &msg.RenderedText},
		{"HTML", msg.HTML, &msg.RenderedHTML},
	} {
		if *field.rendered, err = personalize.Render(field.in, vars); err != nil {
			return fmt.Errorf("personalizing the %s: %w", field.name, err)
		}
	}
	return nil
}

// relayMaxDepth bounds multipart nesting, which real messages keep to 3 or 4.
const relayMaxDepth = 10

func relayWalkPart(msg *RelayMessage, header textproto.MIMEHeader, body io.Reader, depth int) error {
	if depth > relayMaxDepth {
		return errors.New("multipart nested too deep")
	}
	mediaType, params := "text/plain", map[string]string{}
	if ct := header.Get("Content-Type"); ct != "" {
		var err error
		if mediaType, params, err = mime.ParseMediaType(ct); err != nil {
			return fmt.Errorf("malformed Content-Type %q: %w", ct, err)
		}
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		// NextRawPart, unlike NextPart, leaves the transfer encoding to
		// relayDecode, so every part is handled the same way.
		reader := multipart.NewReader(body, params["boundary"])
		for {
			part, err := reader.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("malformed %s: %w", mediaType, err)
			}
			if err := relayWalkPart(msg, part.Header, part, depth+1); err != nil {
				return err
			}
		}
	}
	data, err := relayDecode(header.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		return err
	}
	disposition, dispParams, _ := mime.ParseMediaType(header.Get("Content-Disposition"))
	filename := dispParams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	if decoded, err := new(mime.WordDecoder).DecodeHeader(filename); err == nil {
		filename = decoded
	}
	switch {
	case disposition == "attachment" || filename != "":
		msg.Attachments = append(msg.Attachments, RelayAttachment{Filename: filename, ContentType: mediaType, Data: data})
	case mediaType == "text/plain" && msg.Text == "":
		msg.Text = string(data)
	case mediaType == "text/html" && msg.HTML == "":
		msg.HTML = string(data)
	}
	return nil
}

func relayDecode(encoding string, body io.Reader) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit", "8bit", "binary":
	default:
		return nil, fmt.Errorf("unknown Content-Transfer-Encoding %q", encoding)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("malformed %s body: %w", encoding, err)
	}
	return data, nil
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

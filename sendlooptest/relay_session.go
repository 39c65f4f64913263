package sendlooptest

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// errRelayDropped is returned to go-smtp after the fake closed the
// connection; it cannot reach the client.
var errRelayDropped = errors.New("sendlooptest: connection dropped by an injected fault")

// fault applies the fault matching command and recipient, if any: it
// returns the reply to send, or closes the connection.
func (s *relaySession) fault(command, recipient string) error {
	return s.applyFault(s.relay.takeFault(command, recipient))
}

// applyFault returns the reply f asks for, or closes the connection.
func (s *relaySession) applyFault(f *RelayFault) error {
	if f == nil {
		return nil
	}
	if f.Reached != nil {
		f.Reached()
	}
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-s.relay.closing:
			t.Stop()
		}
		if f.Code == 0 && !f.Drop {
			return nil
		}
	}
	conn := s.conn.Conn()
	if f.Drop {
		_ = conn.Close()
		return errRelayDropped
	}
	enhanced, text := relayEnhancedCode(f.Code, f.Message)
	if f.Code == 421 {
		// go-smtp would keep the connection open: write the reply and close.
		_, _ = fmt.Fprintf(conn, "421 %d.%d.%d %s\r\n", enhanced[0], enhanced[1], enhanced[2], text)
		_ = conn.Close()
		return errRelayDropped
	}
	return &gosmtp.SMTPError{Code: f.Code, EnhancedCode: enhanced, Message: text}
}

// relayEnhancedCode takes the enhanced status code that starts message
// ("4.7.1 greylisted"), or makes X.0.0 from code.
func relayEnhancedCode(code int, message string) (gosmtp.EnhancedCode, string) {
	first, rest, _ := strings.Cut(message, " ")
	var e gosmtp.EnhancedCode
	if n, err := fmt.Sscanf(first, "%d.%d.%d", &e[0], &e[1], &e[2]); err == nil && n == 3 && e[0] == code/100 &&
		first == fmt.Sprintf("%d.%d.%d", e[0], e[1], e[2]) {
		return e, rest
	}
	return gosmtp.EnhancedCode{code / 100, 0, 0}, message
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
	mailOpts  gosmtp.MailOptions
}

var (
	relayErrAuthRequired = &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	relayErrAuthFailed   = &gosmtp.SMTPError{Code: 535, EnhancedCode: gosmtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
	// RFC 5321 allows no control character in a mailbox; one in an envelope address is
	// a syntax error, and refusing it keeps it out of every log that shows envelopes.
	relayErrControlFrom = &gosmtp.SMTPError{Code: 501, EnhancedCode: gosmtp.EnhancedCode{5, 1, 7}, Message: "Syntax error: a control character in the sender address"}
	relayErrControlTo   = &gosmtp.SMTPError{Code: 501, EnhancedCode: gosmtp.EnhancedCode{5, 1, 3}, Message: "Syntax error: a control character in the recipient address"}
)

// hasControl reports whether s holds a control character (C0, DEL or C1) or a byte that
// is not UTF-8, which could carry one to a terminal.
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl)
}

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

func (s *relaySession) Mail(from string, opts *gosmtp.MailOptions) error {
	if s.username == "" {
		return relayErrAuthRequired
	}
	if hasControl(from) {
		return relayErrControlFrom
	}
	if err := s.fault("MAIL", ""); err != nil {
		return err
	}
	s.from, s.to = from, nil
	s.mailOpts = gosmtp.MailOptions{}
	if opts != nil {
		s.mailOpts = *opts
	}
	return nil
}

func (s *relaySession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if hasControl(to) {
		return relayErrControlTo
	}
	if err := s.fault("RCPT", to); err != nil {
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
	f := s.relay.takeFault("DATA", "")
	if f != nil && !f.Drop {
		if err := s.applyFault(f); err != nil {
			return err
		}
		f = nil // a delay alone: accept the message
	}
	_, isTLS := s.conn.TLSConnectionState()
	msg := RelayMessage{
		EnvelopeFrom:  s.from,
		EnvelopeTo:    append([]string(nil), s.to...),
		MailBody:      string(s.mailOpts.Body),
		MailSize:      s.mailOpts.Size,
		MailSMTPUTF8:  s.mailOpts.UTF8,
		Username:      s.username,
		AuthMechanism: s.mechanism,
		TLS:           isTLS,
		Raw:           raw,
		Time:          s.relay.clock(),
	}
	if err := relayParse(&msg); err != nil {
		return &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 6, 0}, Message: err.Error()}
	}
	s.relay.keepMessage(msg)
	if f != nil {
		// Kept, then dropped before the reply: the outcome is unknown.
		return s.applyFault(f)
	}
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

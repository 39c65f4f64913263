package smtp

import (
	"errors"
	"fmt"
	"net/textproto"
	"strings"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// ErrOutcomeUnknown is matched (errors.Is) when a message may or may not have been
// delivered: the connection was lost after the final dot and before the server's reply.
// Such a message is never sent again by the package. It is the same sentinel as
// sendloop.ErrOutcomeUnknown and legacy.ErrOutcomeUnknown.
var ErrOutcomeUnknown = outcome.ErrUnknown

// Sentinel errors, matched with errors.Is. Most are wrapped in a
// *HeaderError, *AddressError or *SMTPError carrying the details.
var (
	// ErrInsecureAuth is returned when the connection is not protected by TLS
	// (the server offered no STARTTLS) and the host is not a loopback address:
	// the credentials are never sent in clear text.
	ErrInsecureAuth = errors.New("sendloop/smtp: refusing to authenticate over a connection without TLS")

	// ErrNoAuthMechanism is returned when the server offers neither AUTH PLAIN
	// nor AUTH LOGIN.
	ErrNoAuthMechanism = errors.New("sendloop/smtp: server offers no supported AUTH mechanism (PLAIN, LOGIN)")

	// ErrNoRecipients is returned when a message has no To, Cc or Bcc address.
	ErrNoRecipients = errors.New("sendloop/smtp: message has no recipients")

	// ErrInvalidCharacter reports a control character (CR, LF, NUL, ...) or
	// invalid UTF-8 in a value that ends up in a header.
	ErrInvalidCharacter = errors.New("invalid character")

	// ErrEmpty reports an empty tag or an empty custom-argument or
	// merge-variable key.
	ErrEmpty = errors.New("empty value")

	// ErrInvalidTrackingValue reports a tracking header whose value is none of
	// 1, true, on, yes, 0, false, off, no.
	ErrInvalidTrackingValue = errors.New("invalid tracking value")

	// ErrMalformedJSON reports an X-SL header whose JSON does not parse or is
	// not of the expected shape.
	ErrMalformedJSON = errors.New("malformed JSON")

	// ErrDuplicateHeader reports an X-SL header that appears more than once,
	// or an X-SL header of a raw message that the Message would add again.
	ErrDuplicateHeader = errors.New("header appears more than once")

	// ErrNotScalar reports a custom-argument value that is not a JSON scalar
	// (string, number, bool or null): an object, an array, NaN or an infinity.
	ErrNotScalar = errors.New("not a JSON scalar")

	// ErrLineTooLong reports a header that cannot be folded into lines of at
	// most 998 characters (RFC 5322), typically one very long JSON string.
	ErrLineTooLong = errors.New("header line longer than 998 characters")
)

// HeaderError reports a header value that cannot be produced or parsed.
type HeaderError struct {
	// Header is the header name, e.g. HeaderTags.
	Header string
	// Key is the custom-argument or merge-variable key, or the tag, at fault;
	// empty when the header value as a whole is at fault.
	Key string
	// Err says what is wrong; it wraps one of the sentinel errors above.
	Err error
}

// Error returns the header, the key (quoted, so control characters show as
// escapes) and the reason.
func (e *HeaderError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("sendloop/smtp: header %s: %q: %v", e.Header, e.Key, e.Err)
	}
	return fmt.Sprintf("sendloop/smtp: header %s: %v", e.Header, e.Err)
}

// Unwrap returns the underlying reason.
func (e *HeaderError) Unwrap() error { return e.Err }

// AddressError reports an address of a Message that net/mail cannot parse or
// that cannot be used in an SMTP envelope.
type AddressError struct {
	// Field is the Message field holding the address: From, To, Cc, Bcc or
	// ReplyTo.
	Field string
	// Address is the address as given.
	Address string
	// Err says what is wrong.
	Err error
}

// Error names the field and the address.
func (e *AddressError) Error() string {
	return fmt.Sprintf("sendloop/smtp: invalid %s address %q: %v", e.Field, e.Address, e.Err)
}

// Unwrap returns the underlying reason.
func (e *AddressError) Unwrap() error { return e.Err }

// SMTPError is a reply of the server that ended the send.
type SMTPError struct {
	// Command is the command the server answered: CONNECT (the greeting),
	// EHLO, STARTTLS, AUTH, MAIL, RCPT or DATA.
	Command string
	// Recipient is the rejected address when Command is RCPT.
	Recipient string
	// Code is the three-digit reply code, e.g. 550.
	Code int
	// EnhancedCode is the RFC 3463 status, e.g. "5.1.1", when the server sent
	// one.
	EnhancedCode string
	// Message is the text of the reply, without codes; lines of a multi-line
	// reply are separated by "\n".
	Message string
}

// Error returns the command, the recipient if any, and the reply.
func (e *SMTPError) Error() string {
	var b strings.Builder
	b.WriteString("sendloop/smtp: ")
	if e.Recipient != "" {
		fmt.Fprintf(&b, "RCPT TO:<%s>", e.Recipient)
	} else {
		b.WriteString(e.Command)
	}
	fmt.Fprintf(&b, " rejected: %d", e.Code)
	if e.EnhancedCode != "" {
		b.WriteString(" " + e.EnhancedCode)
	}
	if e.Message != "" {
		b.WriteString(" " + strings.ReplaceAll(e.Message, "\n", "; "))
	}
	return b.String()
}

// Temporary reports a 4xx reply: the same send may succeed later.
func (e *SMTPError) Temporary() bool { return e.Code >= 400 && e.Code <= 499 }

// Permanent reports a 5xx reply: retrying the same send will fail again.
func (e *SMTPError) Permanent() bool { return e.Code >= 500 && e.Code <= 599 }

// newSMTPError converts a reply that net/smtp returned as *textproto.Error,
// removing the secrets a hostile server might echo.
func newSMTPError(command, recipient string, tpErr *textproto.Error, redact func(string) string) *SMTPError {
	lines := strings.Split(tpErr.Msg, "\n")
	var enhanced string
	for i, line := range lines {
		code, rest, ok := cutEnhancedCode(line)
		if !ok {
			continue
		}
		if enhanced == "" {
			enhanced = code
		}
		if code == enhanced {
			lines[i] = rest
		}
	}
	return &SMTPError{
		Command:      command,
		Recipient:    recipient,
		Code:         tpErr.Code,
		EnhancedCode: enhanced,
		Message:      redact(strings.Join(lines, "\n")),
	}
}

// cutEnhancedCode splits "5.1.1 text" into "5.1.1" and "text".
func cutEnhancedCode(line string) (code, rest string, ok bool) {
	code, rest, _ = strings.Cut(line, " ")
	parts := strings.Split(code, ".")
	if len(parts) != 3 || len(parts[0]) != 1 || !strings.ContainsAny(parts[0], "245") {
		return "", line, false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return "", line, false
		}
	}
	return code, rest, true
}

// redactedError replaces an error whose text contained a secret. It has no
// Unwrap on purpose, as the wrapped error would print the secret; Is still
// answers for the cause, so errors.Is(err, context.DeadlineExceeded) holds.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether target is in the cause's chain.
func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }

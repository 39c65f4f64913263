package smtp

import (
	"errors"
	"fmt"
	"strings"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// ErrOutcomeUnknown is matched (errors.Is) when a message may or may not have been
// delivered: the connection was lost after the final dot and before the server's reply.
// Such a message is never sent again by the package. It is the same sentinel as
// sendloop.ErrOutcomeUnknown and legacy.ErrOutcomeUnknown.
var ErrOutcomeUnknown = outcome.ErrUnknown

// Sentinel errors, matched with errors.Is. Most are wrapped in a *HeaderError,
// *AddressError, *PartError, *SizeError or *ReplyError carrying the details.
var (
	// ErrInsecureAuth is returned when the connection is not protected by TLS
	// (the server offered no STARTTLS) and the host is not a loopback address:
	// neither the credentials nor a message are sent in clear text, unless the
	// Relay was made WithAllowPlaintext.
	ErrInsecureAuth = errors.New("sendloop/smtp: refusing to authenticate or send over a connection without TLS")

	// ErrNoAuthMechanism is returned when the server offers neither AUTH PLAIN
	// nor AUTH LOGIN (or not the mechanism Auth.Mechanism asks for).
	ErrNoAuthMechanism = errors.New("sendloop/smtp: server offers no supported AUTH mechanism (PLAIN, LOGIN)")

	// ErrNoRecipients is returned when a message has no To, Cc or Bcc address.
	ErrNoRecipients = errors.New("sendloop/smtp: message has no recipients")

	// ErrTemporary is matched by an *ReplyError with a 4xx reply: the same send
	// may succeed later.
	ErrTemporary = errors.New("temporary SMTP failure (4xx)")

	// ErrPermanent is matched by an *ReplyError with a 5xx reply: the same send
	// will fail again.
	ErrPermanent = errors.New("permanent SMTP failure (5xx)")

	// ErrSomeRecipientsRefused is matched by the *RecipientsError Send returns
	// when the message was delivered to some recipients and refused for others.
	ErrSomeRecipientsRefused = errors.New("some recipients were refused")

	// ErrNotAttempted is matched by the result of every message SendAll or
	// SendAllHooked did not try to send because its context ended first.
	ErrNotAttempted = errors.New("sendloop/smtp: not attempted: the context ended first")

	// ErrMessageTooLarge is matched by a *SizeError: the message is larger than
	// WithMaxMessageSize or than the SIZE the server announces.
	ErrMessageTooLarge = errors.New("message too large")

	// ErrSMTPUTF8Required reports a non-ASCII envelope address to a server
	// that does not offer SMTPUTF8.
	ErrSMTPUTF8Required = errors.New("sendloop/smtp: a non-ASCII address needs SMTPUTF8, which the server does not offer")

	// ErrRelayClosed is returned by Send after Close.
	ErrRelayClosed = errors.New("sendloop/smtp: relay closed")

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

	// ErrReservedHeader reports an extra header that the builder writes
	// itself (From, To, Subject, Content-Type, X-SL-*, ...).
	ErrReservedHeader = errors.New("header is set by the message builder")

	// ErrNotScalar reports a custom-argument value that is not a JSON scalar
	// (string, number, bool or null): an object, an array, NaN or an infinity.
	ErrNotScalar = errors.New("not a JSON scalar")

	// ErrLineTooLong reports a header that cannot be folded into lines of at
	// most 998 characters (RFC 5322), typically one very long JSON string.
	ErrLineTooLong = errors.New("header line longer than 998 characters")
)

// HeaderError reports a header value that cannot be produced or parsed.
type HeaderError struct {
	// Header is the header name, e.g. HeaderTags or "List-Unsubscribe".
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

// AddressError reports an address of a Message that cannot be parsed or that
// the shared address rule refuses.
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

// PartError reports an attachment or inline part that cannot be built: a
// content type that does not parse, a file name or Content-ID with CR or LF,
// an inline part without an HTML body.
type PartError struct {
	// Part is "attachment" or "inline".
	Part string
	// Index is the position in Message.Attachments or Message.Inline.
	Index int
	// Name is the file name, or the Content-ID of an inline part.
	Name string
	// Err says what is wrong.
	Err error
}

// Error names the part and the reason.
func (e *PartError) Error() string {
	return fmt.Sprintf("sendloop/smtp: %s %d (%q): %v", e.Part, e.Index, e.Name, e.Err)
}

// Unwrap returns the underlying reason.
func (e *PartError) Unwrap() error { return e.Err }

// SizeError reports a message larger than the limit of the Relay
// (WithMaxMessageSize) or of the server (its SIZE extension). It matches
// ErrMessageTooLarge.
type SizeError struct {
	// Size is the size of the message as sent, in bytes.
	Size int
	// Limit is the limit it passes, in bytes.
	Limit int
	// Server is true when the limit is the one the server announced.
	Server bool
}

// Error gives the size and the limit.
func (e *SizeError) Error() string {
	who := "the configured limit"
	if e.Server {
		who = "the server's SIZE"
	}
	return fmt.Sprintf("sendloop/smtp: message of %d bytes is over %s of %d bytes", e.Size, who, e.Limit)
}

// Is matches ErrMessageTooLarge.
func (e *SizeError) Is(target error) bool { return target == ErrMessageTooLarge }

// ReplyError is a reply of the server that refused a command.
//
// errors.Is(err, ErrTemporary) holds for a 4xx reply, errors.Is(err,
// ErrPermanent) for a 5xx one.
type ReplyError struct {
	// Command is the command the server answered: CONNECT (the greeting),
	// EHLO, STARTTLS, AUTH, RSET, MAIL, RCPT or DATA (the DATA command or
	// the reply to the final dot that ends the message).
	Command string
	// Recipient is the refused address when Command is RCPT.
	Recipient string
	// Code is the three-digit reply code, e.g. 550.
	Code int
	// EnhancedCode is the RFC 3463 status, e.g. "5.1.1", when the server sent
	// one.
	EnhancedCode string
	// Message is the text of the reply, without codes; lines of a multi-line
	// reply are separated by "\n". A secret the server echoed is redacted.
	Message string
}

// Error returns the command, the recipient if any, and the reply.
func (e *ReplyError) Error() string {
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
func (e *ReplyError) Temporary() bool { return e.Code >= 400 && e.Code <= 499 }

// Permanent reports a 5xx reply: retrying the same send will fail again.
func (e *ReplyError) Permanent() bool { return e.Code >= 500 && e.Code <= 599 }

// Is matches ErrTemporary for a 4xx reply and ErrPermanent for a 5xx one.
func (e *ReplyError) Is(target error) bool {
	switch target {
	case ErrTemporary:
		return e.Temporary()
	case ErrPermanent:
		return e.Permanent()
	}
	return false
}

// RecipientsError reports the recipients the server refused. With
// Delivered, the message went to the others and matches
// ErrSomeRecipientsRefused; without, every recipient was refused and
// nothing was delivered.
type RecipientsError struct {
	// Refused holds the reply to each refused RCPT, in envelope order.
	Refused []*ReplyError
	// Delivered reports that the message was accepted for the other
	// recipients.
	Delivered bool
}

// Error lists the refused recipients and their replies.
func (e *RecipientsError) Error() string {
	var b strings.Builder
	if e.Delivered {
		fmt.Fprintf(&b, "sendloop/smtp: delivered, but %d recipient(s) refused: ", len(e.Refused))
	} else {
		b.WriteString("sendloop/smtp: every recipient refused: ")
	}
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.TrimPrefix(r.Error(), "sendloop/smtp: "))
	}
	return b.String()
}

// Unwrap returns the replies, so that errors.As finds an *ReplyError and
// errors.Is tells ErrTemporary from ErrPermanent.
func (e *RecipientsError) Unwrap() []error {
	errs := make([]error, len(e.Refused))
	for i, r := range e.Refused {
		errs[i] = r
	}
	return errs
}

// Is matches ErrSomeRecipientsRefused when the message was delivered.
func (e *RecipientsError) Is(target error) bool {
	return target == ErrSomeRecipientsRefused && e.Delivered
}

// newReplyError converts a reply that go-smtp returned, removing the secrets a
// hostile server might echo. go-smtp keeps the enhanced code in the text when
// the reply is a success or when it could not parse it.
func newReplyError(command, recipient string, e *gosmtp.SMTPError, redact func(string) string) *ReplyError {
	out := &ReplyError{Command: command, Recipient: recipient, Code: e.Code}
	msg := e.Message
	if e.EnhancedCode != gosmtp.NoEnhancedCode && e.EnhancedCode != gosmtp.EnhancedCodeNotSet {
		out.EnhancedCode = fmt.Sprintf("%d.%d.%d", e.EnhancedCode[0], e.EnhancedCode[1], e.EnhancedCode[2])
	}
	// go-smtp strips the enhanced code of the first line only.
	out.EnhancedCode, msg = stripEnhancedCode(out.EnhancedCode, msg)
	out.Message = redact(msg)
	return out
}

// stripEnhancedCode removes the enhanced status code from the lines of a reply that repeat
// it. With code "" it takes the first line's code, if any, and returns it.
func stripEnhancedCode(code, text string) (string, string) {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		lineCode, rest, ok := cutEnhancedCode(line)
		if !ok {
			continue
		}
		if code == "" && i == 0 {
			code = lineCode
		}
		if lineCode == code {
			lines[i] = rest
		}
	}
	return code, strings.Join(lines, "\n")
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

// As reaches the typed errors of the cause (they hold redacted text: only
// the wrapping error's text carried the secret).
func (e *redactedError) As(target any) bool {
	switch target.(type) {
	case **ReplyError, **RecipientsError, **SizeError:
		return errors.As(e.cause, target)
	}
	return false
}

package smtp

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"

	"github.com/go-sendloop/sendloop/internal/address"
)

// Message is an email to send through the relay: either built from its parts
// (Subject, Text, HTML, Inline, Attachments, ExtraHeaders) or given whole as
// Raw. It is built with emersion/go-message.
//
// Addresses are "ann@example.com" or "Ann Lee <ann@example.com>"; display
// names may be any text. The addresses themselves follow the shared rule of
// the sendloop packages (internal/address); a non-ASCII one needs a server
// offering SMTPUTF8.
type Message struct {
	// From is the author, also used as the envelope sender (MAIL FROM).
	From string
	// To, Cc and Bcc all become envelope recipients (RCPT TO); Bcc never
	// appears in the header.
	To, Cc, Bcc []string
	// ReplyTo, if set, is written as the Reply-To header.
	ReplyTo string
	// Subject may be any text; non-ASCII text is written as RFC 2047
	// encoded-words. CR and LF are refused.
	Subject string
	// Text is the plain-text body, HTML the HTML body; with both, the message
	// is multipart/alternative. Both are sent as UTF-8 quoted-printable.
	Text, HTML string
	// Inline are parts the HTML body refers to by "cid:" URLs, typically
	// images: with them the HTML part and the inline parts form a
	// multipart/related. They need an HTML body.
	Inline []Inline
	// Attachments, if any, make the message multipart/mixed.
	Attachments []Attachment
	// ListUnsubscribe are the unsubscribe URIs of the List-Unsubscribe
	// header (RFC 2369): https: or http: URLs and mailto: addresses, in order
	// of preference. Large mailbox providers require it of bulk senders.
	ListUnsubscribe []string
	// ListUnsubscribeOneClick adds "List-Unsubscribe-Post:
	// List-Unsubscribe=One-Click" (RFC 8058): the https URL of
	// ListUnsubscribe then unsubscribes on a POST, with no further step. It
	// needs an https URL in ListUnsubscribe.
	ListUnsubscribeOneClick bool
	// ExtraHeaders are further header fields, written in order after the
	// standard ones: In-Reply-To, References, X- headers of your own, ... A
	// value with non-ASCII text is written as RFC 2047 encoded-words (except
	// in structured fields such as In-Reply-To, where it is refused). The
	// fields the builder writes itself (From, To, Cc, Bcc, Reply-To,
	// Subject, Date, Message-ID, MIME-Version, Content-*, X-SL-*) are refused
	// with ErrReservedHeader: use the Message fields and Headers.
	ExtraHeaders []Field
	// Headers are the X-SL-* options of the Sendloop relay.
	Headers Headers
	// Date is written as the Date header; the zero value means the time of
	// building.
	Date time.Time
	// MessageID is written as the Message-ID header, with or without angle
	// brackets; empty means a random one at the domain of From. Send returns
	// the one used.
	MessageID string
	// Raw, when not nil, is a complete RFC 5322 message built elsewhere: it is
	// sent as is, after the X-SL-* header fields of Headers (and a generated
	// Message-ID when it has none), and Subject, Text, HTML, Inline,
	// Attachments, ListUnsubscribe, ExtraHeaders, ReplyTo, Date and MessageID
	// must be left empty. Raw must not already carry an X-SL-* field that
	// Headers adds (that is an ErrDuplicateHeader); the X-SL-* fields it
	// carries otherwise are sent unchanged. From, To, Cc and Bcc still give
	// the envelope.
	Raw []byte
}

// Attachment is a file attached to a Message, sent base64-encoded.
type Attachment struct {
	// Filename is the name shown to the recipient; it may be any text.
	Filename string
	// ContentType is the MIME type, e.g. "application/pdf"; empty means
	// guessed from the extension of Filename, else application/octet-stream.
	ContentType string
	// Data is the content.
	Data []byte
}

// Inline is a part of a multipart/related message, shown inside the HTML
// body, which refers to it as "cid:" + ContentID.
type Inline struct {
	// ContentID identifies the part, with or without angle brackets, e.g.
	// "logo@example.com"; the HTML refers to it as src="cid:logo@example.com".
	// A bare file name such as "logo.png" is accepted too (src="cid:logo.png"):
	// mail clients resolve cid: URLs by the Content-ID as written.
	ContentID string
	// Filename is the name offered if the recipient saves the part; optional.
	Filename string
	// ContentType is the MIME type, e.g. "image/png"; empty means guessed
	// from the extension of Filename.
	ContentType string
	// Data is the content.
	Data []byte
}

// maxLineLength is the RFC 5322 limit, CRLF excluded; foldAt is the
// recommended one, which the X-SL builder keeps to where it can.
const (
	maxLineLength = 998
	foldAt        = 78
)

// envelope is the SMTP envelope of a message.
type envelope struct {
	from  string
	rcpts []string
	utf8  bool // an address is not ASCII: SMTPUTF8 is needed
}

// envelope returns the envelope sender and the recipients of m: To, Cc and
// Bcc, without duplicates.
func (m *Message) envelope() (envelope, error) {
	var env envelope
	sender, err := parseAddress("From", m.From)
	if err != nil {
		return env, err
	}
	env.from = sender.Address
	env.utf8 = !isASCII(sender.Address)
	seen := make(map[string]bool)
	for _, list := range []struct {
		field string
		addrs []string
	}{{"To", m.To}, {"Cc", m.Cc}, {"Bcc", m.Bcc}} {
		for _, a := range list.addrs {
			addr, err := parseAddress(list.field, a)
			if err != nil {
				return env, err
			}
			key := strings.ToLower(addr.Address)
			if !seen[key] {
				seen[key] = true
				env.rcpts = append(env.rcpts, addr.Address)
				env.utf8 = env.utf8 || !isASCII(addr.Address)
			}
		}
	}
	if len(env.rcpts) == 0 {
		return env, ErrNoRecipients
	}
	if m.ReplyTo != "" {
		addr, err := parseAddress("ReplyTo", m.ReplyTo)
		if err != nil {
			return env, err
		}
		// A non-ASCII Reply-To travels as raw UTF-8 in the header: it needs SMTPUTF8 too.
		env.utf8 = env.utf8 || !isASCII(addr.Address)
	}
	return env, nil
}

func parseAddress(field, s string) (*mail.Address, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &AddressError{Field: field, Address: s, Err: errors.New("empty address")}
	}
	if strings.ContainsAny(s, "\r\n") {
		return nil, &AddressError{Field: field, Address: s, Err: fmt.Errorf("%w: CR or LF", ErrInvalidCharacter)}
	}
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return nil, &AddressError{Field: field, Address: s, Err: err}
	}
	if !address.Valid(addr.Address) {
		return nil, &AddressError{Field: field, Address: s, Err: errors.New("not an address mail systems accept (a host name with a dot, labels without leading or trailing hyphens, RFC 5321 lengths)")}
	}
	return addr, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Bytes returns the message as sent, with CRLF line endings: the built
// message, or Raw preceded by the X-SL-* fields. It checks the message as
// Send does. Each call generates a new Message-ID when MessageID is empty.
func (m *Message) Bytes() ([]byte, error) {
	data, _, err := m.build()
	return data, err
}

// build checks m and returns the message as sent and its Message-ID, with
// angle brackets.
func (m *Message) build() (data []byte, messageID string, err error) {
	env, err := m.envelope()
	if err != nil {
		return nil, "", err
	}
	fields, err := m.Headers.Fields()
	if err != nil {
		return nil, "", err
	}
	if m.Raw != nil {
		return m.rawBytes(env, fields)
	}
	return m.buildMIME(env, fields)
}

func (m *Message) rawBytes(env envelope, fields []Field) ([]byte, string, error) {
	if m.Subject != "" || m.Text != "" || m.HTML != "" || len(m.Attachments) > 0 || len(m.Inline) > 0 ||
		len(m.ListUnsubscribe) > 0 || m.ListUnsubscribeOneClick || len(m.ExtraHeaders) > 0 ||
		m.ReplyTo != "" || !m.Date.IsZero() || m.MessageID != "" {
		return nil, "", errors.New("sendloop/smtp: a Message with Raw must leave Subject, Text, HTML, Inline, Attachments, ListUnsubscribe, ExtraHeaders, ReplyTo, Date and MessageID empty")
	}
	existing, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(m.Raw)))
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, "", fmt.Errorf("sendloop/smtp: raw message header: %w", err)
	}
	var buf bytes.Buffer
	for _, f := range fields {
		if existing.Has(f.Name) {
			return nil, "", &HeaderError{Header: f.Name, Err: fmt.Errorf("%w: the raw message already has it", ErrDuplicateHeader)}
		}
		raw, err := jsonHeaderField(f.Name, f.Value)
		if err != nil {
			return nil, "", err
		}
		buf.Write(raw)
	}
	msgID := strings.TrimSpace(existing.Get("Message-Id"))
	if msgID == "" {
		msgID = newMessageID(env.from)
		buf.WriteString("Message-ID: " + msgID + "\r\n")
	}
	buf.Write(m.Raw)
	return buf.Bytes(), msgID, nil
}

// headerList collects header fields in the order they are to be written:
// go-message writes a Header's fields in the reverse order of their addition.
type headerList struct {
	fields []headerItem
}

type headerItem struct {
	key, value string
	raw        []byte
}

func (l *headerList) add(key, value string) {
	l.fields = append(l.fields, headerItem{key: key, value: value})
}

func (l *headerList) addRaw(raw []byte) { l.fields = append(l.fields, headerItem{raw: raw}) }

// header returns the fields as a go-message header. Values are folded here
// before spaces, so that lines keep within 78 characters where the words
// allow: go-message puts a whole value on one line when its first word is
// longer than the first line allows, as an encoded-word often is.
func (l *headerList) header() (message.Header, error) {
	var h message.Header
	for i := len(l.fields) - 1; i >= 0; i-- {
		f := l.fields[i]
		if f.raw == nil {
			folded, err := foldText(f.key, f.value)
			if err != nil {
				return h, err
			}
			f.raw = []byte(f.key + ": " + folded + "\r\n")
		}
		h.AddRaw(f.raw)
	}
	return h, nil
}

// foldText folds value before spaces so that lines stay within 78
// characters where possible; the result goes after "name: ".
func foldText(name, value string) (string, error) {
	var segments []string
	start := 0
	for i := 1; i < len(value); i++ {
		if value[i] == ' ' && value[i-1] != ' ' {
			segments = append(segments, value[start:i])
			start = i
		}
	}
	segments = append(segments, value[start:])
	return fold(name, segments, "")
}

func (m *Message) buildMIME(env envelope, fields []Field) ([]byte, string, error) {
	if err := checkHeaderText("Subject", m.Subject); err != nil {
		return nil, "", err
	}
	var top headerList
	from, _ := mail.ParseAddress(m.From) // checked by envelope
	top.add("From", from.String())
	for _, list := range []struct {
		name  string
		addrs []string
	}{{"To", m.To}, {"Cc", m.Cc}} {
		if len(list.addrs) == 0 {
			continue
		}
		formatted := make([]string, len(list.addrs))
		for i, a := range list.addrs {
			addr, _ := mail.ParseAddress(a)
			formatted[i] = addr.String()
		}
		top.add(list.name, strings.Join(formatted, ", "))
	}
	if m.ReplyTo != "" {
		addr, _ := mail.ParseAddress(m.ReplyTo)
		top.add("Reply-To", addr.String())
	}
	top.add("Subject", encodeText(m.Subject))
	date := m.Date
	if date.IsZero() {
		date = time.Now()
	}
	top.add("Date", date.Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	msgID := newMessageID(env.from)
	if m.MessageID != "" {
		id, err := checkMessageID("Message-ID", m.MessageID)
		if err != nil {
			return nil, "", err
		}
		msgID = id
	}
	top.add("Message-ID", msgID)
	if err := m.listUnsubscribe(&top); err != nil {
		return nil, "", err
	}
	for _, f := range m.ExtraHeaders {
		if err := m.extraHeader(&top, f); err != nil {
			return nil, "", err
		}
	}
	for _, f := range fields {
		raw, err := jsonHeaderField(f.Name, f.Value)
		if err != nil {
			return nil, "", err
		}
		top.addRaw(raw)
	}
	top.add("MIME-Version", "1.0")

	root, err := m.body()
	if err != nil {
		return nil, "", err
	}
	for _, f := range root.header {
		top.add(f.key, f.value)
	}
	header, err := top.header()
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	w, err := message.CreateWriter(&buf, header)
	if err != nil {
		return nil, "", fmt.Errorf("sendloop/smtp: building the message: %w", err)
	}
	if err := root.writeBody(w); err != nil {
		return nil, "", fmt.Errorf("sendloop/smtp: building the message: %w", err)
	}
	if root.children == nil && !bytes.HasSuffix(buf.Bytes(), []byte("\r\n")) {
		// End with CRLF like every other line, with a quoted-printable soft
		// line break, which adds nothing to the decoded text. (In a
		// multipart body the CRLF before a boundary belongs to the boundary.)
		buf.WriteString("=\r\n")
	}
	return buf.Bytes(), msgID, nil
}

// encodeText writes unstructured header text as RFC 2047 encoded-words when
// it is not plain ASCII, or when it holds "=?", which a reader would take for
// the start of an encoded-word.
func encodeText(s string) string {
	if !strings.Contains(s, "=?") {
		return mime.QEncoding.Encode("utf-8", s)
	}
	// mime encodes only text that needs it: encode the words by hand, in
	// base64 chunks that keep each encoded-word within 75 characters.
	const chunk = 45 // 60 base64 characters, plus "=?utf-8?b?" and "?="
	var words []string
	for start := 0; start < len(s); {
		end := min(start+chunk, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[start:end]))+"?=")
		start = end
	}
	return strings.Join(words, " ")
}

// checkHeaderText refuses CR, LF and the other control characters but tab,
// and invalid UTF-8, in a header value.
func checkHeaderText(name, value string) error {
	if strings.ContainsAny(value, "\r\n") {
		return &HeaderError{Header: name, Err: fmt.Errorf("%w: CR or LF", ErrInvalidCharacter)}
	}
	if !utf8.ValidString(value) || strings.IndexFunc(value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
		return &HeaderError{Header: name, Err: fmt.Errorf("%w: a control character or invalid UTF-8", ErrInvalidCharacter)}
	}
	return nil
}

// checkMessageID checks a message ID given with or without angle brackets
// and returns it with them.
func checkMessageID(header, s string) (string, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	left, right, ok := strings.Cut(id, "@")
	if !ok || left == "" || right == "" || strings.Contains(right, "@") ||
		strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`<>()[]\",;:`, r) }) >= 0 {
		return "", &HeaderError{Header: header, Key: s, Err: fmt.Errorf("%w: want id-left@id-right in printable ASCII", ErrInvalidCharacter)}
	}
	return "<" + id + ">", nil
}

// newMessageID returns a random message ID at the domain of from.
func newMessageID(from string) string {
	var random [16]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read does not fail (Go 1.24 documents it; before, only on a broken system)
	domain := "localhost"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && isASCII(from[at+1:]) {
		domain = strings.ToLower(from[at+1:])
	}
	return "<" + hex.EncodeToString(random[:]) + "@" + domain + ">"
}

// jsonHeaderField formats an X-SL JSON header as a raw field, folded after
// commas outside JSON strings: the space starting each continuation line is
// whitespace between JSON tokens, so the unfolded value parses the same.
// (go-message would fold inside a JSON string, adding a space to it.)
func jsonHeaderField(name, value string) ([]byte, error) {
	var segments []string
	start, inString, escaped := 0, false, false
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == ',':
			segments = append(segments, value[start:i+1])
			start = i + 1
		}
	}
	segments = append(segments, value[start:])
	folded, err := fold(name, segments, " ")
	if err != nil {
		return nil, err
	}
	return []byte(name + ": " + folded + "\r\n"), nil
}

// fold joins the segments, starting a new line before a segment when the
// line, "name: " included, would pass foldAt. A continuation line starts
// with indent then the segment. A line longer than the RFC 5322 limit is an
// error.
func fold(name string, segments []string, indent string) (string, error) {
	var out strings.Builder
	lineLen := len(name) + 2
	for i, seg := range segments {
		if i > 0 && lineLen+len(seg) > foldAt {
			if lineLen > maxLineLength {
				return "", &HeaderError{Header: name, Err: ErrLineTooLong}
			}
			out.WriteString("\r\n" + indent)
			lineLen = len(indent)
		}
		out.WriteString(seg)
		lineLen += len(seg)
	}
	if lineLen > maxLineLength {
		return "", &HeaderError{Header: name, Err: ErrLineTooLong}
	}
	return out.String(), nil
}

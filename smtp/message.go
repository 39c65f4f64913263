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
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/address"
)

// Message is an email to send through the relay: either built from its parts
// (Subject, Text, HTML, Attachments) or given whole as Raw.
//
// Addresses are parsed with net/mail.ParseAddress: "ann@example.com" and
// "Ann Lee <ann@example.com>" both work. The addresses themselves must be
// ASCII (use punycode for internationalized domains); display names may be
// any text.
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
	// Attachments, if any, make the message multipart/mixed.
	Attachments []Attachment
	// Headers are the X-SL-* options of the Sendloop relay.
	Headers Headers
	// Date is written as the Date header; the zero value means the time of
	// sending.
	Date time.Time
	// MessageID is written as the Message-ID header, with or without angle
	// brackets; empty means a random one at the domain of From.
	MessageID string
	// Raw, when not nil, is a complete RFC 5322 message built elsewhere: it is
	// sent as is, after the X-SL-* header fields of Headers, and Subject,
	// Text, HTML, Attachments, ReplyTo, Date and MessageID must be left
	// empty. Raw must not already carry an X-SL-* field that Headers adds
	// (that is an ErrDuplicateHeader); the X-SL-* fields it carries otherwise
	// are sent unchanged. From, To, Cc and Bcc still give the envelope.
	Raw []byte
}

// Attachment is a file attached to a Message, sent base64-encoded.
type Attachment struct {
	// Filename is the name shown to the recipient; it may be any text.
	Filename string
	// ContentType is the MIME type; empty means guessed from the extension
	// of Filename, else application/octet-stream.
	ContentType string
	// Data is the content.
	Data []byte
}

// maxLineLength is the RFC 5322 limit, CRLF excluded; foldAt is the
// recommended one, which the builder keeps to where it can.
const (
	maxLineLength = 998
	foldAt        = 78
)

// envelope returns the envelope sender and the recipients of m: To, Cc and
// Bcc, without duplicates.
func (m *Message) envelope() (from string, rcpts []string, err error) {
	sender, err := parseAddress("From", m.From)
	if err != nil {
		return "", nil, err
	}
	seen := make(map[string]bool)
	for _, list := range []struct {
		field string
		addrs []string
	}{{"To", m.To}, {"Cc", m.Cc}, {"Bcc", m.Bcc}} {
		for _, a := range list.addrs {
			addr, err := parseAddress(list.field, a)
			if err != nil {
				return "", nil, err
			}
			if !seen[addr.Address] {
				seen[addr.Address] = true
				rcpts = append(rcpts, addr.Address)
			}
		}
	}
	if len(rcpts) == 0 {
		return "", nil, ErrNoRecipients
	}
	if m.ReplyTo != "" {
		if _, err := parseAddress("ReplyTo", m.ReplyTo); err != nil {
			return "", nil, err
		}
	}
	return sender.Address, rcpts, nil
}

func parseAddress(field, s string) (*mail.Address, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &AddressError{Field: field, Address: s, Err: errors.New("empty address")}
	}
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return nil, &AddressError{Field: field, Address: s, Err: err}
	}
	if !address.Valid(addr.Address) {
		return nil, &AddressError{Field: field, Address: s, Err: errors.New("not an address mail systems accept (a host name with a dot, labels without leading or trailing hyphens, RFC 5321 lengths)")}
	}
	for i := 0; i < len(addr.Address); i++ {
		// Non-ASCII addresses need SMTPUTF8, which this client does not do;
		// controls and spaces would break the SMTP command line.
		if c := addr.Address[i]; c <= ' ' || c >= 0x7f {
			return nil, &AddressError{Field: field, Address: s, Err: errors.New("address must be printable ASCII")}
		}
	}
	return addr, nil
}

// Bytes returns the message as sent, with CRLF line endings: the built
// message, or Raw preceded by the X-SL-* fields. It checks the addresses as
// Send does.
func (m *Message) Bytes() ([]byte, error) {
	if _, _, err := m.envelope(); err != nil {
		return nil, err
	}
	fields, err := m.Headers.Fields()
	if err != nil {
		return nil, err
	}
	if m.Raw != nil {
		return m.rawBytes(fields)
	}
	return m.build(fields)
}

func (m *Message) rawBytes(fields []Field) ([]byte, error) {
	if m.Subject != "" || m.Text != "" || m.HTML != "" || len(m.Attachments) > 0 ||
		m.ReplyTo != "" || !m.Date.IsZero() || m.MessageID != "" {
		return nil, errors.New("sendloop/smtp: a Message with Raw must leave Subject, Text, HTML, Attachments, ReplyTo, Date and MessageID empty")
	}
	existing, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(m.Raw))).ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("sendloop/smtp: raw message header: %w", err)
	}
	var buf bytes.Buffer
	for _, f := range fields {
		if _, ok := existing[textproto.CanonicalMIMEHeaderKey(f.Name)]; ok {
			return nil, &HeaderError{Header: f.Name, Err: fmt.Errorf("%w: the raw message already has it", ErrDuplicateHeader)}
		}
		if err := writeJSONHeader(&buf, f.Name, f.Value); err != nil {
			return nil, err
		}
	}
	buf.Write(m.Raw)
	return buf.Bytes(), nil
}

func (m *Message) build(fields []Field) ([]byte, error) {
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, &HeaderError{Header: "Subject", Err: fmt.Errorf("%w: CR or LF", ErrInvalidCharacter)}
	}
	from, _ := mail.ParseAddress(m.From) // checked by envelope
	var buf bytes.Buffer
	write := func(name, value string) error { return writeTextHeader(&buf, name, value) }

	if err := write("From", from.String()); err != nil {
		return nil, err
	}
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
		if err := write(list.name, strings.Join(formatted, ", ")); err != nil {
			return nil, err
		}
	}
	if m.ReplyTo != "" {
		addr, _ := mail.ParseAddress(m.ReplyTo)
		if err := write("Reply-To", addr.String()); err != nil {
			return nil, err
		}
	}
	if err := write("Subject", encodeSubject(m.Subject)); err != nil {
		return nil, err
	}
	date := m.Date
	if date.IsZero() {
		date = time.Now()
	}
	if err := write("Date", date.Format(time.RFC1123Z)); err != nil {
		return nil, err
	}
	msgID, err := m.messageID(from.Address)
	if err != nil {
		return nil, err
	}
	if err := write("Message-ID", msgID); err != nil {
		return nil, err
	}
	for _, f := range fields {
		if err := writeJSONHeader(&buf, f.Name, f.Value); err != nil {
			return nil, err
		}
	}
	buf.WriteString("MIME-Version: 1.0\r\n")

	var body bytes.Buffer
	contentType, err := m.writeBody(&body)
	if err != nil {
		return nil, err
	}
	if err := write("Content-Type", contentType); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(contentType, "multipart/") {
		buf.WriteString("Content-Transfer-Encoding: quoted-printable\r\n")
		// End with CRLF like every other line; a soft line break adds
		// nothing to the decoded text. (In a multipart body the CRLF before
		// a boundary belongs to the boundary.)
		if body.Len() > 0 && !bytes.HasSuffix(body.Bytes(), []byte("\r\n")) {
			body.WriteString("=\r\n")
		}
	}
	buf.WriteString("\r\n")
	buf.Write(body.Bytes())
	return buf.Bytes(), nil
}

func (m *Message) messageID(fromAddr string) (string, error) {
	if m.MessageID != "" {
		id := strings.Trim(m.MessageID, "<>")
		if id == "" || strings.ContainsAny(id, "<>\r\n\t ") {
			return "", &HeaderError{Header: "Message-ID", Err: fmt.Errorf("%w in %q", ErrInvalidCharacter, m.MessageID)}
		}
		return "<" + id + ">", nil
	}
	var random [16]byte
	if _, err := rand.Read(random[:]); err != nil {
		return "", err
	}
	domain := "localhost"
	if at := strings.LastIndexByte(fromAddr, '@'); at >= 0 {
		domain = strings.ToLower(fromAddr[at+1:])
	}
	return "<" + hex.EncodeToString(random[:]) + "@" + domain + ">", nil
}

// writeBody writes the body below the top-level header and returns the
// top-level Content-Type. Single-part messages are quoted-printable text.
func (m *Message) writeBody(w io.Writer) (string, error) {
	if len(m.Attachments) == 0 {
		return m.writeAlternative(w)
	}
	mixed, err := newMultipartWriter(w)
	if err != nil {
		return "", err
	}
	var inner bytes.Buffer
	innerType, err := m.writeAlternative(&inner)
	if err != nil {
		return "", err
	}
	innerType, err = foldValue("Content-Type", innerType)
	if err != nil {
		return "", err
	}
	partHeader := textproto.MIMEHeader{"Content-Type": {innerType}}
	if !strings.HasPrefix(innerType, "multipart/") {
		partHeader.Set("Content-Transfer-Encoding", "quoted-printable")
	}
	part, err := mixed.CreatePart(partHeader)
	if err != nil {
		return "", err
	}
	if _, err := part.Write(inner.Bytes()); err != nil {
		return "", err
	}
	for i, a := range m.Attachments {
		if err := writeAttachment(mixed, a); err != nil {
			return "", fmt.Errorf("sendloop/smtp: attachment %d (%q): %w", i, a.Filename, err)
		}
	}
	if err := mixed.Close(); err != nil {
		return "", err
	}
	return mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": mixed.Boundary()}), nil
}

// writeAlternative writes the text part, the HTML part, or both as
// multipart/alternative (plain text first, as RFC 2046 orders by preference).
func (m *Message) writeAlternative(w io.Writer) (string, error) {
	const textType, htmlType = "text/plain; charset=utf-8", "text/html; charset=utf-8"
	switch {
	case m.HTML == "":
		return textType, writeQuotedPrintable(w, m.Text)
	case m.Text == "":
		return htmlType, writeQuotedPrintable(w, m.HTML)
	}
	alt, err := newMultipartWriter(w)
	if err != nil {
		return "", err
	}
	for _, p := range []struct{ contentType, content string }{{textType, m.Text}, {htmlType, m.HTML}} {
		part, err := alt.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.contentType},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return "", err
		}
		if err := writeQuotedPrintable(part, p.content); err != nil {
			return "", err
		}
	}
	if err := alt.Close(); err != nil {
		return "", err
	}
	return mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": alt.Boundary()}), nil
}

// newMultipartWriter uses boundaries short enough for the Content-Type line
// to keep within 78 characters. "=_" never occurs in quoted-printable or
// base64 text, so the boundary cannot collide with a part.
func newMultipartWriter(w io.Writer) (*multipart.Writer, error) {
	var random [12]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, err
	}
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary("=_" + hex.EncodeToString(random[:])); err != nil {
		return nil, err
	}
	return mw, nil
}

func writeQuotedPrintable(w io.Writer, content string) error {
	qp := quotedprintable.NewWriter(w)
	if _, err := io.WriteString(qp, content); err != nil {
		return err
	}
	return qp.Close()
}

func writeAttachment(mw *multipart.Writer, a Attachment) error {
	contentType := a.ContentType
	if contentType == "" {
		contentType = mime.TypeByExtension(filepath.Ext(a.Filename))
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("content type %q: %w", contentType, err)
	}
	disposition := "attachment"
	if a.Filename != "" {
		if strings.ContainsAny(a.Filename, "\r\n") {
			return fmt.Errorf("filename: %w: CR or LF", ErrInvalidCharacter)
		}
		params["name"] = a.Filename
		// FormatMediaType writes non-ASCII names as RFC 2231 parameters.
		disposition = mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename})
	}
	contentType = mime.FormatMediaType(mediaType, params)
	if contentType == "" || disposition == "" {
		return fmt.Errorf("filename %q or content type cannot be encoded", a.Filename)
	}
	header := textproto.MIMEHeader{"Content-Transfer-Encoding": {"base64"}}
	// multipart.Writer does not fold: the values are given folded.
	for name, value := range map[string]string{"Content-Type": contentType, "Content-Disposition": disposition} {
		folded, err := foldValue(name, value)
		if err != nil {
			return err
		}
		header.Set(name, folded)
	}
	part, err := mw.CreatePart(header)
	if err != nil {
		return err
	}
	return writeBase64(part, a.Data)
}

func writeBase64(w io.Writer, data []byte) error {
	const lineLen = 76 // RFC 2045 limit for base64 lines
	encoded := base64.StdEncoding.EncodeToString(data)
	for len(encoded) > 0 {
		n := min(lineLen, len(encoded))
		if _, err := io.WriteString(w, encoded[:n]+"\r\n"); err != nil {
			return err
		}
		encoded = encoded[n:]
	}
	return nil
}

// encodedWordLen keeps "Subject: " and one encoded-word within 78
// characters.
const encodedWordLen = foldAt - len("Subject: ") - 3

// encodeSubject writes a subject that is not plain printable ASCII as
// encoded-words: Q when the text is mostly ASCII (readable), B otherwise
// (shorter). Unlike mime.WordEncoder it makes words short enough for the
// first line to keep within 78 characters.
func encodeSubject(s string) string {
	nonASCII, plain := 0, true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			nonASCII++
			plain = false
		} else if c < ' ' || c == 0x7f {
			plain = false
		}
	}
	if plain && !strings.Contains(s, "=?") {
		return s
	}
	encode := qEncodeWord
	if nonASCII*3 > len(s) {
		encode = bEncodeWord
	}
	var words []string
	start := 0
	// Cut between runes only, so that every word holds valid UTF-8.
	for start < len(s) {
		end := start
		for end < len(s) {
			_, size := utf8.DecodeRuneInString(s[end:])
			if end > start && len(encode(s[start:end+size])) > encodedWordLen {
				break
			}
			end += size
		}
		words = append(words, encode(s[start:end]))
		start = end
	}
	return strings.Join(words, " ")
}

func bEncodeWord(s string) string {
	return "=?utf-8?b?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// qEncodeWord encodes s as a Q encoded-word for unstructured text (RFC 2047
// section 5(1)): printable ASCII but "=", "?" and "_" stays as is, and a
// space becomes "_".
func qEncodeWord(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("=?utf-8?q?")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			b.WriteByte('_')
		case c > ' ' && c < 0x7f && c != '=' && c != '?' && c != '_':
			b.WriteByte(c)
		default:
			b.WriteByte('=')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0x0f])
		}
	}
	b.WriteString("?=")
	return b.String()
}

// writeTextHeader writes an unstructured or address header, folded.
func writeTextHeader(w *bytes.Buffer, name, value string) error {
	folded, err := foldValue(name, value)
	if err != nil {
		return err
	}
	w.WriteString(name + ": " + folded + "\r\n")
	return nil
}

// foldValue folds value before spaces so that lines stay within 78
// characters where possible; the result goes after "name: ".
func foldValue(name, value string) (string, error) {
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

// writeJSONHeader writes an X-SL JSON header, folding after commas outside
// JSON strings: the space starting each continuation line is whitespace
// between JSON tokens, so the unfolded value parses the same.
func writeJSONHeader(w *bytes.Buffer, name, value string) error {
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
		return err
	}
	w.WriteString(name + ": " + folded + "\r\n")
	return nil
}

// fold joins the segments, starting a new line before a segment when the
// line, "name: " included, would pass foldAt. A continuation line starts
// with indent then the segment: segments of text begin with their own
// space, JSON segments need one. A line longer than the RFC 5322 limit is an
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

package smtp

import (
	"errors"
	"fmt"
	stdtextproto "net/textproto"
	"net/url"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
)

// listUnsubscribe adds List-Unsubscribe and List-Unsubscribe-Post.
func (m *Message) listUnsubscribe(top *headerList) error {
	const name, postName = "List-Unsubscribe", "List-Unsubscribe-Post"
	if len(m.ListUnsubscribe) == 0 {
		if m.ListUnsubscribeOneClick {
			return &HeaderError{Header: postName, Err: errors.New("one-click unsubscription needs an https URL in ListUnsubscribe")}
		}
		return nil
	}
	for _, f := range m.ExtraHeaders {
		if strings.EqualFold(f.Name, name) || strings.EqualFold(f.Name, postName) {
			return &HeaderError{Header: f.Name, Err: fmt.Errorf("%w: set by ListUnsubscribe and in ExtraHeaders", ErrDuplicateHeader)}
		}
	}
	uris := make([]string, len(m.ListUnsubscribe))
	hasHTTPS := false
	for i, s := range m.ListUnsubscribe {
		if err := checkHeaderText(name, s); err != nil {
			return err
		}
		s = percentEncodeNonASCII(s)
		u, err := url.Parse(s)
		bad := err != nil || strings.ContainsAny(s, " \t<>,")
		switch {
		case bad:
		case strings.EqualFold(u.Scheme, "mailto"):
			to, _ := url.PathUnescape(strings.SplitN(u.Opaque, "?", 2)[0])
			bad = u.Opaque == "" || !address.Valid(to)
		case strings.EqualFold(u.Scheme, "https"), strings.EqualFold(u.Scheme, "http"):
			bad = u.Host == ""
			hasHTTPS = hasHTTPS || strings.EqualFold(u.Scheme, "https") && !bad
		default:
			bad = true
		}
		if bad {
			return &HeaderError{Header: name, Key: m.ListUnsubscribe[i], Err: errors.New("want an http(s) URL or a mailto: address, without spaces, < > or commas")}
		}
		uris[i] = "<" + s + ">"
	}
	top.add(name, strings.Join(uris, ", "))
	if m.ListUnsubscribeOneClick {
		if !hasHTTPS {
			return &HeaderError{Header: postName, Err: errors.New("one-click unsubscription (RFC 8058) needs an https URL in ListUnsubscribe")}
		}
		top.add(postName, "List-Unsubscribe=One-Click")
	}
	return nil
}

// percentEncodeNonASCII maps an IRI to a URI as RFC 3987, section 3.1, does:
// every byte of a non-ASCII character's UTF-8 form becomes %XX, the rest is
// left as it is.
func percentEncodeNonASCII(s string) string {
	if isASCII(s) {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// reservedHeaders are written by the builder; ExtraHeaders cannot set them.
var reservedHeaders = map[string]bool{
	"From": true, "To": true, "Cc": true, "Bcc": true, "Reply-To": true, "Subject": true,
	"Date": true, "Message-Id": true, "Mime-Version": true,
}

// structuredHeaders must be ASCII: encoded-words would break their syntax.
var structuredHeaders = map[string]bool{
	"In-Reply-To": true, "References": true, "List-Unsubscribe": true, "List-Unsubscribe-Post": true,
	"List-Id": true, "List-Post": true, "List-Help": true, "List-Subscribe": true, "List-Owner": true,
	"List-Archive": true, "Return-Path": true, "Sender": true, "Resent-Message-Id": true,
	"Feedback-Id": true, "Auto-Submitted": true, "Precedence": true,
}

func (m *Message) extraHeader(top *headerList, f Field) error {
	if f.Name == "" || strings.IndexFunc(f.Name, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == ':' }) >= 0 {
		return &HeaderError{Header: f.Name, Err: fmt.Errorf("%w in the header name: want printable ASCII without spaces or colons", ErrInvalidCharacter)}
	}
	key := stdtextproto.CanonicalMIMEHeaderKey(f.Name)
	if reservedHeaders[key] || strings.HasPrefix(key, "Content-") || strings.HasPrefix(key, "X-Sl-") {
		return &HeaderError{Header: f.Name, Err: ErrReservedHeader}
	}
	if err := checkHeaderText(f.Name, f.Value); err != nil {
		return err
	}
	value := f.Value
	if !isASCII(value) && structuredHeaders[key] {
		return &HeaderError{Header: f.Name, Err: fmt.Errorf("%w: a structured field must be ASCII", ErrInvalidCharacter)}
	}
	if !structuredHeaders[key] {
		value = encodeText(value)
	}
	if key == "In-Reply-To" || key == "References" {
		for _, id := range strings.Fields(value) {
			if _, err := checkMessageID(f.Name, id); err != nil || !strings.HasPrefix(id, "<") {
				return &HeaderError{Header: f.Name, Key: id, Err: errors.New("want message IDs in angle brackets, <id@host>, separated by spaces")}
			}
		}
	}
	for _, word := range strings.Fields(value) {
		// go-message folds at spaces; a longer word would have to be cut.
		if len(word) > maxLineLength-len(f.Name)-2 {
			return &HeaderError{Header: f.Name, Err: ErrLineTooLong}
		}
	}
	top.add(f.Name, value)
	return nil
}

package transport

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Redactor removes secrets from text, in every form a server might echo them: as sent,
// form- or path-escaped (either hex case), and JSON-escaped (PHP writes '/' as '\/').
// The zero Redactor removes nothing.
type Redactor struct {
	replacer *strings.Replacer
	raw      []string
	forms    []string
	maxLen   int
}

const redactedText = "[REDACTED]"

// NewRedactor returns a Redactor for secrets; empty ones are ignored.
func NewRedactor(secrets ...string) Redactor {
	var r Redactor
	seen := map[string]bool{}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		r.raw = append(r.raw, s)
		for _, form := range secretForms(s) {
			if form != "" && !seen[form] {
				seen[form] = true
				r.forms = append(r.forms, form)
				r.maxLen = max(r.maxLen, len(form))
			}
		}
	}
	if len(r.forms) == 0 {
		return r
	}
	// Longest first, so that an escaped form is replaced whole before a raw one inside it.
	pairs := make([]string, 0, 2*len(r.forms))
	for _, f := range sortedByLength(r.forms) {
		pairs = append(pairs, f, redactedText)
	}
	r.replacer = strings.NewReplacer(pairs...)
	return r
}

var percentHex = regexp.MustCompile(`%[0-9A-F]{2}`)

func secretForms(s string) []string {
	query := url.QueryEscape(s)
	path := url.PathEscape(s)
	quoted, _ := json.Marshal(s)
	jsonForm := strings.Trim(string(quoted), `"`)
	return []string{
		s, query, percentHex.ReplaceAllStringFunc(query, strings.ToLower),
		path, percentHex.ReplaceAllStringFunc(path, strings.ToLower),
		jsonForm, strings.ReplaceAll(jsonForm, "/", `\/`), asciiJSON(s),
	}
}

// asciiJSON escapes s as PHP's json_encode does by default: '/' and non-ASCII escaped.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/':
			b.WriteString(`\/`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r >= utf8.RuneSelf:
			if r > 0xffff {
				r1, r2 := utf16Pair(r)
				writeU(&b, r1)
				writeU(&b, r2)
			} else {
				writeU(&b, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func writeU(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	b.WriteByte(hex[r>>12&0xf])
	b.WriteByte(hex[r>>8&0xf])
	b.WriteByte(hex[r>>4&0xf])
	b.WriteByte(hex[r&0xf])
}

func sortedByLength(forms []string) []string {
	out := append([]string(nil), forms...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Redact returns s without the secrets.
func (r Redactor) Redact(s string) string {
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// Contains reports whether b holds a secret in any of its forms.
func (r Redactor) Contains(b []byte) bool {
	for _, f := range r.forms {
		if strings.Contains(string(b), f) {
			return true
		}
	}
	return false
}

// RedactHead returns at most the first limit bytes of body as text, secrets removed. When
// the body is longer, the tail where a cut secret could start is dropped too, so that no
// part of one survives the cut.
func (r Redactor) RedactHead(body []byte, limit int) string {
	head, truncated := body, false
	if len(head) > limit {
		head, truncated = head[:limit], true
	}
	text := r.Redact(string(head))
	if truncated && r.maxLen > 1 {
		text = text[:max(len(text)-(r.maxLen-1), 0)]
	}
	return text
}

// With returns a Redactor that also removes extra secrets, for one request that carries
// secrets of its own (a new password).
func (r Redactor) With(extra ...string) Redactor {
	return NewRedactor(append(append([]string(nil), r.raw...), extra...)...)
}

package sendlooptest

import (
	"net/url"
	"strconv"
	"strings"
)

// parseForm reads a form body as url.ParseQuery does (pairs with a malformed escape are
// skipped), about twice as fast: the body is copied to a string once and every part that
// needs no unescaping is a slice of it, and the map is sized up front. Import bodies carry
// thousands of keys, and the fake parses every request.
func parseForm(body []byte) url.Values {
	text := string(body)
	form := make(url.Values, strings.Count(text, "&")+1)
	var scratch []byte
	for text != "" {
		var pair string
		pair, text, _ = strings.Cut(text, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		var key, value string
		var ok bool
		if key, scratch, ok = formUnescape(k, scratch); !ok {
			continue
		}
		if value, scratch, ok = formUnescape(v, scratch); !ok {
			continue
		}
		if values, found := form[key]; found {
			form[key] = append(values, value)
		} else {
			form[key] = []string{value}
		}
	}
	return form
}

// formUnescape decodes '+' and %XX, using scratch as its buffer; it reports false for a
// malformed escape.
func formUnescape(s string, scratch []byte) (string, []byte, bool) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, scratch, true
	}
	out := scratch[:0]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(s) {
				return "", out, false
			}
			hi, lo := unhex(s[i+1]), unhex(s[i+2])
			if hi > 15 || lo > 15 {
				return "", out, false
			}
			out = append(out, hi<<4|lo)
			i += 2
		default:
			out = append(out, c)
		}
	}
	return string(out), out, true
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// importParams holds the Subscribers[<n>][<key>] parameters of a body (subscriber.import's
// rows), which parseParams keeps out of the form: an import carries thousands of them, and
// the handler reads them in order with no map of every key. Values stay escaped until read.
type importParams struct {
	entries []importEntry
	sorted  bool // entries are in ascending row order
}

// importEntry is one Subscribers[<n>][<key>] parameter.
type importEntry struct {
	row int
	// field is fieldEmail, a custom field ID, or fieldUnknown for another key (a refused
	// row).
	field int32
	raw   string // the value as written, escaped
}

const (
	fieldEmail   = -1
	fieldUnknown = -2
)

// has reports whether the rows supply the required parameter name.
func (p *importParams) has(name string) bool { return name == "Subscribers" && len(p.entries) > 0 }

// add records the parameter named key (unescaped) with its escaped value when it is a
// row's, and reports whether it was.
func (p *importParams) add(key, raw string) bool {
	rest, found := strings.CutPrefix(key, "Subscribers[")
	if !found {
		return false
	}
	idx, field, found := strings.Cut(rest, "][")
	n, err := strconv.Atoi(idx)
	if !found || err != nil || !strings.HasSuffix(field, "]") {
		return false
	}
	p.addRow(n, field[:len(field)-1], raw)
	return true
}

// addRow records the value of key name of row n.
func (p *importParams) addRow(n int, name, raw string) {
	e := importEntry{row: n, field: fieldUnknown, raw: raw}
	switch {
	case name == "EmailAddress":
		e.field = fieldEmail
	case strings.HasPrefix(name, "CustomField"):
		// An ID past int32 is no field of the service's: the row is refused.
		if id, err := strconv.ParseInt(name[len("CustomField"):], 10, 32); err == nil && id >= 0 {
			e.field = int32(id)
		}
	}
	if len(p.entries) == 0 {
		p.sorted = true
	} else if n < p.entries[len(p.entries)-1].row {
		p.sorted = false
	}
	p.entries = append(p.entries, e)
}

// rowKey reads an escaped key of the form Subscribers%5B<n>%5D%5B<name>%5D (brackets
// escaped or not, n digits, name letters and digits) without unescaping it; ok is false
// for any other key, which then takes the general path.
func rowKey(k string) (n int, name string, ok bool) {
	rest, found := strings.CutPrefix(k, "Subscribers")
	if !found {
		return 0, "", false
	}
	if rest, ok = cutBracket(rest, '['); !ok {
		return 0, "", false
	}
	i := 0
	for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil {
		return 0, "", false
	}
	if rest, ok = cutBracket(rest[i:], ']'); !ok {
		return 0, "", false
	}
	if rest, ok = cutBracket(rest, '['); !ok {
		return 0, "", false
	}
	i = 0
	for i < len(rest) && ('a' <= rest[i] && rest[i] <= 'z' || 'A' <= rest[i] && rest[i] <= 'Z' || '0' <= rest[i] && rest[i] <= '9') {
		i++
	}
	name = rest[:i]
	if rest, ok = cutBracket(rest[i:], ']'); !ok || rest != "" {
		return 0, "", false
	}
	return n, name, true
}

// cutBracket removes a leading bracket c, written as is or %-escaped.
func cutBracket(s string, c byte) (string, bool) {
	if len(s) > 0 && s[0] == c {
		return s[1:], true
	}
	esc := "%5B"
	if c == ']' {
		esc = "%5D"
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], esc) {
		return s[3:], true
	}
	return s, false
}

// validEscapes reports whether every % in s starts an escape formUnescape accepts.
func validEscapes(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+2 >= len(s) || unhex(s[i+1]) > 15 || unhex(s[i+2]) > 15 {
			return false
		}
		s = s[i+3:]
	}
	return true
}

// parseParams is parseForm for a request about to be executed, in the same one pass:
// subscriber.import's rows go into an importParams instead of the form.
func parseParams(body []byte) (url.Values, *importParams) {
	text := string(body)
	form := url.Values{}
	rows := &importParams{}
	if strings.HasPrefix(text, "Subscribers") || strings.Contains(text, "&Subscribers") {
		rows.entries = make([]importEntry, 0, strings.Count(text, "&")+1)
	}
	var scratch []byte
	for text != "" {
		var pair string
		pair, text, _ = strings.Cut(text, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if n, name, ok := rowKey(k); ok {
			if validEscapes(v) {
				rows.addRow(n, name, v)
			}
			continue
		}
		var key, value string
		var ok bool
		if key, scratch, ok = formUnescape(k, scratch); !ok {
			continue
		}
		if strings.HasPrefix(key, "Subscribers[") && validEscapes(v) && rows.add(key, v) {
			continue
		}
		if value, scratch, ok = formUnescape(v, scratch); !ok {
			continue
		}
		form[key] = append(form[key], value)
	}
	return form, rows
}

package sendlooptest

import (
	"bytes"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// the handler reads them in order with no map of every key, no string per value. Values
// stay escaped, where they are in the body, until read.
type importParams struct {
	text    []byte // the body, or a copy of it with the query string's rows appended
	entries []importEntry
	sorted  bool // entries are in ascending row order
}

// importEntry is one Subscribers[<n>][<key>] parameter.
type importEntry struct {
	row int
	// field is fieldEmail, a custom field ID, or fieldUnknown for another key (a refused
	// row).
	field int32
	n     int32 // the escaped value's length
	off   int   // where the escaped value starts in text
}

const (
	fieldEmail   = -1
	fieldUnknown = -2
)

// importParamsPool keeps importParams between imports: their entries run to thousands.
var importParamsPool = sync.Pool{New: func() any { return new(importParams) }}

// release returns p to importParamsPool; p is not used after.
func (p *importParams) release() {
	p.text, p.entries, p.sorted = nil, p.entries[:0], false
	importParamsPool.Put(p)
}

// has reports whether the rows supply the required parameter name.
func (p *importParams) has(name string) bool {
	return p != nil && name == "Subscribers" && len(p.entries) > 0
}

// add records the parameter named key (unescaped) whose escaped value is raw when it is a
// row's, and reports whether it was. raw is appended to text, which is copied first: the
// body belongs to the request log.
func (p *importParams) add(key, raw string) bool {
	n, name, ok := rowOf(key)
	if !ok {
		return false
	}
	off := len(p.text)
	p.text = append(slices.Clip(p.text), raw...)
	p.addRow(n, []byte(name), off, len(raw))
	return true
}

// rowOf reads an unescaped key Subscribers[<n>][<name>].
func rowOf(key string) (n int, name string, ok bool) {
	rest, found := strings.CutPrefix(key, "Subscribers[")
	if !found {
		return 0, "", false
	}
	idx, field, found := strings.Cut(rest, "][")
	n, err := strconv.Atoi(idx)
	if !found || err != nil || !strings.HasSuffix(field, "]") {
		return 0, "", false
	}
	return n, field[:len(field)-1], true
}

// addRow records the value of key name of row n, at text[off:off+size].
func (p *importParams) addRow(n int, name []byte, off, size int) {
	e := importEntry{row: n, field: fieldUnknown, off: off, n: int32(size)}
	switch {
	case string(name) == "EmailAddress":
		e.field = fieldEmail
	case bytes.HasPrefix(name, []byte("CustomField")):
		// An ID past int32 is no field of the service's: the row is refused.
		if id, ok := digits(name[len("CustomField"):], math.MaxInt32); ok {
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

// digits reads a decimal number from 0 to limit, signed as strconv.Atoi allows ("+5",
// "-0").
func digits(b []byte, limit int) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg || len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if neg {
		limit = 0
	}
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n = n*10 + int(c-'0'); n > limit {
			return 0, false
		}
	}
	return n, true
}

// rowKey reads an escaped key of the form Subscribers%5B<n>%5D%5B<name>%5D (brackets
// escaped or not, n digits, name letters and digits) without unescaping it; ok is false
// for any other key, which then takes the general path.
func rowKey(k []byte) (n int, name []byte, ok bool) {
	rest, found := bytes.CutPrefix(k, []byte("Subscribers"))
	if !found {
		return 0, nil, false
	}
	if rest, ok = cutBracket(rest, '['); !ok {
		return 0, nil, false
	}
	i := 0
	for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
		i++
	}
	if n, ok = digits(rest[:i], math.MaxInt32); !ok {
		return 0, nil, false
	}
	if rest, ok = cutBracket(rest[i:], ']'); !ok {
		return 0, nil, false
	}
	if rest, ok = cutBracket(rest, '['); !ok {
		return 0, nil, false
	}
	i = 0
	for i < len(rest) && ('a' <= rest[i] && rest[i] <= 'z' || 'A' <= rest[i] && rest[i] <= 'Z' || '0' <= rest[i] && rest[i] <= '9') {
		i++
	}
	name = rest[:i]
	if rest, ok = cutBracket(rest[i:], ']'); !ok || len(rest) != 0 {
		return 0, nil, false
	}
	return n, name, true
}

// cutBracket removes a leading bracket c, written as is or %-escaped.
func cutBracket(s []byte, c byte) ([]byte, bool) {
	if len(s) > 0 && s[0] == c {
		return s[1:], true
	}
	esc := "%5B"
	if c == ']' {
		esc = "%5D"
	}
	if len(s) >= 3 && strings.EqualFold(string(s[:3]), esc) {
		return s[3:], true
	}
	return s, false
}

// validEscapes reports whether every % in s starts an escape formUnescape accepts.
func validEscapes(s []byte) bool {
	for i := bytes.IndexByte(s, '%'); i >= 0; i = bytes.IndexByte(s, '%') {
		if i+2 >= len(s) || unhex(s[i+1]) > 15 || unhex(s[i+2]) > 15 {
			return false
		}
		s = s[i+3:]
	}
	return true
}

// parseParams is parseForm for a request about to be executed, in the same one pass:
// subscriber.import's rows go into an importParams (from importParamsPool; nil when the
// body has none) instead of the form, as positions in body.
func parseParams(body []byte) (url.Values, *importParams) {
	form := url.Values{}
	var rows *importParams
	// The other parameters are slices of one copy of the body, as in parseForm, unless
	// the body holds rows: then it is mostly rows, and each other parameter is copied.
	var text string
	if bytes.HasPrefix(body, []byte("Subscribers")) || bytes.Contains(body, []byte("&Subscribers")) {
		rows = importParamsPool.Get().(*importParams)
		rows.text = body
		if n := bytes.Count(body, []byte("&")) + 1; cap(rows.entries) < n {
			rows.entries = make([]importEntry, 0, n)
		}
	} else {
		text = string(body)
	}
	str := func(start, end int) string {
		if rows != nil {
			return string(body[start:end])
		}
		return text[start:end]
	}
	var scratch []byte
	for pos := 0; pos < len(body); {
		start, end := pos, bytes.IndexByte(body[pos:], '&')
		if end < 0 {
			end = len(body)
		} else {
			end += pos
		}
		pos = end + 1
		if start == end {
			continue
		}
		kEnd, vOff := end, end
		if eq := bytes.IndexByte(body[start:end], '='); eq >= 0 {
			kEnd, vOff = start+eq, start+eq+1
		}
		v := body[vOff:end]
		if rows != nil {
			if n, name, ok := rowKey(body[start:kEnd]); ok {
				if validEscapes(v) {
					rows.addRow(n, name, vOff, len(v))
				}
				continue
			}
		}
		var key, value string
		var ok bool
		if key, scratch, ok = formUnescape(str(start, kEnd), scratch); !ok {
			continue
		}
		if n, name, isRow := rowOf(key); isRow && validEscapes(v) {
			if rows == nil {
				// A row key written with its letters escaped: rare, and read as any other.
				rows = importParamsPool.Get().(*importParams)
				rows.text = body
			}
			rows.addRow(n, []byte(name), vOff, len(v))
			continue
		}
		if value, scratch, ok = formUnescape(str(vOff, end), scratch); !ok {
			continue
		}
		form[key] = append(form[key], value)
	}
	return form, rows
}

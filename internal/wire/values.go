package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Wire forms of the service's dates and date-times, and of their unset values.
const (
	DateLayout     = "2006-01-02"
	DateTimeLayout = "2006-01-02 15:04:05"
	ZeroDate       = "0000-00-00"
	ZeroDateTime   = "0000-00-00 00:00:00"
)

// errNotScalar is returned when an object or array stands where a scalar is expected.
var errNotScalar = errors.New("expected a scalar value")

// scalar classifies a raw JSON value. For a string it returns the body between the quotes,
// unescaped into buf when the string holds escapes (callers pass a stack array, so short
// strings cost no allocation). Numbers and literals come back as their text.
func scalar(v, buf []byte) (text []byte, isString bool, err error) {
	v = trimSpace(v)
	if len(v) == 0 {
		return nil, false, &SyntaxError{0, "empty value"}
	}
	switch v[0] {
	case '"':
		end, escaped, err := scanString(v, 0)
		if err != nil {
			return nil, false, err
		}
		if end != len(v) {
			return nil, false, &SyntaxError{end, "unexpected data after the string"}
		}
		body := v[1 : end-1]
		if escaped {
			if body, err = appendUnquoted(buf, body); err != nil {
				return nil, false, err
			}
		}
		return body, true, nil
	case '{', '[':
		// PHP writes an empty value as [] or {} where a scalar belongs.
		if string(v) == "[]" || string(v) == "{}" {
			return nil, true, nil
		}
		return nil, false, errNotScalar
	}
	if !Valid(v) {
		return nil, false, &SyntaxError{0, "invalid value"}
	}
	return v, false, nil
}

// String returns the text of a scalar value: a string unescaped, a number's literal text,
// "" for null and "true" or "false" for a boolean. String fields are opaque: nothing is
// parsed out of them.
func String(v []byte) (string, error) {
	var buf [128]byte
	text, isString, err := scalar(v, buf[:0])
	if err != nil {
		return "", err
	}
	return stringText(text, isString), nil
}

// stringText is String for a scalar's text.
func stringText(text []byte, isString bool) string {
	if !isString && string(text) == "null" {
		return ""
	}
	if !utf8.Valid(text) {
		return string(AppendValidUTF8(nil, text))
	}
	return string(text)
}

func validUTF8(b []byte) bool { return utf8.Valid(b) }

// AppendValidUTF8 appends s to dst with each byte that is not part of valid UTF-8 replaced
// by U+FFFD, as encoding/json does. This is the sendloop packages' one rule for invalid
// UTF-8 in what they decode: replaced, never kept, so that a decoded string is valid Go
// text and survives being encoded and decoded again unchanged.
func AppendValidUTF8(dst, s []byte) []byte {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}

// Interned is String returning the matching element of common, without allocating, when
// the value is one of them: for enum-like fields whose few values repeat on every record.
func Interned(v []byte, common ...string) (string, error) {
	var buf [64]byte
	text, isString, err := scalar(v, buf[:0])
	if err != nil {
		return "", err
	}
	return internedText(text, isString, common), nil
}

// internedText is Interned for a scalar's text.
func internedText(text []byte, isString bool, common []string) string {
	for _, c := range common {
		if string(text) == c && (isString || c != "null") {
			return c
		}
	}
	return stringText(text, isString)
}

// Int decodes an integer sent as a number or a numeric string. "", null and false are 0;
// true is 1; an integral float such as 12.0 is accepted.
func Int(v []byte) (int, error) {
	n, err := Int64(v)
	if err != nil {
		return 0, err
	}
	if n != int64(int(n)) {
		return 0, fmt.Errorf("integer %d overflows int", n)
	}
	return int(n), nil
}

// Int64 is Int for 64-bit values.
func Int64(v []byte) (int64, error) {
	var buf [64]byte
	text, _, err := scalar(v, buf[:0])
	if err != nil {
		return 0, err
	}
	return parseInt(trimSpace(text))
}

func parseInt(text []byte) (int64, error) {
	switch string(text) {
	case "", "null", "false":
		return 0, nil
	case "true":
		return 1, nil
	}
	if n, ok := fastInt(text); ok {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || !decimal(text) || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, fmt.Errorf("not an integer: %q", excerpt(text))
	}
	return int64(f), nil
}

// fastInt parses an optionally signed run of up to 19 digits in the int64 range without
// allocating.
func fastInt(text []byte) (int64, bool) {
	neg := false
	if len(text) > 0 && (text[0] == '-' || text[0] == '+') {
		neg = text[0] == '-'
		text = text[1:]
	}
	if len(text) == 0 || len(text) > 19 {
		return 0, false
	}
	var n uint64 // 19 digits cannot overflow a uint64
	for _, c := range text {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true // n == 1<<63 wraps to math.MinInt64, as intended
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// decimal reports text made of decimal number characters only: strconv also reads hex
// floats, underscores, Inf and NaN, which no service number is.
func decimal(text []byte) bool {
	for _, c := range text {
		if !('0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// Float decodes a number sent as a number or a numeric string. "" and null are 0; a
// trailing percent sign, as in "12.5%", is ignored.
func Float(v []byte) (float64, error) {
	var buf [64]byte
	text, _, err := scalar(v, buf[:0])
	if err != nil {
		return 0, err
	}
	return floatText(text)
}

// floatText is Float for a scalar's text.
func floatText(text []byte) (float64, error) {
	text = trimSpace(text)
	switch string(text) {
	case "", "null", "false":
		return 0, nil
	case "true":
		return 1, nil
	}
	if text[len(text)-1] == '%' {
		text = trimSpace(text[:len(text)-1])
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || !decimal(text) || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a number: %q", excerpt(text))
	}
	return f, nil
}

// Bool decodes the service's boolean spellings: true, 1, "1", "true", "yes", "on" and the
// corresponding false forms, case-insensitively; "" and null are false.
func Bool(v []byte) (bool, error) {
	var buf [64]byte
	text, _, err := scalar(v, buf[:0])
	if err != nil {
		return false, err
	}
	return ParseBool(string(trimSpace(text)))
}

// ParseBool is Bool for text already taken out of its JSON quotes.
func ParseBool(s string) (bool, error) {
	var lower [5]byte // the longest spelling is "false"
	if len(s) <= len(lower) {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lower[i] = c
		}
		switch string(lower[:len(s)]) {
		case "1", "true", "yes", "on", "y":
			return true, nil
		case "0", "false", "no", "off", "n", "", "null":
			return false, nil
		}
	}
	return false, fmt.Errorf("not a boolean: %q", excerpt([]byte(s)))
}

// Date decodes a 'YYYY-MM-DD' date; "0000-00-00", "" and null are the zero time. A
// date-time is accepted and its time of day dropped.
func Date(v []byte) (time.Time, error) {
	var buf [64]byte
	text, _, err := scalar(v, buf[:0])
	if err != nil {
		return time.Time{}, err
	}
	return parseDate(trimSpace(text), false)
}

// DateTime decodes a 'YYYY-MM-DD HH:MM:SS' date-time (a 'T' separator and a bare date are
// accepted too); "0000-00-00 00:00:00", "0000-00-00", "" and null are the zero time.
// The wire carries no offset: the wall clock is returned in UTC.
func DateTime(v []byte) (time.Time, error) {
	var buf [64]byte
	text, _, err := scalar(v, buf[:0])
	if err != nil {
		return time.Time{}, err
	}
	return parseDate(trimSpace(text), true)
}

// ParseDate is Date for text already taken out of its JSON quotes.
func ParseDate(s string) (time.Time, error) { return parseDate([]byte(s), false) }

// ParseDateTime is DateTime for text already taken out of its JSON quotes.
func ParseDateTime(s string) (time.Time, error) { return parseDate([]byte(s), true) }

func parseDate(text []byte, withTime bool) (time.Time, error) {
	switch string(text) {
	case "", "null", ZeroDate, ZeroDateTime, "0000-00-00T00:00:00":
		return time.Time{}, nil
	}
	bad := func() (time.Time, error) { return time.Time{}, fmt.Errorf("not a date: %q", excerpt(text)) }
	if len(text) < 10 || text[4] != '-' || text[7] != '-' {
		return bad()
	}
	y, ok1 := digits(text[0:4])
	mo, ok2 := digits(text[5:7])
	d, ok3 := digits(text[8:10])
	if !ok1 || !ok2 || !ok3 {
		return bad()
	}
	var h, mi, s int
	switch rest := text[10:]; {
	case len(rest) == 0:
	case len(rest) == 9 && (rest[0] == ' ' || rest[0] == 'T') && rest[3] == ':' && rest[6] == ':':
		var ok4, ok5, ok6 bool
		h, ok4 = digits(rest[1:3])
		mi, ok5 = digits(rest[4:6])
		s, ok6 = digits(rest[7:9])
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || s > 59 {
			return bad()
		}
	default:
		return bad()
	}
	if y == 0 && mo == 0 && d == 0 {
		return time.Time{}, nil
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC)
	if t.Year() != y || int(t.Month()) != mo || t.Day() != d {
		return bad()
	}
	if !withTime {
		t = time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	}
	return t, nil
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// FormatDate returns the wire form of a date: "0000-00-00" for the zero time.
func FormatDate(t time.Time) string {
	if t.IsZero() {
		return ZeroDate
	}
	return t.Format(DateLayout)
}

// FormatDateTime returns the wire form of a date-time: "0000-00-00 00:00:00" for the zero time.
func FormatDateTime(t time.Time) string {
	if t.IsZero() {
		return ZeroDateTime
	}
	return t.Format(DateTimeLayout)
}

// excerpt keeps error messages short whatever the input.
func excerpt(b []byte) string {
	const limit = 40
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// ValidXML applies the rule of AppendValidUTF8 to an XML document: a document in UTF-8
// (declared or by default) holding invalid UTF-8 gets those bytes replaced by U+FFFD, where
// encoding/xml would refuse the whole document. A document that declares another charset
// (ISO-8859-1, say) is returned as it is, for the decoder's charset reader.
func ValidXML(doc []byte) []byte {
	if utf8.Valid(doc) {
		return doc
	}
	head := bytes.TrimLeft(doc, " \t\r\n")
	if bytes.HasPrefix(head, []byte("<?xml")) {
		if end := bytes.Index(head, []byte("?>")); end > 0 {
			decl := bytes.ToLower(head[:end])
			if i := bytes.Index(decl, []byte("encoding")); i >= 0 {
				enc := decl[i+len("encoding"):]
				if !bytes.Contains(enc, []byte("utf-8")) && !bytes.Contains(enc, []byte("utf8")) {
					return doc
				}
			}
		}
	}
	return AppendValidUTF8(make([]byte, 0, len(doc)+16), doc)
}

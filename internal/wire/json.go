// Package wire holds the request encoding and the tolerant response decoding shared by the
// sendloop packages.
//
// The service's JSON is made by PHP and is loosely typed: numbers arrive as numbers or as
// strings, empty objects arrive as `[]`, unset dates as `0000-00-00`. Rather than decode into
// intermediate maps, callers walk an object's members once with [ScanObject] and convert each
// raw value with the helpers in values.go. The scanner validates what it walks, so a value it
// hands out is well-formed JSON.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// SyntaxError reports malformed JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// ScanObject calls fn with the key and the raw value of each member of the JSON object in
// data, in document order. Keys are unescaped; values are trimmed of surrounding space.
//
// Being tolerant of PHP, it also accepts `[]`, `null`, `""` and `false` as an empty object,
// and a non-empty array as an object keyed by the element index ("0", "1", …).
// An error from fn stops the scan and is returned wrapped with the key.
func ScanObject(data []byte, fn func(key, value []byte) error) error {
	data = trimSpace(data)
	if isEmptyish(data) {
		return nil
	}
	if len(data) > 0 && data[0] == '[' {
		var idx [20]byte
		i := 0
		return ScanArray(data, func(elem []byte) error {
			key := strconv.AppendInt(idx[:0], int64(i), 10)
			i++
			return fn(key, elem)
		})
	}
	if len(data) == 0 || data[0] != '{' {
		return &SyntaxError{0, "expected an object"}
	}
	var keyBuf []byte // allocated only when a key holds escapes, then reused
	pos := skipSpace(data, 1)
	if pos < len(data) && data[pos] == '}' {
		return trailing(data, pos+1)
	}
	for {
		pos = skipSpace(data, pos)
		if pos >= len(data) || data[pos] != '"' {
			return &SyntaxError{pos, "expected a member name"}
		}
		end, escaped, err := scanString(data, pos)
		if err != nil {
			return err
		}
		key := data[pos+1 : end-1]
		if escaped {
			key, err = appendUnquoted(keyBuf[:0], key)
			if err != nil {
				return &SyntaxError{pos, err.Error()}
			}
			keyBuf = key
		}
		if !utf8.Valid(key) {
			keyBuf = AppendValidUTF8(nil, key)
			key = keyBuf
		}
		pos = skipSpace(data, end)
		if pos >= len(data) || data[pos] != ':' {
			return &SyntaxError{pos, "expected ':'"}
		}
		pos = skipSpace(data, pos+1)
		vend, err := skipValue(data, pos, 0)
		if err != nil {
			return err
		}
		if err := fn(key, data[pos:vend]); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		pos = skipSpace(data, vend)
		if pos >= len(data) {
			return &SyntaxError{pos, "unterminated object"}
		}
		switch data[pos] {
		case ',':
			pos++
		case '}':
			return trailing(data, pos+1)
		default:
			return &SyntaxError{pos, "expected ',' or '}'"}
		}
	}
}

// ScanArray calls fn with each element of the JSON array in data. Being tolerant of PHP, it
// accepts an object as an array of its member values (PHP encodes a list with gaps as an
// object), and `null`, `""`, `false` and `{}` as an empty array.
func ScanArray(data []byte, fn func(elem []byte) error) error {
	data = trimSpace(data)
	if isEmptyish(data) {
		return nil
	}
	if len(data) > 0 && data[0] == '{' {
		return ScanObject(data, func(_, value []byte) error { return fn(value) })
	}
	if len(data) == 0 || data[0] != '[' {
		return &SyntaxError{0, "expected an array"}
	}
	pos := skipSpace(data, 1)
	if pos < len(data) && data[pos] == ']' {
		return trailing(data, pos+1)
	}
	for i := 0; ; i++ {
		pos = skipSpace(data, pos)
		end, err := skipValue(data, pos, 0)
		if err != nil {
			return err
		}
		if err := fn(data[pos:end]); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		pos = skipSpace(data, end)
		if pos >= len(data) {
			return &SyntaxError{pos, "unterminated array"}
		}
		switch data[pos] {
		case ',':
			pos++
		case ']':
			return trailing(data, pos+1)
		default:
			return &SyntaxError{pos, "expected ',' or ']'"}
		}
	}
}

// Valid reports whether data is one well-formed JSON value.
func Valid(data []byte) bool {
	pos := skipSpace(data, 0)
	end, err := skipValue(data, pos, 0)
	return err == nil && trailing(data, end) == nil
}

func isEmptyish(data []byte) bool {
	switch string(data) {
	case "null", `""`, "false", "[]", "{}":
		return true
	}
	return false
}

func trailing(data []byte, pos int) error {
	if pos = skipSpace(data, pos); pos != len(data) {
		return &SyntaxError{pos, "unexpected data after the value"}
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && isSpace(data[pos]) {
		pos++
	}
	return pos
}

func trimSpace(data []byte) []byte {
	start := skipSpace(data, 0)
	end := len(data)
	for end > start && isSpace(data[end-1]) {
		end--
	}
	return data[start:end]
}

// skipValue returns the offset just past the value starting at pos.
func skipValue(data []byte, pos, depth int) (int, error) {
	if pos >= len(data) {
		return pos, &SyntaxError{pos, "unexpected end of input"}
	}
	switch c := data[pos]; {
	case c == '"':
		end, _, err := scanString(data, pos)
		return end, err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return pos, &SyntaxError{pos, "nesting too deep"}
		}
		return skipContainer(data, pos, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(data, pos)
	case c == 't':
		return literal(data, pos, "true")
	case c == 'f':
		return literal(data, pos, "false")
	case c == 'n':
		return literal(data, pos, "null")
	default:
		return pos, &SyntaxError{pos, fmt.Sprintf("unexpected character %q", c)}
	}
}

func skipContainer(data []byte, pos, depth int) (int, error) {
	isObject := data[pos] == '{'
	closer := byte(']')
	if isObject {
		closer = '}'
	}
	pos = skipSpace(data, pos+1)
	if pos < len(data) && data[pos] == closer {
		return pos + 1, nil
	}
	for {
		pos = skipSpace(data, pos)
		if isObject {
			if pos >= len(data) || data[pos] != '"' {
				return pos, &SyntaxError{pos, "expected a member name"}
			}
			end, _, err := scanString(data, pos)
			if err != nil {
				return pos, err
			}
			pos = skipSpace(data, end)
			if pos >= len(data) || data[pos] != ':' {
				return pos, &SyntaxError{pos, "expected ':'"}
			}
			pos = skipSpace(data, pos+1)
		}
		end, err := skipValue(data, pos, depth)
		if err != nil {
			return end, err
		}
		pos = skipSpace(data, end)
		if pos >= len(data) {
			return pos, &SyntaxError{pos, "unterminated container"}
		}
		switch data[pos] {
		case ',':
			pos++
		case closer:
			return pos + 1, nil
		default:
			return pos, &SyntaxError{pos, "expected ',' or a closing bracket"}
		}
	}
}

func literal(data []byte, pos int, word string) (int, error) {
	if len(data)-pos < len(word) || string(data[pos:pos+len(word)]) != word {
		return pos, &SyntaxError{pos, "invalid literal"}
	}
	return pos + len(word), nil
}

// scanString returns the offset just past the closing quote of the string at pos, and
// whether the string holds escapes.
func scanString(data []byte, pos int) (end int, escaped bool, err error) {
	end, escaped, _, err = scanStringASCII(data, pos)
	return end, escaped, err
}

// strPlain holds the bytes a string may hold as they are, without a second look: printable
// ASCII but for the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// specialBytes flags (0x80 in its byte) each byte of w that is not plain in a string
// (strPlain): below 0x20, the quote, the backslash, or 0x80 and above. A flag may be wrong
// above the first right one (a borrow carries into the next byte), never below it: the
// lowest flag is the first special byte.
func specialBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// (x - ones) & ^x flags the bytes of x that are 0: the quote and the backslash once
	// xor-ed with their own bytes; (w - ones*0x20) & ^w flags those below 0x20.
	q, bs := w^(ones*'"'), w^(ones*'\\')
	return (w | (w-ones*0x20)&^w | (q-ones)&^q | (bs-ones)&^bs) & highs
}

// scanStringASCII is scanString that also reports whether the string holds a byte outside
// ASCII (which may be invalid UTF-8): a string without escapes or such bytes is its own
// valid text.
func scanStringASCII(data []byte, pos int) (end int, escaped, nonASCII bool, err error) {
	for i := pos + 1; ; i++ {
		// Skip to the next byte that is not plain, eight at a time while eight remain:
		// most strings are nothing else up to the closing quote.
		for i+8 <= len(data) {
			if m := specialBytes(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(data) && strPlain[data[i]] {
			i++
		}
		if i >= len(data) {
			return len(data), escaped, nonASCII, &SyntaxError{len(data), "unterminated string"}
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped, nonASCII, nil
		case c == '\\':
			escaped = true
			i++
			if i >= len(data) {
				return i, escaped, nonASCII, &SyntaxError{i, "unterminated string"}
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) || !isHex4(data[i+1:i+5]) {
					return i, escaped, nonASCII, &SyntaxError{i, `invalid \u escape`}
				}
				i += 4
			default:
				return i, escaped, nonASCII, &SyntaxError{i, "invalid escape"}
			}
		case c < 0x20:
			return i, escaped, nonASCII, &SyntaxError{i, "control character in string"}
		default:
			nonASCII = true
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func scanNumber(data []byte, pos int) (int, error) {
	i := pos
	if data[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, &SyntaxError{i, "invalid number"}
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return i, &SyntaxError{i, "invalid number"}
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, &SyntaxError{i, "invalid number"}
		}
	}
	return i, nil
}

var errBadEscape = errors.New("invalid escape")

// appendUnquoted appends the unescaped content of a JSON string body (without quotes).
// Invalid UTF-8 is kept as it came: string fields are opaque text.
func appendUnquoted(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return dst, errBadEscape
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return dst, errBadEscape
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s, i+2); ok && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, errBadEscape
		}
		i += 2
	}
	return dst, nil
}

func hex4(s []byte, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

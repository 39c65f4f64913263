package wire

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Decoder reads one JSON document in a single pass. Object and Array walk a container and
// hand each member (or element) to a callback, which reads the value in place with one of
// the Decoder's readers (String, Int, Date, …: the tolerant conversions of this package) or
// leaves it, and then the Decoder skips it. Nothing is scanned twice, unlike ScanObject,
// which finds the end of every value before a converter reads it again.
//
// The tolerances are ScanObject's and ScanArray's: an object accepts `[]`, `null`, `""`,
// `false` and `{}` as empty and an array as an object keyed by index; an array accepts the
// same empty forms and an object as the array of its member values.
type Decoder struct {
	data   []byte
	pos    int
	depth  int
	keyBuf []byte // unescaped keys
	strBuf []byte // unescaped string values

	// strs holds the text of the strings String returns, many to an allocation: a page of
	// records holds hundreds of short strings. It is replaced, never written over, when full.
	strs strings.Builder
	// lastDate is the last date read (a bare date), kept for the next record: dates repeat.
	lastDateText [len("2006-01-02")]byte
	lastDateSet  bool
	lastDate     time.Time
}

// Chunks of Decoder.strs: strings longer than maxChunkString get their own allocation.
const (
	strsChunk      = 4096
	maxChunkString = 256
)

// Decode runs fn on the one value of data and checks that only space follows it.
func Decode(data []byte, fn func(d *Decoder) error) error {
	d := &Decoder{data: data}
	if err := fn(d); err != nil {
		return err
	}
	return trailing(data, d.pos)
}

// Object calls fn with the key of each member of the object at the cursor, in document
// order; fn may read the member's value, which is otherwise skipped. An error from fn stops
// the walk and is returned wrapped with the key.
func (d *Decoder) Object(fn func(key []byte) error) error {
	pos := skipSpace(d.data, d.pos)
	if pos >= len(d.data) {
		return &SyntaxError{pos, "expected an object"}
	}
	if end, ok := emptyAt(d.data, pos); ok {
		d.pos = end
		return nil
	}
	switch d.data[pos] {
	case '[':
		var idx [20]byte
		return d.walkArray(pos, func(i int) error { return fn(strconv.AppendInt(idx[:0], int64(i), 10)) })
	case '{':
	default:
		return &SyntaxError{pos, "expected an object"}
	}
	if d.depth >= maxDepth {
		return &SyntaxError{pos, "nesting too deep"}
	}
	d.depth++
	defer func() { d.depth-- }()
	pos = skipSpace(d.data, pos+1)
	if pos < len(d.data) && d.data[pos] == '}' {
		d.pos = pos + 1
		return nil
	}
	for {
		pos = skipSpace(d.data, pos)
		if pos >= len(d.data) || d.data[pos] != '"' {
			return &SyntaxError{pos, "expected a member name"}
		}
		end, escaped, nonASCII, err := scanStringASCII(d.data, pos)
		if err != nil {
			return err
		}
		key := d.data[pos+1 : end-1]
		if escaped {
			if key, err = appendUnquoted(d.keyBuf[:0], key); err != nil {
				return &SyntaxError{pos, err.Error()}
			}
			d.keyBuf = key
		}
		if (escaped || nonASCII) && !validUTF8(key) {
			d.keyBuf = AppendValidUTF8(nil, key)
			key = d.keyBuf
		}
		pos = skipSpace(d.data, end)
		if pos >= len(d.data) || d.data[pos] != ':' {
			return &SyntaxError{pos, "expected ':'"}
		}
		if pos, err = d.member(skipSpace(d.data, pos+1), func() error { return fn(key) }); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		pos = skipSpace(d.data, pos)
		if pos >= len(d.data) {
			return &SyntaxError{pos, "unterminated object"}
		}
		switch d.data[pos] {
		case ',':
			pos++
		case '}':
			d.pos = pos + 1
			return nil
		default:
			return &SyntaxError{pos, "expected ',' or '}'"}
		}
	}
}

// Array calls fn for each element of the array at the cursor; fn may read the element,
// which is otherwise skipped. An error from fn stops the walk and is returned wrapped with
// the index.
func (d *Decoder) Array(fn func() error) error {
	pos := skipSpace(d.data, d.pos)
	if pos >= len(d.data) {
		return &SyntaxError{pos, "expected an array"}
	}
	if end, ok := emptyAt(d.data, pos); ok {
		d.pos = end
		return nil
	}
	switch d.data[pos] {
	case '{':
		return d.Object(func([]byte) error { return fn() })
	case '[':
		return d.walkArray(pos, func(int) error { return fn() })
	}
	return &SyntaxError{pos, "expected an array"}
}

// walkArray walks the array starting at pos ('[').
func (d *Decoder) walkArray(pos int, fn func(i int) error) error {
	if d.depth >= maxDepth {
		return &SyntaxError{pos, "nesting too deep"}
	}
	d.depth++
	defer func() { d.depth-- }()
	pos = skipSpace(d.data, pos+1)
	if pos < len(d.data) && d.data[pos] == ']' {
		d.pos = pos + 1
		return nil
	}
	for i := 0; ; i++ {
		var err error
		if pos, err = d.member(skipSpace(d.data, pos), func() error { return fn(i) }); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		pos = skipSpace(d.data, pos)
		if pos >= len(d.data) {
			return &SyntaxError{pos, "unterminated array"}
		}
		switch d.data[pos] {
		case ',':
			pos++
		case ']':
			d.pos = pos + 1
			return nil
		default:
			return &SyntaxError{pos, "expected ',' or ']'"}
		}
	}
}

// member runs read on the value at pos and returns the offset past the value: where read
// left the cursor, or, when read did not move it, the end of the skipped value.
func (d *Decoder) member(pos int, read func() error) (int, error) {
	d.pos = pos
	if err := read(); err != nil {
		return d.pos, err
	}
	if d.pos != pos {
		return d.pos, nil
	}
	end, err := skipValue(d.data, pos, d.depth)
	d.pos = end
	return end, err
}

// emptyAt reports a value at pos that stands for an empty container (null, "", false, [],
// {}) and returns the offset past it.
func emptyAt(data []byte, pos int) (int, bool) {
	var word string
	switch data[pos] {
	case 'n':
		word = "null"
	case '"':
		word = `""`
	case 'f':
		word = "false"
	case '[':
		word = "[]"
	case '{':
		word = "{}"
	default:
		return pos, false
	}
	if len(data)-pos >= len(word) && string(data[pos:pos+len(word)]) == word {
		return pos + len(word), true
	}
	return pos, false
}

// Remaining returns the number of bytes of the document after the cursor: a bound on what
// the value at the cursor holds.
func (d *Decoder) Remaining() int { return len(d.data) - d.pos }

// Offset returns the cursor's position in the document, for Seek.
func (d *Decoder) Offset() int { return d.pos }

// Seek moves the cursor back to a position Offset returned: to skip a value a reader gave
// up on halfway.
func (d *Decoder) Seek(pos int) { d.pos = pos }

// Skip moves the cursor past the value at it.
func (d *Decoder) Skip() error {
	pos := skipSpace(d.data, d.pos)
	end, err := skipValue(d.data, pos, d.depth)
	d.pos = end
	return err
}

// Raw returns the value at the cursor as it is in the document, and moves past it: for a
// value read by a decoder that takes bytes.
func (d *Decoder) Raw() ([]byte, error) {
	pos := skipSpace(d.data, d.pos)
	end, err := skipValue(d.data, pos, d.depth)
	d.pos = end
	return d.data[pos:end], err
}

// scalar reads the scalar at the cursor, as the package's scalar does for a value alone.
func (d *Decoder) scalar() (text []byte, isString bool, err error) {
	text, isString, _, err = d.scalarASCII()
	return text, isString, err
}

// scalarASCII is scalar that also reports text known to be ASCII, hence valid UTF-8.
func (d *Decoder) scalarASCII() (text []byte, isString, ascii bool, err error) {
	pos := skipSpace(d.data, d.pos)
	if pos >= len(d.data) {
		return nil, false, false, &SyntaxError{pos, "unexpected end of input"}
	}
	switch c := d.data[pos]; {
	case c == '"':
		end, escaped, nonASCII, err := scanStringASCII(d.data, pos)
		if err != nil {
			return nil, false, false, err
		}
		d.pos = end
		body := d.data[pos+1 : end-1]
		if escaped {
			if body, err = appendUnquoted(d.strBuf[:0], body); err != nil {
				return nil, false, false, &SyntaxError{pos, err.Error()}
			}
			d.strBuf = body
		}
		return body, true, !escaped && !nonASCII, nil
	case c == '{' || c == '[':
		end, err := skipValue(d.data, pos, d.depth)
		if err != nil {
			return nil, false, false, err
		}
		d.pos = end
		// PHP writes an empty value as [] or {} where a scalar belongs.
		if v := d.data[pos:end]; string(v) == "[]" || string(v) == "{}" {
			return nil, true, true, nil
		}
		return nil, false, false, errNotScalar
	default:
		end, err := skipValue(d.data, pos, d.depth)
		if err != nil {
			return nil, false, false, err
		}
		d.pos = end
		// A number or a literal: skipValue let only ASCII through.
		return d.data[pos:end], false, true, nil
	}
}

// String reads a value as String does.
func (d *Decoder) String() (string, error) {
	text, isString, ascii, err := d.scalarASCII()
	if err != nil {
		return "", err
	}
	return d.text(text, isString, ascii), nil
}

// SkipString moves past a value as String reads it, with String's errors, without making
// the string: for a reader that needs a record's other members checked, not kept.
func (d *Decoder) SkipString() error {
	_, _, _, err := d.scalarASCII()
	return err
}

// Interned reads a value as Interned does.
func (d *Decoder) Interned(common ...string) (string, error) {
	text, isString, ascii, err := d.scalarASCII()
	if err != nil {
		return "", err
	}
	for _, c := range common {
		if string(text) == c && (isString || c != "null") {
			return c, nil
		}
	}
	return d.text(text, isString, ascii), nil
}

// text is stringText with the string's bytes taken from d.strs.
func (d *Decoder) text(text []byte, isString, ascii bool) string {
	switch {
	case !isString && string(text) == "null":
		return ""
	case !ascii && !utf8.Valid(text):
		return string(AppendValidUTF8(nil, text))
	case len(text) == 0:
		return ""
	case len(text) > maxChunkString:
		return string(text)
	}
	if d.strs.Cap()-d.strs.Len() < len(text) {
		// The strings already returned keep the old buffer.
		d.strs = strings.Builder{}
		d.strs.Grow(strsChunk)
	}
	n := d.strs.Len()
	d.strs.Write(text)
	return d.strs.String()[n:]
}

// Int reads a value as Int does.
func (d *Decoder) Int() (int, error) {
	n, err := d.Int64()
	if err != nil {
		return 0, err
	}
	if n != int64(int(n)) {
		return 0, fmt.Errorf("integer %d overflows int", n)
	}
	return int(n), nil
}

// Int64 reads a value as Int64 does.
func (d *Decoder) Int64() (int64, error) {
	text, _, err := d.scalar()
	if err != nil {
		return 0, err
	}
	return parseInt(trimSpace(text))
}

// Float reads a value as Float does.
func (d *Decoder) Float() (float64, error) {
	text, _, err := d.scalar()
	if err != nil {
		return 0, err
	}
	return floatText(text)
}

// Bool reads a value as Bool does.
func (d *Decoder) Bool() (bool, error) {
	text, _, err := d.scalar()
	if err != nil {
		return false, err
	}
	return ParseBool(string(trimSpace(text)))
}

// Date reads a value as Date does.
func (d *Decoder) Date() (time.Time, error) {
	text, _, err := d.scalar()
	if err != nil {
		return time.Time{}, err
	}
	return d.date(trimSpace(text), false)
}

// DateTime reads a value as DateTime does.
func (d *Decoder) DateTime() (time.Time, error) {
	text, _, err := d.scalar()
	if err != nil {
		return time.Time{}, err
	}
	return d.date(trimSpace(text), true)
}

// date is parseDate, answered from the last date read when text is the same bare date
// (which Date and DateTime read alike).
func (d *Decoder) date(text []byte, withTime bool) (time.Time, error) {
	// The zero date, which parseDate answers at once, is not kept: it alternates with a
	// record's other dates.
	if len(text) != len(d.lastDateText) || string(text) == ZeroDate {
		return parseDate(text, withTime)
	}
	if d.lastDateSet && string(d.lastDateText[:]) == string(text) {
		return d.lastDate, nil
	}
	t, err := parseDate(text, withTime)
	if err == nil {
		copy(d.lastDateText[:], text)
		d.lastDate, d.lastDateSet = t, true
	}
	return t, err
}

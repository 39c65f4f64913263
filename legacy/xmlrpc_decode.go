package legacy

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/internal/wire"
)

// Decode reads an XML-RPC methodResponse and returns the value of its first param. A
// <fault> answer is returned as a *Fault error. The failure struct of the legacy API
// (APIError, APIErrorCode) is an ordinary struct here: Client methods turn it into an
// *Error.
//
// Decoding follows the XML-RPC specification with these tolerances: an untyped
// <value>text</value> is a string; <i8> and <nil/> (common extensions) are accepted; empty
// <int>, <double> and <boolean> elements are 0 and false; booleans may be written
// true/false; base64 may hold line breaks; a dateTime.iso8601 may use the extended form
// (2006-01-02T15:04:05), fractional seconds and a zone, and is UTC when it names none;
// a document may declare ISO-8859-1, Windows-1252 or US-ASCII instead of UTF-8.
func Decode(body []byte) (Value, error) {
	d := newDecoder(body)
	root, err := d.root()
	if err != nil {
		return Value{}, err
	}
	if root.Name.Local != "methodResponse" {
		return Value{}, fmt.Errorf("sendloop/legacy: root element <%s> is not <methodResponse>", excerpt(root.Name.Local))
	}
	var (
		result Value
		found  bool
		fault  *Fault
	)
	err = d.children(func(el xml.StartElement) error {
		switch el.Name.Local {
		case "params":
			return d.children(func(p xml.StartElement) error {
				if p.Name.Local != "param" {
					return fmt.Errorf("sendloop/legacy: unexpected <%s> in <params>", excerpt(p.Name.Local))
				}
				v, err := d.wrapped()
				if err != nil {
					return err
				}
				if !found {
					result, found = v, true
				}
				return nil
			})
		case "fault":
			v, err := d.wrapped()
			if err != nil {
				return err
			}
			fault, err = toFault(v)
			found = true
			return err
		}
		return fmt.Errorf("sendloop/legacy: unexpected <%s> in <methodResponse>", excerpt(el.Name.Local))
	})
	if err == nil {
		err = d.end()
	}
	switch {
	case err != nil:
		return Value{}, err
	case fault != nil:
		return Value{}, fault
	case !found:
		return Value{}, errors.New("sendloop/legacy: the methodResponse holds no value")
	}
	return result, nil
}

func toFault(v Value) (*Fault, error) {
	if v.kind != KindStruct {
		return nil, fmt.Errorf("sendloop/legacy: the fault is a %s, not a struct", v.kind)
	}
	f := &Fault{Message: v.members.Text("faultString")}
	if code, ok := v.members.Get("faultCode"); ok {
		n, err := code.Int()
		if err != nil || n != int64(int(n)) {
			return nil, errors.New("sendloop/legacy: the fault's faultCode is not an integer")
		}
		f.Code = int(n)
	}
	return f, nil
}

// decoder walks an XML-RPC document token by token.
type decoder struct {
	x     *xml.Decoder
	depth int
}

func newDecoder(body []byte) *decoder {
	x := xml.NewDecoder(bytes.NewReader(wire.ValidXML(body)))
	x.CharsetReader = charsetReader
	return &decoder{x: x}
}

// next returns the next start element, end element or character data, skipping comments,
// processing instructions and directives.
func (d *decoder) next() (xml.Token, error) {
	for {
		tok, err := d.x.Token()
		if err != nil {
			if err == io.EOF {
				return nil, errors.New("sendloop/legacy: the document ends early")
			}
			return nil, fmt.Errorf("sendloop/legacy: malformed XML: %w", err)
		}
		switch tok.(type) {
		case xml.StartElement, xml.EndElement, xml.CharData:
			return tok, nil
		}
	}
}

// root returns the document's root element.
func (d *decoder) root() (xml.StartElement, error) {
	for {
		tok, err := d.next()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if !isBlank(t) {
				return xml.StartElement{}, errors.New("sendloop/legacy: text before the root element")
			}
		default:
			return xml.StartElement{}, errors.New("sendloop/legacy: malformed XML")
		}
	}
}

// end checks that nothing but blanks, comments and processing instructions follow the root.
func (d *decoder) end() error {
	for {
		tok, err := d.x.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sendloop/legacy: malformed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			if !isBlank(t) {
				return errors.New("sendloop/legacy: text after the root element")
			}
		case xml.StartElement:
			return errors.New("sendloop/legacy: a second root element")
		}
	}
}

// children calls fn for each child element of the element just opened, up to its end tag;
// fn must consume the child up to and including its end tag. Text between children must
// be blank.
func (d *decoder) children(fn func(xml.StartElement) error) error {
	for {
		tok, err := d.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		case xml.CharData:
			if !isBlank(t) {
				return errors.New("sendloop/legacy: unexpected text between elements")
			}
		}
	}
}

// wrapped reads the one <value> inside the element just opened (param, fault, member's
// value, array data's element) and that element's end tag.
func (d *decoder) wrapped() (Value, error) {
	var (
		v     Value
		found bool
	)
	err := d.children(func(el xml.StartElement) error {
		if el.Name.Local != "value" {
			return fmt.Errorf("sendloop/legacy: unexpected <%s> where a <value> belongs", excerpt(el.Name.Local))
		}
		if found {
			return errors.New("sendloop/legacy: two values where one belongs")
		}
		var err error
		v, err = d.value()
		found = true
		return err
	})
	if err == nil && !found {
		err = errors.New("sendloop/legacy: a <value> is missing")
	}
	return v, err
}

// value reads the content of a <value> element just opened, up to its end tag.
func (d *decoder) value() (Value, error) {
	var text []byte
	for {
		tok, err := d.next()
		if err != nil {
			return Value{}, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text = append(text, t...)
		case xml.EndElement:
			return Value{kind: KindString, text: string(text)}, nil
		case xml.StartElement:
			if !isBlank(text) {
				return Value{}, errors.New("sendloop/legacy: a <value> mixes text and a typed element")
			}
			v, err := d.typed(t)
			if err != nil {
				return Value{}, err
			}
			// Only blanks may follow the typed element.
			if err := d.children(func(el xml.StartElement) error {
				return fmt.Errorf("sendloop/legacy: a <value> holds a second element <%s>", excerpt(el.Name.Local))
			}); err != nil {
				return Value{}, err
			}
			return v, nil
		}
	}
}

// typed reads a type element (<int>, <struct>, …) just opened, up to its end tag.
func (d *decoder) typed(el xml.StartElement) (Value, error) {
	switch name := el.Name.Local; name {
	case "struct":
		return d.structValue()
	case "array":
		return d.arrayValue()
	case "nil":
		if err := d.children(func(el xml.StartElement) error {
			return errors.New("sendloop/legacy: <nil> holds an element")
		}); err != nil {
			return Value{}, err
		}
		return Value{}, nil
	case "string", "int", "i4", "i8", "boolean", "double", "dateTime.iso8601", "base64":
		text, err := d.text(name)
		if err != nil {
			return Value{}, err
		}
		return scalar(name, text)
	default:
		return Value{}, fmt.Errorf("sendloop/legacy: unknown XML-RPC type <%s>", excerpt(name))
	}
}

// text reads the character data of a scalar element just opened, up to its end tag.
func (d *decoder) text(name string) (string, error) {
	var b []byte
	for {
		tok, err := d.next()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b = append(b, t...)
		case xml.EndElement:
			return string(b), nil
		case xml.StartElement:
			return "", fmt.Errorf("sendloop/legacy: <%s> holds an element", name)
		}
	}
}

func scalar(name, raw string) (Value, error) {
	if name == "string" {
		return Value{kind: KindString, text: raw}, nil
	}
	s := strings.TrimSpace(raw)
	bad := func(err error) (Value, error) {
		// The value itself stays out of the message: it may be part of a secret.
		return Value{}, fmt.Errorf("sendloop/legacy: invalid <%s>: %w", name, err)
	}
	switch name {
	case "int", "i4", "i8":
		v := Value{kind: KindInt, text: s}
		if s == "" {
			return v, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad(errors.New("not an integer"))
		}
		if name == "i4" && n != int64(int32(n)) {
			return bad(errors.New("out of the 32-bit range"))
		}
		v.i = n
		return v, nil
	case "boolean":
		v := Value{kind: KindBoolean, text: s}
		switch strings.ToLower(s) {
		case "1", "true":
			v.i = 1
		case "0", "false", "":
		default:
			return bad(errors.New("not 1 or 0"))
		}
		return v, nil
	case "double":
		v := Value{kind: KindDouble, text: s}
		if s == "" {
			return v, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad(errors.New("not a finite number"))
		}
		v.f = f
		return v, nil
	case "dateTime.iso8601":
		t, err := parseDateTime(s)
		if err != nil {
			return bad(err)
		}
		return Value{kind: KindDateTime, text: s, t: t}, nil
	default: // base64
		data, err := decodeBase64(s)
		if err != nil {
			return bad(errors.New("not base64"))
		}
		return Value{kind: KindBase64, text: s, data: data}, nil
	}
}

func (d *decoder) structValue() (Value, error) {
	if d.depth++; d.depth > maxDepth {
		return Value{}, errors.New("sendloop/legacy: structs and arrays nested too deep")
	}
	defer func() { d.depth-- }()
	members := Struct{}
	err := d.children(func(el xml.StartElement) error {
		if el.Name.Local != "member" {
			return fmt.Errorf("sendloop/legacy: unexpected <%s> in <struct>", excerpt(el.Name.Local))
		}
		var (
			m                 Member
			hasName, hasValue bool
		)
		err := d.children(func(part xml.StartElement) error {
			switch {
			case part.Name.Local == "name" && !hasName:
				name, err := d.text("name")
				m.Name, hasName = name, true
				return err
			case part.Name.Local == "value" && !hasValue:
				v, err := d.value()
				m.Value, hasValue = v, true
				return err
			}
			return fmt.Errorf("sendloop/legacy: unexpected <%s> in <member>", excerpt(part.Name.Local))
		})
		if err != nil {
			return err
		}
		if !hasName || !hasValue {
			return errors.New("sendloop/legacy: a <member> lacks its <name> or <value>")
		}
		members = append(members, m)
		return nil
	})
	return Value{kind: KindStruct, members: members}, err
}

func (d *decoder) arrayValue() (Value, error) {
	if d.depth++; d.depth > maxDepth {
		return Value{}, errors.New("sendloop/legacy: structs and arrays nested too deep")
	}
	defer func() { d.depth-- }()
	elems := []Value{}
	hasData := false
	err := d.children(func(el xml.StartElement) error {
		if el.Name.Local != "data" || hasData {
			return fmt.Errorf("sendloop/legacy: unexpected <%s> in <array>", excerpt(el.Name.Local))
		}
		hasData = true
		return d.children(func(el xml.StartElement) error {
			if el.Name.Local != "value" {
				return fmt.Errorf("sendloop/legacy: unexpected <%s> in an array's <data>", excerpt(el.Name.Local))
			}
			v, err := d.value()
			elems = append(elems, v)
			return err
		})
	})
	return Value{kind: KindArray, elems: elems}, err
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// dateTimeLayouts are the dateTime.iso8601 spellings accepted, the XML-RPC specification's
// basic form first.
var dateTimeLayouts = []string{
	"20060102T15:04:05",
	"20060102T150405",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"20060102T15:04:05Z07:00",
	"20060102T150405Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"20060102T15:04:05Z0700",
	"20060102T150405Z0700",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02",
	"20060102",
}

// parseDateTime reads the forms of dateTimeLayouts, with optional fractional seconds; a
// time without a zone is UTC.
func parseDateTime(raw string) (time.Time, error) {
	s := strings.TrimSpace(raw)
	switch s {
	case "", "0000-00-00", "0000-00-00 00:00:00", "00000000T00:00:00", "0000-00-00T00:00:00":
		return time.Time{}, nil
	}
	// Fractional seconds: drop them into the layout by removing and re-adding.
	frac := ""
	if i := strings.IndexByte(s, '.'); i > 0 {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 {
			frac, s = s[i:j], s[:i]+s[j:]
		}
	}
	for _, layout := range dateTimeLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if frac != "" {
			f, _ := strconv.ParseFloat("0"+frac, 64)
			t = t.Add(time.Duration(f * float64(time.Second)))
		}
		return t, nil
	}
	return time.Time{}, errors.New("not an ISO 8601 date-time")
}

func decodeBase64(s string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, s)
	if data, err := base64.StdEncoding.DecodeString(clean); err == nil {
		return data, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
}

func parseNumber(raw string) (float64, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return 0, nil
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, "%"))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a number")
	}
	return f, nil
}

// excerpt keeps error messages short whatever the input.
func excerpt(s string) string {
	const limit = 40
	if len(s) > limit {
		return strings.ToValidUTF8(s[:limit], "") + "…"
	}
	return s
}

// charsetReader lets documents declare the single-byte encodings PHP's XML-RPC extension
// writes by default (ISO-8859-1) and their common relatives.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "iso_8859-1":
		return singleByte(input, nil), nil
	case "windows-1252", "cp1252":
		return singleByte(input, &cp1252), nil
	}
	return nil, fmt.Errorf("unsupported charset %q", excerpt(label))
}

// cp1252 maps the bytes 0x80–0x9F of Windows-1252; 0 marks an unassigned byte, kept as the
// Latin-1 control character.
var cp1252 = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

func singleByte(input io.Reader, high *[32]rune) io.Reader {
	data, err := io.ReadAll(input)
	if err != nil {
		return errReader{err}
	}
	var b strings.Builder
	b.Grow(len(data) + len(data)/8)
	for _, c := range data {
		r := rune(c)
		if high != nil && c >= 0x80 && c <= 0x9F && high[c-0x80] != 0 {
			r = high[c-0x80]
		}
		b.WriteRune(r)
	}
	return strings.NewReader(b.String())
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

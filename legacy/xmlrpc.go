package legacy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Kind is the XML-RPC type of a Value.
type Kind uint8

// The XML-RPC types. KindNil is the zero Kind: the <nil/> extension, and the Value that
// Struct.Get returns for a member that is absent.
const (
	// KindNil is <nil/>, or no value.
	KindNil Kind = iota
	// KindString is <string>, or an untyped <value>text</value>.
	KindString
	// KindInt is <int>, <i4> (and the <i8> extension).
	KindInt
	// KindBoolean is <boolean>: 1 or 0.
	KindBoolean
	// KindDouble is <double>.
	KindDouble
	// KindDateTime is <dateTime.iso8601>.
	KindDateTime
	// KindBase64 is <base64>.
	KindBase64
	// KindStruct is <struct> of named members.
	KindStruct
	// KindArray is <array> of values.
	KindArray
)

var kindNames = [...]string{"nil", "string", "int", "boolean", "double", "dateTime.iso8601", "base64", "struct", "array"}

// String returns the XML-RPC name of the kind, e.g. "dateTime.iso8601".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a decoded XML-RPC value: a scalar, a struct or an array. Scalars keep the text
// they were sent as (Text) next to their typed form; the accessors convert tolerantly,
// because the legacy API sends most numbers as strings.
type Value struct {
	kind    Kind
	text    string
	i       int64
	f       float64
	t       time.Time
	data    []byte
	members Struct
	elems   []Value
}

// Member is a named member of an XML-RPC struct.
type Member struct {
	Name  string // the member's <name>, e.g. "Status" or "SubscriberID"
	Value Value  // the member's <value>
}

// Struct is an XML-RPC struct: its members in the order they came. Names are not required
// to be unique; Get returns the first member of a name.
type Struct []Member

// Kind returns the value's XML-RPC type.
func (v Value) Kind() Kind { return v.kind }

// Text returns a scalar as it was sent: a string's content exactly, and the trimmed text of
// the other scalars ("1" for a true boolean, a base64 value's encoded text). A struct, an
// array and nil give "".
func (v Value) Text() string { return v.text }

// Int returns an integer: an int as decoded; a string, double or boolean converted ("" is
// 0, "12" is 12, 12.0 is 12, true is 1). Anything else is an error.
func (v Value) Int() (int64, error) {
	switch v.kind {
	case KindInt:
		return v.i, nil
	case KindBoolean:
		return v.i, nil
	case KindDouble:
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<62 {
			return int64(v.f), nil
		}
	case KindString:
		s := strings.TrimSpace(v.text)
		if s == "" {
			return 0, nil
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), nil
		}
	}
	return 0, fmt.Errorf("sendloop/legacy: %s value %q is not an integer", v.kind, excerpt(v.text))
}

// Float returns a number: a double or an int as decoded, a numeric string converted ("" is
// 0). Anything else is an error.
func (v Value) Float() (float64, error) {
	switch v.kind {
	case KindDouble:
		return v.f, nil
	case KindInt, KindBoolean:
		return float64(v.i), nil
	case KindString:
		if f, err := parseNumber(v.text); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("sendloop/legacy: %s value %q is not a number", v.kind, excerpt(v.text))
}

// Bool returns a boolean: a boolean as decoded; an int is true unless 0; a string is read
// as 1/0, true/false, yes/no or on/off in any case ("" is false).
func (v Value) Bool() (bool, error) {
	switch v.kind {
	case KindBoolean, KindInt:
		return v.i != 0, nil
	case KindString:
		switch strings.ToLower(strings.TrimSpace(v.text)) {
		case "1", "true", "yes", "on":
			return true, nil
		case "0", "false", "no", "off", "":
			return false, nil
		}
	}
	return false, fmt.Errorf("sendloop/legacy: %s value %q is not a boolean", v.kind, excerpt(v.text))
}

// Time returns a date-time: a dateTime.iso8601 as decoded; a string in ISO 8601 form or the
// service's 'YYYY-MM-DD HH:MM:SS' and 'YYYY-MM-DD' forms, in UTC when it names no zone.
// '0000-00-00', '0000-00-00 00:00:00' and "" are the zero time.
func (v Value) Time() (time.Time, error) {
	switch v.kind {
	case KindDateTime:
		return v.t, nil
	case KindString:
		if t, err := parseDateTime(v.text); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("sendloop/legacy: %s value %q is not a date-time", v.kind, excerpt(v.text))
}

// Bytes returns binary data: a base64 value decoded, or a string's bytes.
func (v Value) Bytes() ([]byte, error) {
	switch v.kind {
	case KindBase64:
		return v.data, nil
	case KindString:
		return []byte(v.text), nil
	}
	return nil, fmt.Errorf("sendloop/legacy: %s value is not binary data", v.kind)
}

// Struct returns the members of a struct, or nil for any other kind.
func (v Value) Struct() Struct { return v.members }

// Array returns the elements of an array, or nil for any other kind.
func (v Value) Array() []Value { return v.elems }

// Interface returns the value as plain Go data: string, int64, bool, float64, time.Time,
// []byte, map[string]any (a struct; with repeated names the first wins), []any, or nil.
func (v Value) Interface() any {
	switch v.kind {
	case KindString:
		return v.text
	case KindInt:
		return v.i
	case KindBoolean:
		return v.i != 0
	case KindDouble:
		return v.f
	case KindDateTime:
		return v.t
	case KindBase64:
		return v.data
	case KindStruct:
		return v.members.Map()
	case KindArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = e.Interface()
		}
		return out
	}
	return nil
}

// Get returns the first member named name, and whether there is one.
func (s Struct) Get(name string) (Value, bool) {
	for _, m := range s {
		if m.Name == name {
			return m.Value, true
		}
	}
	return Value{}, false
}

// Text returns the Text of the member named name, or "" when there is none.
func (s Struct) Text(name string) string {
	v, _ := s.Get(name)
	return v.text
}

// Map returns the struct as a map of Interface values; with repeated names the first wins.
func (s Struct) Map() map[string]any {
	out := make(map[string]any, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		out[s[i].Name] = s[i].Value.Interface()
	}
	return out
}

// maxDepth bounds the nesting of structs and arrays that Decode accepts.
const maxDepth = 64

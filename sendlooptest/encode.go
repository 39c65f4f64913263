package sendlooptest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// member is one key of an answer, in order.
type member struct {
	Key   string
	Value any
}

// object is an ordered answer object. Values are string, int, int64, float64, bool, nil,
// object, []object, []string, []any of those, or a subscriberPage (a []object written
// without making the objects).
type object []member

// appendJSON writes v as PHP's json_encode does: '/' escaped, non-ASCII as \uXXXX, and an
// empty object as [] (PHP cannot tell an empty map from an empty list).
func appendJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSONString(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	case bool:
		return strconv.AppendBool(b, v)
	case object:
		if len(v) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '{')
		for i, m := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, m.Key)
			b = append(b, ':')
			b = appendJSON(b, m.Value)
		}
		return append(b, '}')
	case []object:
		return appendJSONList(b, len(v), func(b []byte, i int) []byte { return appendJSON(b, v[i]) })
	case subscriberPage:
		return v.appendJSON(b)
	case []string:
		return appendJSONList(b, len(v), func(b []byte, i int) []byte { return appendJSONString(b, v[i]) })
	case []any:
		return appendJSONList(b, len(v), func(b []byte, i int) []byte { return appendJSON(b, v[i]) })
	}
	panic(fmt.Sprintf("sendlooptest: cannot encode %T", v))
}

// appendJSONList writes a JSON array of n elements, each written by elem.
func appendJSONList(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	b = append(b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// jsonPlain holds the bytes appendJSONString writes as they are: printable ASCII but for
// the quote, the backslash and the slash.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most text is printable ASCII that needs no escape: copy it at once.
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	b = append(b, s[:i]...)
	if i == len(s) {
		return append(b, '"')
	}
	for _, r := range s[i:] {
		switch {
		case r == '"' || r == '\\' || r == '/':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20 || r == 0x7f:
			b = appendU(b, r)
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(appendU(b, r1), r2)
		default:
			b = appendU(b, r)
		}
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendXML writes v under a <response> root. Keys that are not XML names (dates, IDs,
// addresses) become <item key="…">, list elements <item>.
func appendXML(b []byte, v object) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<response>"...)
	b = appendXMLMembers(b, v)
	return append(b, "</response>\n"...)
}

func appendXMLMembers(b []byte, v object) []byte {
	for _, m := range v {
		b = appendXMLElement(b, m.Key, m.Value)
	}
	return b
}

func appendXMLElement(b []byte, key string, v any) []byte {
	name, attr := key, ""
	if !isXMLName(key) {
		name = "item"
		var esc bytes.Buffer
		_ = xml.EscapeText(&esc, []byte(key))
		attr = ` key="` + esc.String() + `"`
	}
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, attr...)
	b = append(b, '>')
	switch v := v.(type) {
	case nil:
	case object:
		b = appendXMLMembers(b, v)
	case []object:
		for _, o := range v {
			b = appendXMLElement(b, "item", o)
		}
	case subscriberPage:
		for _, o := range v.objects() {
			b = appendXMLElement(b, "item", o)
		}
	case []string:
		for _, s := range v {
			b = appendXMLElement(b, "item", s)
		}
	case []any:
		for _, e := range v {
			b = appendXMLElement(b, "item", e)
		}
	case bool:
		if v {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
	default:
		var esc bytes.Buffer
		_ = xml.EscapeText(&esc, appendJSONScalar(nil, v))
		b = append(b, esc.Bytes()...)
	}
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

// appendJSONScalar writes a scalar's text without JSON quoting.
func appendJSONScalar(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return append(b, v...)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return b
}

func isXMLName(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return len(s) < 3 || !(s[0]|0x20 == 'x' && s[1]|0x20 == 'm' && s[2]|0x20 == 'l')
}

// appendPHP writes v as PHP's serialize() does; string lengths are in bytes.
func appendPHP(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "N;"...)
	case string:
		b = append(b, "s:"...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ":\""...)
		b = append(b, v...)
		return append(b, "\";"...)
	case int:
		return append(strconv.AppendInt(append(b, "i:"...), int64(v), 10), ';')
	case int64:
		return append(strconv.AppendInt(append(b, "i:"...), v, 10), ';')
	case float64:
		return append(strconv.AppendFloat(append(b, "d:"...), v, 'g', -1, 64), ';')
	case bool:
		if v {
			return append(b, "b:1;"...)
		}
		return append(b, "b:0;"...)
	case object:
		b = append(strconv.AppendInt(append(b, "a:"...), int64(len(v)), 10), ":{"...)
		for _, m := range v {
			b = appendPHPKey(b, m.Key)
			b = appendPHP(b, m.Value)
		}
		return append(b, '}')
	case []object:
		return appendPHPList(b, len(v), func(i int) any { return v[i] })
	case subscriberPage:
		return appendPHP(b, v.objects())
	case []string:
		return appendPHPList(b, len(v), func(i int) any { return v[i] })
	case []any:
		return appendPHPList(b, len(v), func(i int) any { return v[i] })
	}
	panic(fmt.Sprintf("sendlooptest: cannot serialize %T", v))
}

func appendPHPList(b []byte, n int, at func(int) any) []byte {
	b = append(strconv.AppendInt(append(b, "a:"...), int64(n), 10), ":{"...)
	for i := 0; i < n; i++ {
		b = append(strconv.AppendInt(append(b, "i:"...), int64(i), 10), ';')
		b = appendPHP(b, at(i))
	}
	return append(b, '}')
}

// appendPHPKey writes an array key; PHP turns decimal string keys into integers.
func appendPHPKey(b []byte, key string) []byte {
	if n, err := strconv.ParseInt(key, 10, 64); err == nil && strconv.FormatInt(n, 10) == key {
		return append(strconv.AppendInt(append(b, "i:"...), n, 10), ';')
	}
	return appendPHP(b, key)
}

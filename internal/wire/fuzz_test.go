package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jsonSeeds seed the JSON fuzz targets; each runs as a plain test in every `go test`.
var jsonSeeds = []string{
	`{}`, `[]`, `null`, `""`, `false`, `true`, `0`, `"x"`, ` { } `,
	`{"a":1}`, `{"a":1,"b":[1,2,{"c":null}],"d":"x\ny"}`, `{"a\u00e9":"\ud83d\ude00"}`,
	`{"a\/b":"\/"}`, `{"":""}`, `["x",{"a":1},3]`, `{"3":"x","7":"y"}`, `[[[[]]]]`,
	" \t\r\n{ \"a\" \n:\t1 ,\r\n \"b\" : [ ] } \n",
	`{"SubscriberID":"12","EmailAddress":"a@b.c","SubscriptionDate":"0000-00-00","CustomField7":"x"}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\x"}`,
	`{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":1}x`, `{"a":tru}`, `[1,]`, `[1`, `{"a":"b`,
	"\"\xff\"", "{\"\xff\":1}", `{"\ud800":1}`, `{"\ud83d\u0041":1}`, `[1e5,-0.5E-3,0]`,
	nested(maxDepth), `{"a":` + nested(maxDepth+1) + `}`,
}

// depth returns the deepest bracket nesting of a well-formed JSON document.
func depth(data []byte) int {
	d, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// rawMembers decodes a JSON object's members, in order, with encoding/json.
func rawMembers(data []byte) (keys []string, values []json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		values = append(values, v)
	}
	return keys, values, nil
}

func FuzzScanObject(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys []string
		var values [][]byte
		err := ScanObject(data, func(key, value []byte) error {
			if !Valid(value) || !json.Valid(value) {
				t.Fatalf("value %q of key %q is not valid JSON", value, key)
			}
			keys = append(keys, string(key))
			values = append(values, value)
			return nil
		})
		trimmed := trimSpace(data)
		if err == nil && !json.Valid(data) {
			t.Fatalf("ScanObject accepted invalid JSON %q", data)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ScanObject(%q) returned a non-syntax error %v", data, err)
			}
			if se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("ScanObject(%q): offset %d out of range", data, se.Offset)
			}
		}
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(data) || depth(data) > maxDepth {
			return
		}
		if err != nil {
			t.Fatalf("ScanObject rejected a valid object %q: %v", data, err)
		}
		wantKeys, wantValues, err := rawMembers(data)
		if err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if len(keys) != len(wantKeys) {
			t.Fatalf("ScanObject(%q) reported %d members, encoding/json %d", data, len(keys), len(wantKeys))
		}
		for i := range keys {
			// Invalid UTF-8 in keys is replaced by U+FFFD, as encoding/json does.
			if keys[i] != wantKeys[i] {
				t.Fatalf("key %d of %q: got %q, encoding/json %q", i, data, keys[i], wantKeys[i])
			}
			if !bytes.Equal(values[i], wantValues[i]) {
				t.Fatalf("value %d of %q: got %q, encoding/json %q", i, data, values[i], wantValues[i])
			}
		}
	})
}

func FuzzScanArray(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var elems [][]byte
		err := ScanArray(data, func(elem []byte) error {
			if !Valid(elem) || !json.Valid(elem) {
				t.Fatalf("element %q is not valid JSON", elem)
			}
			elems = append(elems, elem)
			return nil
		})
		if err == nil && !json.Valid(data) {
			t.Fatalf("ScanArray accepted invalid JSON %q", data)
		}
		trimmed := trimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '[' || !json.Valid(data) || depth(data) > maxDepth {
			return
		}
		if err != nil {
			t.Fatalf("ScanArray rejected a valid array %q: %v", data, err)
		}
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if len(elems) != len(want) {
			t.Fatalf("ScanArray(%q) reported %d elements, encoding/json %d", data, len(elems), len(want))
		}
		for i := range elems {
			if !bytes.Equal(elems[i], want[i]) {
				t.Fatalf("element %d of %q: got %q, encoding/json %q", i, data, elems[i], want[i])
			}
		}
	})
}

// FuzzValid: Valid agrees with encoding/json.Valid except past the nesting limit.
func FuzzValid(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, want := Valid(data), json.Valid(data)
		if got != want && !(want && depth(data) > maxDepth) {
			t.Fatalf("Valid(%q) = %v, encoding/json.Valid = %v", data, got, want)
		}
	})
}

// scalarSeeds seed the value fuzz targets with raw JSON values.
var scalarSeeds = []string{
	`"hello"`, `"a\"b\\c\/d\n\u00e9\ud83d\ude00"`, `""`, `null`, `true`, `false`, `12`, `-3`,
	`12.0`, `"12"`, `" 12 "`, `"1e3"`, `1e400`, `"12abc"`, `"12.5%"`, `"x"`, `{}`, `[]`,
	`"yes"`, `"Off"`, `"2026-03-04"`, `"2026-03-04 10:11:12"`, `"0000-00-00"`,
	`9223372036854775807`, `"999999999999999999"`, "\"\xff\"", `"\ud800"`, `01`, `"abc`,
}

func FuzzString(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add([]byte(s))
	}
	common := []string{"Subscribed", "Unsubscribed", "", "12", "true", "été"}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := String(data)
		interned, ierr := Interned(data, common...)
		if interned != got || (ierr == nil) != (err == nil) {
			t.Fatalf("Interned(%q) = %q, %v; String gave %q, %v", data, interned, ierr, got, err)
		}
		trimmed := trimSpace(data)
		isScalar := json.Valid(data) && (trimmed[0] != '{' && trimmed[0] != '[' ||
			string(trimmed) == "[]" || string(trimmed) == "{}")
		if (err == nil) != isScalar {
			t.Fatalf("String(%q): err = %v, but valid scalar = %v", data, err, isScalar)
		}
		if err != nil {
			return
		}
		switch {
		case trimmed[0] == '"':
			// Invalid UTF-8 is replaced by U+FFFD, byte by byte, as encoding/json does.
			var want string
			if err := json.Unmarshal(trimmed, &want); err != nil {
				t.Fatalf("encoding/json: %v", err)
			}
			if got != want {
				t.Fatalf("String(%q) = %q, encoding/json %q", data, got, want)
			}
		case string(trimmed) == "null", string(trimmed) == "[]", string(trimmed) == "{}":
			if got != "" {
				t.Fatalf("String(%s) = %q", trimmed, got)
			}
		default:
			if got != string(trimmed) {
				t.Fatalf("String(%q) = %q, want the literal text", data, got)
			}
		}
		// decode → encode → decode is stable.
		again, err := String(quote(got))
		if err != nil || again != got {
			t.Fatalf("String(%q) = %q, which reads back as %q (%v)", data, got, again, err)
		}
	})
}

// quote returns s as a JSON string.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func FuzzInt(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, data := range [][]byte{[]byte(s), quote(s)} {
			n, err := Int64(data)
			if err != nil {
				if n != 0 {
					t.Fatalf("Int64(%q) = %d with error %v", data, n, err)
				}
				continue
			}
			// Whatever Int accepts, Float accepts with the same value.
			f, ferr := Float(data)
			if ferr != nil || f != float64(n) {
				t.Fatalf("Int64(%q) = %d but Float = %v, %v", data, n, f, ferr)
			}
		}
		// A decimal integer in range decodes exactly, as a number and as a string.
		text := strings.TrimSpace(s)
		want, err := strconv.ParseInt(text, 10, 64)
		if err != nil || !json.Valid([]byte(text)) {
			return
		}
		for _, data := range [][]byte{[]byte(text), quote(text)} {
			got, err := Int64(data)
			if err != nil || got != want {
				t.Fatalf("Int64(%q) = %d, %v; want %d", data, got, err, want)
			}
		}
	})
}

func FuzzFloat(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Float([]byte(s))
		if err != nil && got != 0 {
			t.Fatalf("Float(%q) = %v with error %v", s, got, err)
		}
		// A JSON number decodes as encoding/json decodes it, as a number and as a string.
		var want float64
		trimmed := trimSpace([]byte(s))
		if len(trimmed) == 0 || trimmed[0] == '"' || trimmed[0] == 'n' ||
			json.Unmarshal(trimmed, &want) != nil {
			return
		}
		for _, data := range [][]byte{trimmed, quote(string(trimmed)), quote(string(trimmed) + "%")} {
			got, err := Float(data)
			if err != nil || got != want {
				t.Fatalf("Float(%q) = %v, %v; want %v", data, got, err, want)
			}
		}
	})
}

func FuzzBool(f *testing.F) {
	for _, s := range []string{
		"1", "0", "true", "False", "YES", "no", "on", "Off", "y", "N", "", "null", "maybe", " yes ", "tRuE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseBool(s)
		if err != nil {
			if got {
				t.Fatalf("ParseBool(%q) = true with error %v", s, err)
			}
			return
		}
		// Every accepted spelling is one of the documented words, in some letter case.
		switch strings.ToLower(s) {
		case "1", "true", "yes", "on", "y":
			if !got {
				t.Fatalf("ParseBool(%q) = false", s)
			}
		case "0", "false", "no", "off", "n", "", "null":
			if got {
				t.Fatalf("ParseBool(%q) = true", s)
			}
		default:
			t.Fatalf("ParseBool accepted %q", s)
		}
		// The same text in JSON quotes, padded, decodes the same.
		for _, data := range [][]byte{quote(s), quote(" " + s + "\t")} {
			b, err := Bool(data)
			if err != nil || b != got {
				t.Fatalf("Bool(%q) = %v, %v; want %v", data, b, err, got)
			}
		}
	})
}

var dateSeeds = []string{
	"2026-03-04", "2024-02-29", "2026-02-29", "2026-02-30", "0000-00-00", "0000-01-01", "9999-12-31",
	"2026-03-04 10:11:12", "2026-03-04T23:59:59", "0000-00-00 00:00:00", "2026-03-04 24:00:00",
	"", "null", "2026-1-4", "20260104", "2026-03-04Z", "0001-01-01",
}

func FuzzDate(f *testing.F) {
	for _, s := range dateSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDate(s)
		if err != nil {
			if !got.IsZero() {
				t.Fatalf("ParseDate(%q) = %v with error %v", s, got, err)
			}
			return
		}
		if j, err := Date(quote(s)); err != nil || !j.Equal(got) {
			t.Fatalf("Date(%q) = %v, %v; ParseDate gave %v", quote(s), j, err, got)
		}
		if got.IsZero() {
			return
		}
		if got.Location() != time.UTC || got.Hour() != 0 || got.Minute() != 0 || got.Second() != 0 || got.Nanosecond() != 0 {
			t.Fatalf("ParseDate(%q) = %v, want midnight UTC", s, got)
		}
		formatted := FormatDate(got)
		if formatted != s[:10] {
			t.Fatalf("FormatDate(ParseDate(%q)) = %q", s, formatted)
		}
		if back, err := ParseDate(formatted); err != nil || !back.Equal(got) {
			t.Fatalf("ParseDate(%q) = %v, %v; want %v", formatted, back, err, got)
		}
		if std, err := time.Parse(DateLayout, s[:10]); err != nil || !std.Equal(got) {
			t.Fatalf("time.Parse(%q) = %v, %v; ParseDate gave %v", s[:10], std, err, got)
		}
	})
}

func FuzzDateTime(f *testing.F) {
	for _, s := range dateSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDateTime(s)
		if err != nil {
			if !got.IsZero() {
				t.Fatalf("ParseDateTime(%q) = %v with error %v", s, got, err)
			}
			return
		}
		if j, err := DateTime(quote(s)); err != nil || !j.Equal(got) {
			t.Fatalf("DateTime(%q) = %v, %v; ParseDateTime gave %v", quote(s), j, err, got)
		}
		if got.IsZero() {
			return
		}
		if got.Location() != time.UTC || got.Nanosecond() != 0 {
			t.Fatalf("ParseDateTime(%q) = %v, want whole seconds in UTC", s, got)
		}
		canonical := s
		if len(s) == len(DateLayout) {
			canonical += " 00:00:00"
		} else {
			canonical = s[:10] + " " + s[11:]
		}
		formatted := FormatDateTime(got)
		if formatted != canonical {
			t.Fatalf("FormatDateTime(ParseDateTime(%q)) = %q, want %q", s, formatted, canonical)
		}
		if back, err := ParseDateTime(formatted); err != nil || !back.Equal(got) {
			t.Fatalf("ParseDateTime(%q) = %v, %v; want %v", formatted, back, err, got)
		}
		if std, err := time.Parse(DateTimeLayout, canonical); err != nil || !std.Equal(got) {
			t.Fatalf("time.Parse(%q) = %v, %v; ParseDateTime gave %v", canonical, std, err, got)
		}
		if d, err := ParseDate(s); err != nil || !d.Equal(time.Date(got.Year(), got.Month(), got.Day(), 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("ParseDate(%q) = %v, %v; want the date of %v", s, d, err, got)
		}
	})
}

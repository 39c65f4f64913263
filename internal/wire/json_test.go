package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// member is one (key, raw value) pair handed to a ScanObject callback, copied out.
type member struct{ Key, Value string }

func scanMembers(data string) ([]member, error) {
	var got []member
	err := ScanObject([]byte(data), func(key, value []byte) error {
		got = append(got, member{string(key), string(value)})
		return nil
	})
	return got, err
}

func scanElems(data string) ([]string, error) {
	var got []string
	err := ScanArray([]byte(data), func(elem []byte) error {
		got = append(got, string(elem))
		return nil
	})
	return got, err
}

// nested returns n nested arrays around an empty innermost one: [[[...]]].
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestScanObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []member
	}{
		{"one member", `{"a":1}`, []member{{"a", "1"}}},
		{"document order kept", `{"b":1,"a":2,"c":3}`, []member{{"b", "1"}, {"a", "2"}, {"c", "3"}}},
		{"duplicate keys all reported", `{"a":1,"a":2}`, []member{{"a", "1"}, {"a", "2"}}},
		{"every scalar kind", `{"s":"x","n":-1.5e+3,"t":true,"f":false,"z":null,"e":""}`,
			[]member{{"s", `"x"`}, {"n", "-1.5e+3"}, {"t", "true"}, {"f", "false"}, {"z", "null"}, {"e", `""`}}},
		{"nested values passed raw", `{"o":{"b":[1, 2], "c":{}},"a":[ {"x":"y"} ],"s":"x\ny\u00e9"}`,
			[]member{{"o", `{"b":[1, 2], "c":{}}`}, {"a", `[ {"x":"y"} ]`}, {"s", `"x\ny\u00e9"`}}},
		{"empty containers as values", `{"a":[],"b":{},"c":[[]]}`, []member{{"a", "[]"}, {"b", "{}"}, {"c", "[[]]"}}},
		{"empty key", `{"":1}`, []member{{"", "1"}}},
		{"escaped key latin", `{"a\u00e9":1}`, []member{{"aé", "1"}}},
		{"escaped key upper hex", `{"\u00C9":1}`, []member{{"É", "1"}}},
		{"escaped key surrogate pair", `{"\ud83d\ude00":1}`, []member{{"😀", "1"}}},
		{"escaped key solidus", `{"a\/b":1}`, []member{{"a/b", "1"}}},
		{"escaped key quote and backslash", `{"\"q\"\\":1}`, []member{{`"q"\`, "1"}}},
		{"escaped key control escapes", `{"\b\f\n\r\t":1}`, []member{{"\b\f\n\r\t", "1"}}},
		{"lone high surrogate becomes U+FFFD", `{"\ud83dx":1}`, []member{{"\uFFFDx", "1"}}},
		{"lone low surrogate becomes U+FFFD", `{"\ude00":1}`, []member{{"\uFFFD", "1"}}},
		{"surrogate with non-surrogate follower", `{"\ud83d\u0041":1}`, []member{{"\uFFFDA", "1"}}},
		{"long escaped key beyond the key buffer", `{"` + strings.Repeat(`\u0041`, 100) + `":1}`,
			[]member{{strings.Repeat("A", 100), "1"}}},
		{"escaped then plain then escaped keys", `{"\u0061b":1,"cd":2,"\u0065":3}`,
			[]member{{"ab", "1"}, {"cd", "2"}, {"e", "3"}}},
		{"raw UTF-8 key", `{"ключ":"значение"}`, []member{{"ключ", `"значение"`}}},
		{"whitespace everywhere", " \t\r\n{ \"a\" \n:\t1 ,\r\n \"b\" : [ 1 , 2 ] ,\"c\":\"x\"\n}\n\t ",
			[]member{{"a", "1"}, {"b", "[ 1 , 2 ]"}, {"c", `"x"`}}},
		{"whitespace inside empty object", "{ \n\t}", nil},

		// PHP empties.
		{"empty object", `{}`, nil},
		{"php empty array", `[]`, nil},
		{"php empty array spaced", " [ \n ] ", nil},
		{"php null", `null`, nil},
		{"php empty string", `""`, nil},
		{"php false", `false`, nil},
		{"php empty padded", "  null\n", nil},

		// PHP list sent where an object is expected.
		{"array as object", `["x", {"a":1} ,3]`, []member{{"0", `"x"`}, {"1", `{"a":1}`}, {"2", "3"}}},
		{"array as object past ten", `[0,1,2,3,4,5,6,7,8,9,10,11]`, []member{
			{"0", "0"}, {"1", "1"}, {"2", "2"}, {"3", "3"}, {"4", "4"}, {"5", "5"},
			{"6", "6"}, {"7", "7"}, {"8", "8"}, {"9", "9"}, {"10", "10"}, {"11", "11"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := scanMembers(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestScanArray(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"scalars", `[1,"a",true,false,null,-0.5E-2,""]`, []string{"1", `"a"`, "true", "false", "null", "-0.5E-2", `""`}},
		{"nested values passed raw", `[{"b":2, "c":[3]},[ 4 ,{}],"x\"y"]`, []string{`{"b":2, "c":[3]}`, `[ 4 ,{}]`, `"x\"y"`}},
		{"single element", `[7]`, []string{"7"}},
		{"whitespace everywhere", "\n [\t1 ,\r\n \"b\" , [ ]\n] \t", []string{"1", `"b"`, "[ ]"}},
		{"empty array", `[]`, nil},
		{"empty array spaced", "[ \n ]", nil},
		{"php null", `null`, nil},
		{"php empty string", `""`, nil},
		{"php false", `false`, nil},
		{"php empty object", `{}`, nil},
		{"php empty object spaced", "{ }", nil},
		{"object as array", `{"3":"x","7":{"a":[1]}, "9" : 5}`, []string{`"x"`, `{"a":[1]}`, "5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := scanElems(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// syntaxErrors are malformed documents, each with the message of the SyntaxError expected
// from both ScanObject and ScanArray (the array cases reach ScanObject through array-as-object
// and the object cases reach ScanArray through object-as-array).
var syntaxErrors = []struct {
	name, in, msg string
	offset        int
}{
	{"empty input", ``, "expected an", 0},
	{"only whitespace", " \n\t", "expected an", 0},
	{"bare number", `12`, "expected an", 0},
	{"bare true", `true`, "expected an", 0},
	{"non-empty string", `"abc"`, "expected an", 0},
	{"bad literal at top", `nul`, "expected an", 0},

	{"unterminated object", `{`, "expected a member name", 1},
	{"unterminated object after key", `{"a"`, "expected ':'", 4},
	{"unterminated object after colon", `{"a":`, "unexpected end of input", 5},
	{"unterminated object after value", `{"a":1`, "unterminated object", 6},
	{"unterminated object after comma", `{"a":1,`, "expected a member name", 7},
	{"unterminated nested object", `{"a":{"b":1}`, "unterminated object", 12},
	{"unterminated array", `[1`, "unterminated array", 2},
	{"unterminated array after comma", `[1,`, "unexpected end of input", 3},
	{"unterminated nested array", `{"a":[1,2}`, "expected ',' or a closing bracket", 9},
	{"unterminated nested container", `{"a":[1,2`, "unterminated container", 9},
	{"unterminated string value", `{"a":"b`, "unterminated string", 7},
	{"unterminated string key", `{"ab`, "unterminated string", 4},
	{"unterminated string in escape", `{"a":"b\`, "unterminated string", 8},
	{"unterminated string element", `["a`, "unterminated string", 3},

	{"bad escape in value", `{"a":"\x"}`, "invalid escape", 7},
	{"bad escape in key", `{"a\q":1}`, "invalid escape", 4},
	{"bad escape in element", `["\'"]`, "invalid escape", 3},
	{"bad \\u short", `{"a":"\u12"}`, `invalid \u escape`, 7},
	{"bad \\u non-hex", `{"a":"\u00g0"}`, `invalid \u escape`, 7},
	{"bad \\u at end", `{"a":"\u`, `invalid \u escape`, 7},
	{"bad \\u in key", `{"\uzzzz":1}`, `invalid \u escape`, 3},
	{"bad \\U upper", `["\U0041"]`, "invalid escape", 3},

	{"control char in value", "{\"a\":\"x\ty\"}", "control character in string", 7},
	{"newline in key", "{\"a\nb\":1}", "control character in string", 3},
	{"NUL in element", "[\"\x00\"]", "control character in string", 2},

	{"missing colon", `{"a" 1}`, "expected ':'", 5},
	{"equals for colon", `{"a"=1}`, "expected ':'", 4},
	{"missing comma", `{"a":1 "b":2}`, "expected ',' or '}'", 7},
	{"missing comma in array", `[1 2]`, "expected ',' or ']'", 3},
	{"missing comma nested", `{"a":[1 2]}`, "expected ',' or a closing bracket", 8},
	{"unquoted key", `{a:1}`, "expected a member name", 1},
	{"single-quoted key", `{'a':1}`, "expected a member name", 1},
	{"number key", `{1:1}`, "expected a member name", 1},
	{"missing value", `{"a":}`, "unexpected character '}'", 5},
	{"missing element", `[,1]`, "unexpected character ','", 1},
	{"mismatched closer", `{"a":{"b":1]}`, "expected ',' or a closing bracket", 11},

	{"trailing comma object", `{"a":1,}`, "expected a member name", 7},
	{"trailing comma array", `[1,]`, "unexpected character ']'", 3},
	{"trailing comma nested", `{"a":[1,]}`, "unexpected character ']'", 8},
	{"trailing garbage", `{"a":1}x`, "unexpected data after the value", 7},
	{"trailing second object", `{"a":1} {}`, "unexpected data after the value", 8},
	{"trailing closer", `{"a":1}}`, "unexpected data after the value", 7},
	{"trailing garbage array", `[1]]`, "unexpected data after the value", 3},
	{"trailing garbage empty array", `[] x`, "unexpected data after the value", 3},
	{"trailing garbage empty object", `{} x`, "unexpected data after the value", 3},

	{"bad literal tru", `{"a":tru}`, "invalid literal", 5},
	{"bad literal nul", `[nul]`, "invalid literal", 1},
	{"bad literal case", `{"a":True}`, "unexpected character 'T'", 5},
	{"bad literal prefix", `{"a":fals}`, "invalid literal", 5},
	{"bad literal suffix", `[truex]`, "expected ',' or ']'", 5},
	{"bad literal NaN", `{"a":NaN}`, "unexpected character 'N'", 5},

	{"number leading zero", `{"a":01}`, "expected ',' or '}'", 6},
	{"number negative leading zero", `[-01]`, "expected ',' or ']'", 3},
	{"number trailing dot", `{"a":1.}`, "invalid number", 7},
	{"number dot exponent", `[1.e5]`, "invalid number", 3},
	{"number bare minus", `{"a":-}`, "invalid number", 6},
	{"number minus letter", `[-x]`, "invalid number", 2},
	{"number bare exponent", `{"a":1e}`, "invalid number", 7},
	{"number exponent sign only", `[1e+]`, "invalid number", 4},
	{"number leading dot", `{"a":.5}`, "unexpected character '.'", 5},
	{"number leading plus", `[+1]`, "unexpected character '+'", 1},
	{"number hex", `[0x10]`, "expected ',' or ']'", 2},
	{"number at end", `{"a":1e`, "invalid number", 7},
}

func TestScanSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range syntaxErrors {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Members before the error may be reported; nothing is asserted about them.
			errObj := ScanObject([]byte(tt.in), func(_, _ []byte) error { return nil })
			errArr := ScanArray([]byte(tt.in), func([]byte) error { return nil })
			for _, err := range []error{errObj, errArr} {
				var se *SyntaxError
				require.ErrorAs(t, err, &se)
				assert.Contains(t, se.Msg, tt.msg)
				assert.Equal(t, tt.offset, se.Offset, "offset in %q", tt.in)
			}
			if tt.msg != "expected an" { // top-level scalars are valid JSON, just not containers
				assert.False(t, Valid([]byte(tt.in)), "Valid(%q)", tt.in)
			}
		})
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	t.Parallel()
	err := ScanObject([]byte(`{"a" 1}`), func(_, _ []byte) error { return nil })
	require.EqualError(t, err, "invalid JSON at offset 5: expected ':'")
}

// TestScanCallbackNotCalledOnMalformedValue: a value is validated before it is handed out.
func TestScanCallbackNotCalledOnMalformedValue(t *testing.T) {
	t.Parallel()
	var keys []string
	err := ScanObject([]byte(`{"a":1,"b":[1,}`), func(key, _ []byte) error {
		keys = append(keys, string(key))
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, []string{"a"}, keys)
}

func TestScanDepthLimit(t *testing.T) {
	t.Parallel()

	t.Run("600 nested arrays in an object", func(t *testing.T) {
		t.Parallel()
		err := ScanObject([]byte(`{"a":`+nested(600)+`}`), func(_, _ []byte) error { return nil })
		var se *SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "nesting too deep", se.Msg)
	})
	t.Run("600 nested arrays", func(t *testing.T) {
		t.Parallel()
		err := ScanArray([]byte(nested(600)), func([]byte) error { return nil })
		var se *SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "nesting too deep", se.Msg)
		assert.False(t, Valid([]byte(nested(600))))
	})
	t.Run("600 nested objects", func(t *testing.T) {
		t.Parallel()
		doc := strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600)
		err := ScanObject([]byte(doc), func(_, _ []byte) error { return nil })
		var se *SyntaxError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "nesting too deep", se.Msg)
	})
	t.Run("a million unclosed brackets", func(t *testing.T) {
		t.Parallel()
		doc := []byte(strings.Repeat("[", 1_000_000))
		require.Error(t, ScanArray(doc, func([]byte) error { return nil }))
		require.Error(t, ScanObject(doc, func(_, _ []byte) error { return nil }))
		assert.False(t, Valid(doc))
	})
	t.Run("within the limit", func(t *testing.T) {
		t.Parallel()
		got, err := scanMembers(`{"a":` + nested(500) + `}`)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, nested(500), got[0].Value)
	})
	t.Run("Valid boundary", func(t *testing.T) {
		t.Parallel()
		assert.True(t, Valid([]byte(nested(maxDepth))))
		assert.False(t, Valid([]byte(nested(maxDepth+1))))
	})
}

func TestScanCallbackError(t *testing.T) {
	t.Parallel()
	errStop := errors.New("stop here")

	t.Run("object", func(t *testing.T) {
		t.Parallel()
		var seen []string
		err := ScanObject([]byte(`{"a":1,"b":2,"c":3}`), func(key, _ []byte) error {
			seen = append(seen, string(key))
			if string(key) == "b" {
				return errStop
			}
			return nil
		})
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "b: stop here")
		assert.Equal(t, []string{"a", "b"}, seen, "the scan stops at the error")
	})
	t.Run("error wins over later syntax error", func(t *testing.T) {
		t.Parallel()
		err := ScanObject([]byte(`{"a":1, garbage`), func(_, _ []byte) error { return errStop })
		require.ErrorIs(t, err, errStop)
		var se *SyntaxError
		assert.False(t, errors.As(err, &se))
	})
	t.Run("escaped key is unescaped in the message", func(t *testing.T) {
		t.Parallel()
		err := ScanObject([]byte(`{"a\u00e9":1}`), func(_, _ []byte) error { return errStop })
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "aé: stop here")
	})
	t.Run("nested wrapping", func(t *testing.T) {
		t.Parallel()
		err := ScanObject([]byte(`{"outer":{"inner":1}}`), func(_, v []byte) error {
			return ScanObject(v, func(_, _ []byte) error { return errStop })
		})
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "outer: inner: stop here")
	})
	t.Run("array", func(t *testing.T) {
		t.Parallel()
		n := 0
		err := ScanArray([]byte(`[1,2,3]`), func([]byte) error {
			n++
			if n == 2 {
				return errStop
			}
			return nil
		})
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "[1]: stop here")
		assert.Equal(t, 2, n)
	})
	t.Run("array as object", func(t *testing.T) {
		t.Parallel()
		err := ScanObject([]byte(`["x","y"]`), func(key, _ []byte) error {
			if string(key) == "1" {
				return errStop
			}
			return nil
		})
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "[1]: stop here")
	})
	t.Run("object as array", func(t *testing.T) {
		t.Parallel()
		err := ScanArray([]byte(`{"k":"x"}`), func([]byte) error { return errStop })
		require.ErrorIs(t, err, errStop)
		assert.EqualError(t, err, "k: stop here")
	})
}

// TestScanObjectAllocs: walking an object whose keys hold no escapes should not allocate;
// the callback gets subslices of the input.
func TestScanObjectAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	data := []byte(`{"SubscriberID":"12","EmailAddress":"a@b.c","CustomField7":"x","Tags":[1,2]}`)
	n := 0
	fn := func(_, _ []byte) error { n++; return nil }
	allocs := testing.AllocsPerRun(100, func() {
		if err := ScanObject(data, fn); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "allocations per ScanObject call")
	assert.Equal(t, 4*101, n)
}

// validCases are compared with encoding/json.Valid.
var validCases = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `""`, `0`, `-0`, `1.5`, `-1.5e10`, `1E+2`, `1e-2`,
	`0.0`, `123456789012345678901234567890`,
	` {"a" : [1, "x", {"b": null}] } `, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{"a":1}}`, `[1]]`, `{1:1}`,
	`01`, `1.`, `-`, `1e`, `1e+`, `.5`, `+1`, `0x10`, `NaN`, `Infinity`, `nul`, `tru`, `True`,
	`"abc`, `"a\"`, `"\x"`, `"\u12"`, `"\u00e9"`, `"\ud83d"`, `"\ud83d\ude00"`, `"\/"`,
	"\"\t\"", "\"\x7f\"", "\"\xff\"", "\"\xc3\xa9\"", "\ufeff{}", `{} {}`, `1 2`, "\v1", "\f1",
	"1\n", `{"a":{"b":{"c":[[[]]]}}}`, `[{]`, `[}`, `{]`, `"`, `[`, `{`, `{"a":1 "b":2}`,
	nested(100), nested(maxDepth),
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range validCases {
		assert.Equal(t, json.Valid([]byte(in)), Valid([]byte(in)), "Valid(%q)", in)
	}
	for _, tt := range syntaxErrors {
		assert.Equal(t, json.Valid([]byte(tt.in)), Valid([]byte(tt.in)), "Valid(%q)", tt.in)
	}
}

// TestValidDepthLimit documents the one intended difference from encoding/json: nesting
// deeper than maxDepth is rejected (encoding/json allows 10000 levels).
func TestValidDepthLimit(t *testing.T) {
	t.Parallel()
	deep := []byte(nested(maxDepth + 1))
	assert.True(t, json.Valid(deep))
	assert.False(t, Valid(deep))
}

package wire

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", `"hello"`, "hello"},
		{"empty", `""`, ""},
		{"padded value", " \n\"x\"\t", "x"},
		{"inner spaces kept", `" a b "`, " a b "},
		{"escapes", `"a\"b\\c\/d\b\f\n\r\te"`, "a\"b\\c/d\b\f\n\r\te"},
		{"unicode escapes", `"\u00e9\u00C9\u20ac"`, "éÉ€"},
		{"surrogate pair", `"\ud83d\ude00!"`, "😀!"},
		{"lone surrogate", `"\ud800"`, "\uFFFD"},
		{"raw UTF-8", `"ünïcødé"`, "ünïcødé"},
		{"invalid UTF-8 replaced byte by byte", "\"a\xff\xfeb\"", "a\uFFFD\uFFFDb"},
		{"integer text", `12`, "12"},
		{"number text kept verbatim", `12.50`, "12.50"},
		{"negative exponent text", `-1.5E-3`, "-1.5E-3"},
		{"negative zero", `-0`, "-0"},
		{"null", `null`, ""},
		{"the string null stays", `"null"`, "null"},
		{"true", `true`, "true"},
		{"false", `false`, "false"},
		{"numeric string opaque", `"007"`, "007"},
		{"date string opaque", `"0000-00-00"`, "0000-00-00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := String([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStringErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in    string
		notScalar   bool
		syntaxError bool
	}{
		{"object", `{"a":1}`, true, false},
		{"array", `[1]`, true, false},
		{"empty input", ``, false, true},
		{"whitespace", `  `, false, true},
		{"unterminated", `"abc`, false, true},
		{"trailing data after string", `"a" "b"`, false, true},
		{"bad escape", `"\x"`, false, true},
		{"bad unicode escape", `"\u12"`, false, true},
		{"control char", "\"a\nb\"", false, true},
		{"bad literal", `tru`, false, true},
		{"bad number", `01`, false, true},
		{"trailing after number", `1 2`, false, true},
		{"bare word", `abc`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := String([]byte(tt.in))
			require.Error(t, err)
			assert.Empty(t, got)
			if tt.notScalar {
				assert.ErrorIs(t, err, errNotScalar)
			}
			if tt.syntaxError {
				var se *SyntaxError
				assert.ErrorAs(t, err, &se)
			}
		})
	}
}

func TestInterned(t *testing.T) {
	t.Parallel()
	common := []string{"Subscribed", "Unsubscribed", "Confirmation Pending", ""}
	tests := []struct {
		name, in, want string
	}{
		{"common value", `"Subscribed"`, "Subscribed"},
		{"another common value", `"Unsubscribed"`, "Unsubscribed"},
		{"escaped common value", `"Confirmation\u0020Pending"`, "Confirmation Pending"},
		{"padded", " \"Subscribed\" ", "Subscribed"},
		{"empty", `""`, ""},
		{"null", `null`, ""},
		{"other value", `"Bounced"`, "Bounced"},
		{"case differs", `"subscribed"`, "subscribed"},
		{"escaped other value", `"\u00e9t\u00e9"`, "été"},
		{"number text", `12`, "12"},
		{"long escaped value", `"` + strings.Repeat(`\u0041`, 100) + `"`, strings.Repeat("A", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Interned([]byte(tt.in), common...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			str, err := String([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, str, got, "Interned agrees with String")
		})
	}
	for _, in := range []string{`{"a":1}`, `[1]`, `"abc`, ``, `tru`} {
		_, err := Interned([]byte(in), common...)
		assert.Error(t, err, "Interned(%s)", in)
	}
	got, err := Interned([]byte(`"x"`))
	require.NoError(t, err)
	assert.Equal(t, "x", got, "no common values")
}

// TestInternedNull: JSON null is "" for String, so it must be "" for Interned too, even when
// the common values include the word "null". Today the common list is searched first.
func TestInternedNull(t *testing.T) {
	t.Parallel()
	got, err := Interned([]byte(`null`), "null", "Subscribed")
	require.NoError(t, err)
	assert.Equal(t, "", got)
	// The string "null" is text like any other.
	got, err = Interned([]byte(`"null"`), "null")
	require.NoError(t, err)
	assert.Equal(t, "null", got)
}

func TestValueAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	common := []string{"Subscribed", "Unsubscribed", "Confirmation Pending"}
	for _, tt := range []struct {
		name   string
		allocs float64
		fn     func() error
	}{
		{"Interned match", 0, func() error { _, err := Interned([]byte(`"Unsubscribed"`), common...); return err }},
		{"Interned escaped match", 0, func() error {
			_, err := Interned([]byte(`"Confirmation\u0020Pending"`), common...)
			return err
		}},
		{"String escaped short", 1, func() error { _, err := String([]byte(`"caf\u00e9 \"x\""`)); return err }},
		{"Int string", 0, func() error { _, err := Int([]byte(`"12345"`)); return err }},
		{"Int float form", 0, func() error { _, err := Int([]byte(`"12.0"`)); return err }},
		{"Float percent", 0, func() error { _, err := Float([]byte(`"12.5%"`)); return err }},
		{"Bool", 0, func() error { _, err := Bool([]byte(`"Yes"`)); return err }},
		{"Date", 0, func() error { _, err := Date([]byte(`"2026-03-04"`)); return err }},
		{"DateTime", 0, func() error { _, err := DateTime([]byte(`"2026-03-04 10:11:12"`)); return err }},
	} {
		var err error
		allocs := testing.AllocsPerRun(100, func() { err = tt.fn() })
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.allocs, allocs, tt.name)
	}
}

func TestInt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"number", `12`, 12},
		{"string", `"12"`, 12},
		{"spaces inside string", `" 12 "`, 12},
		{"spaces around number", " 12\n", 12},
		{"empty string", `""`, 0},
		{"blank string", `"  "`, 0},
		{"null", `null`, 0},
		{"false", `false`, 0},
		{"true", `true`, 1},
		{"string false", `"false"`, 0},
		{"string true", `"true"`, 1},
		{"zero", `0`, 0},
		{"negative zero", `-0`, 0},
		{"negative", `-3`, -3},
		{"negative string", `"-3"`, -3},
		{"integral float", `12.0`, 12},
		{"integral float string", `"12.0"`, 12},
		{"exponent string", `"1e3"`, 1000},
		{"exponent number", `1E3`, 1000},
		{"negative exponent integral", `1200e-2`, 12},
		{"leading zeros in string", `"007"`, 7},
		{"18 digits", `999999999999999999`, 999999999999999999},
		{"18 digits negative", `"-999999999999999999"`, -999999999999999999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Int64([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)

			n, err := Int([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, int(tt.want), n)
		})
	}
}

func TestIntErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`"abc"`, `"12abc"`, `"abc12"`, `"1 2"`, `"12.5"`, `12.5`, `-0.1`, `"1e-3"`,
		`"99999999999999999999"`, `-99999999999999999999`, `1e19`, `"1e400"`, `-1e400`,
		`"NaN"`, `"Inf"`, `"-Infinity"`, `"-"`, `"+"`, `"%"`, `"1,000"`, `"0x10"`,
		`[1]`, `{"a":1}`, ``, `"12`, `abc`, `01`,
	} {
		got, err := Int64([]byte(in))
		assert.Error(t, err, "Int64(%s)", in)
		assert.Zero(t, got, "Int64(%s)", in)
		n, err := Int([]byte(in))
		assert.Error(t, err, "Int(%s)", in)
		assert.Zero(t, n, "Int(%s)", in)
	}
	_, err := Int64([]byte(`"12abc"`))
	assert.EqualError(t, err, `not an integer: "12abc"`)
}

// TestInt64FullRange: every int64 must decode exactly. Integers of 19 digits bypass the
// exact fast path and go through float64, which loses precision past 2^53 and rejects
// anything above 2^62.
func TestInt64FullRange(t *testing.T) {
	t.Parallel()
	for _, want := range []int64{
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, 1 << 62, 1<<62 + 1,
		1_000_000_000_000_000_001, -1_000_000_000_000_000_001, 1_234_567_890_123_456_789,
	} {
		text := strconv.FormatInt(want, 10)
		for _, in := range []string{text, `"` + text + `"`} {
			got, err := Int64([]byte(in))
			if assert.NoError(t, err, "Int64(%s)", in) {
				assert.Equal(t, want, got, "Int64(%s)", in)
			}
		}
	}
	// One past the range is an error, not a wrapped or saturated value.
	for _, in := range []string{`9223372036854775808`, `"-9223372036854775809"`} {
		_, err := Int64([]byte(in))
		assert.Error(t, err, "Int64(%s)", in)
	}
}

func TestFloat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want float64
	}{
		{"number", `12.5`, 12.5},
		{"integer", `12`, 12},
		{"string", `"12.5"`, 12.5},
		{"percent", `"12.5%"`, 12.5},
		{"percent with space", `"12.5 %"`, 12.5},
		{"percent integer", `"100%"`, 100},
		{"padded string", `" 3.25 "`, 3.25},
		{"negative exponent", `-1e-3`, -0.001},
		{"exponent string", `"2.5E2"`, 250},
		{"zero", `0`, 0},
		{"empty string", `""`, 0},
		{"null", `null`, 0},
		{"false", `false`, 0},
		{"true", `true`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Float([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFloatErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`"x"`, `"12.5x"`, `"%"`, `" % "`, `"12%%"`, `"%12"`, `"1,5"`, `"1 2"`, `"1e400"`,
		`[1.5]`, ``, `1.`, `"12.5`,
		`"NaN"`, `"nan"`, `"Inf"`, `"+Inf"`, `"-Infinity"`, `"inf%"`, `"1e400"`, `"-1e400"`,
	} {
		got, err := Float([]byte(in))
		assert.Error(t, err, "Float(%s)", in)
		assert.Zero(t, got, "Float(%s)", in)
	}
	_, err := Float([]byte(`"x"`))
	assert.EqualError(t, err, `not a number: "x"`)
}

func TestBool(t *testing.T) {
	t.Parallel()
	trues := []string{
		`true`, `1`, `"1"`, `"true"`, `"True"`, `"TRUE"`, `"yes"`, `"Yes"`, `"YES"`,
		`"on"`, `"On"`, `"ON"`, `"y"`, `"Y"`, `" yes "`, " \"1\"\n",
	}
	falses := []string{
		`false`, `0`, `"0"`, `"false"`, `"False"`, `"FALSE"`, `"no"`, `"No"`, `"NO"`,
		`"off"`, `"Off"`, `"OFF"`, `"n"`, `"N"`, `""`, `"  "`, `null`, `"null"`,
	}
	for _, in := range trues {
		got, err := Bool([]byte(in))
		require.NoError(t, err, "Bool(%s)", in)
		assert.True(t, got, "Bool(%s)", in)
	}
	for _, in := range falses {
		got, err := Bool([]byte(in))
		require.NoError(t, err, "Bool(%s)", in)
		assert.False(t, got, "Bool(%s)", in)
	}
	for _, in := range []string{
		`2`, `-1`, `1.0`, `"2"`, `"maybe"`, `"t"`, `"f"`, `"truee"`, `"yess"`, `"o"`,
		`[true]`, ``, `tru`, `"true`,
	} {
		got, err := Bool([]byte(in))
		assert.Error(t, err, "Bool(%s)", in)
		assert.False(t, got, "Bool(%s)", in)
	}
	_, err := Bool([]byte(`"maybe"`))
	assert.EqualError(t, err, `not a boolean: "maybe"`)
}

func TestParseBool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"1", true}, {"true", true}, {"True", true}, {"TRUE", true}, {"yes", true}, {"on", true},
		{"y", true}, {"0", false}, {"false", false}, {"no", false}, {"off", false}, {"n", false},
		{"", false}, {"null", false},
	}
	for _, tt := range tests {
		got, err := ParseBool(tt.in)
		require.NoError(t, err, "ParseBool(%q)", tt.in)
		assert.Equal(t, tt.want, got, "ParseBool(%q)", tt.in)
	}
	for _, in := range []string{" 1", "1 ", `"1"`, "2", "nope", "enabled"} {
		_, err := ParseBool(in)
		assert.Error(t, err, "ParseBool(%q)", in)
	}
}

// TestBoolCaseInsensitive: Bool's documentation promises case-insensitive spellings, but
// only lower, Title and UPPER case are listed in ParseBool.
func TestBoolCaseInsensitive(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"tRUE": true, "yEs": true, "oN": true, "fALSE": false, "nO": false, "oFf": false,
	} {
		got, err := ParseBool(in)
		if assert.NoError(t, err, "ParseBool(%q)", in) {
			assert.Equal(t, want, got, "ParseBool(%q)", in)
		}
	}
}

func utcDate(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"date", `"2026-03-04"`, utcDate(2026, 3, 4)},
		{"padded", `" 2026-03-04 "`, utcDate(2026, 3, 4)},
		{"leap day", `"2024-02-29"`, utcDate(2024, 2, 29)},
		{"last day", `"9999-12-31"`, utcDate(9999, 12, 31)},
		{"year zero with a month", `"0000-01-01"`, utcDate(0, 1, 1)},
		{"date-time drops the time", `"2026-03-04 10:11:12"`, utcDate(2026, 3, 4)},
		{"T separator drops the time", `"2026-03-04T23:59:59"`, utcDate(2026, 3, 4)},
		{"zero date", `"0000-00-00"`, time.Time{}},
		{"zero date-time", `"0000-00-00 00:00:00"`, time.Time{}},
		{"zero date-time T", `"0000-00-00T00:00:00"`, time.Time{}},
		{"zero date with a time", `"0000-00-00 12:34:56"`, time.Time{}},
		{"empty", `""`, time.Time{}},
		{"null", `null`, time.Time{}},
		{"string null", `"null"`, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Date([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}

// badDates fail both as dates and as date-times.
var badDates = []string{
	`"2026-02-29"`, `"2026-02-30"`, `"2026-04-31"`, `"2026-13-01"`, `"2026-00-10"`, `"2026-01-00"`,
	`"2026-01-32"`, `"0000-00-01"`, `"0000-01-00"`,
	`"2026-1-4"`, `"26-01-04"`, `"2026/01/04"`, `"20260104"`, `"2026-01-4"`, `"2026-01"`, `"2026"`,
	`"2026-01-04Z"`, `"2026-01-04 x"`, `"2026-01-04 10:11"`, `"2026-01-04 10:11:12.5"`,
	`"2026-01-04T10:11:12Z"`, `"2026-01-04T10:11:12+02:00"`, `"2026-01-04_10:11:12"`,
	`"2026-01-04 24:00:00"`, `"2026-01-04 10:60:00"`, `"2026-01-04 10:11:60"`,
	`"2026-01-04 1a:11:12"`, `"2026-01-04 10-11-12"`, `"abcd-ef-gh"`, `"+026-01-04"`,
	`"-026-01-04"`, `"2026-+1-04"`, `"04-01-2026"`, `"0000-00-00 x"`, `"now"`,
	`20260104`, `true`, `[1]`, ``, `"2026-01-04`,
}

func TestDateErrors(t *testing.T) {
	t.Parallel()
	for _, in := range badDates {
		got, err := Date([]byte(in))
		assert.Error(t, err, "Date(%s)", in)
		assert.True(t, got.IsZero(), "Date(%s)", in)
	}
	_, err := Date([]byte(`"2026-02-30"`))
	assert.EqualError(t, err, `not a date: "2026-02-30"`)
}

func TestDateTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"date-time", `"2026-03-04 10:11:12"`, time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC)},
		{"T separator", `"2026-03-04T10:11:12"`, time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC)},
		{"padded", ` " 2026-03-04 10:11:12 " `, time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC)},
		{"last second", `"2026-12-31 23:59:59"`, time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"midnight", `"2026-03-04 00:00:00"`, utcDate(2026, 3, 4)},
		{"bare date is midnight", `"2026-03-04"`, utcDate(2026, 3, 4)},
		{"leap day", `"2024-02-29 12:00:00"`, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)},
		{"zero date-time", `"0000-00-00 00:00:00"`, time.Time{}},
		{"zero date-time T", `"0000-00-00T00:00:00"`, time.Time{}},
		{"zero date", `"0000-00-00"`, time.Time{}},
		{"empty", `""`, time.Time{}},
		{"null", `null`, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := DateTime([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}

func TestDateTimeErrors(t *testing.T) {
	t.Parallel()
	for _, in := range badDates {
		got, err := DateTime([]byte(in))
		assert.Error(t, err, "DateTime(%s)", in)
		assert.True(t, got.IsZero(), "DateTime(%s)", in)
	}
}

func TestParseDateAndDateTime(t *testing.T) {
	t.Parallel()
	d, err := ParseDate("2026-03-04 10:11:12")
	require.NoError(t, err)
	assert.Equal(t, utcDate(2026, 3, 4), d)

	dt, err := ParseDateTime("2026-03-04T10:11:12")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC), dt)

	// The Parse forms take text already out of its quotes: quotes and padding are errors.
	for _, in := range []string{`"2026-03-04"`, " 2026-03-04", "2026-03-04 "} {
		_, err := ParseDate(in)
		assert.Error(t, err, "ParseDate(%q)", in)
		_, err = ParseDateTime(in)
		assert.Error(t, err, "ParseDateTime(%q)", in)
	}
}

func TestFormatDate(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "0000-00-00", FormatDate(time.Time{}))
	assert.Equal(t, "0000-00-00 00:00:00", FormatDateTime(time.Time{}))
	assert.Equal(t, "2026-03-04", FormatDate(time.Date(2026, 3, 4, 23, 59, 59, 0, time.UTC)))
	assert.Equal(t, "2026-03-04 23:59:59", FormatDateTime(time.Date(2026, 3, 4, 23, 59, 59, 999, time.UTC)))
	// The wall clock of the time's own location is written; no conversion to UTC.
	plus5 := time.FixedZone("+05", 5*3600)
	assert.Equal(t, "2026-03-05", FormatDate(time.Date(2026, 3, 5, 2, 0, 0, 0, plus5)))
	assert.Equal(t, "2026-03-05 02:00:00", FormatDateTime(time.Date(2026, 3, 5, 2, 0, 0, 0, plus5)))
	assert.Equal(t, "0000-01-01", FormatDate(utcDate(0, 1, 1)))
}

func TestDateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, want := range []time.Time{
		utcDate(2026, 3, 4), utcDate(2024, 2, 29), utcDate(1970, 1, 1), utcDate(9999, 12, 31),
		utcDate(0, 1, 1), utcDate(1, 1, 2), {},
	} {
		s := FormatDate(want)
		got, err := ParseDate(s)
		require.NoError(t, err, "ParseDate(%q)", s)
		assert.Equal(t, want, got, "ParseDate(%q)", s)

		got, err = Date([]byte(`"` + s + `"`))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	zero, err := ParseDate(FormatDate(time.Time{}))
	require.NoError(t, err)
	assert.True(t, zero.IsZero())
}

func TestDateTimeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, want := range []time.Time{
		time.Date(2026, 3, 4, 10, 11, 12, 0, time.UTC), time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), utcDate(2026, 3, 4), {},
	} {
		s := FormatDateTime(want)
		got, err := ParseDateTime(s)
		require.NoError(t, err, "ParseDateTime(%q)", s)
		assert.Equal(t, want, got, "ParseDateTime(%q)", s)

		got, err = DateTime([]byte(`"` + s + `"`))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	zero, err := ParseDateTime(FormatDateTime(time.Time{}))
	require.NoError(t, err)
	assert.True(t, zero.IsZero())
}

func TestErrorExcerptIsBounded(t *testing.T) {
	t.Parallel()
	_, err := Int([]byte(`"` + strings.Repeat("x", 100) + `"`))
	require.Error(t, err)
	assert.Equal(t, `not an integer: "`+strings.Repeat("x", 40)+`…"`, err.Error())
}

// PHP writes an empty value as [] or {} where a scalar belongs: every scalar reader takes
// them for the empty value.
func TestEmptyContainersAreEmptyScalars(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`[]`, `{}`, ` [] `} {
		s, err := String([]byte(in))
		require.NoError(t, err, in)
		assert.Empty(t, s, in)
		n, err := Int([]byte(in))
		require.NoError(t, err, in)
		assert.Zero(t, n, in)
		f, err := Float([]byte(in))
		require.NoError(t, err, in)
		assert.Zero(t, f, in)
		b, err := Bool([]byte(in))
		require.NoError(t, err, in)
		assert.False(t, b, in)
		d, err := Date([]byte(in))
		require.NoError(t, err, in)
		assert.True(t, d.IsZero(), in)
	}
}

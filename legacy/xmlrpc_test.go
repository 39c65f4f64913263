package legacy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
)

// response wraps a value's XML in a methodResponse.
func response(value string) []byte {
	return []byte(`<?xml version="1.0"?><methodResponse><params><param><value>` + value + `</value></param></params></methodResponse>`)
}

func TestDecodeScalars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value string
		kind  legacy.Kind
		text  string
		want  any // Interface()
	}{
		{"string", "<string>Subscribed</string>", legacy.KindString, "Subscribed", "Subscribed"},
		{"string keeps spaces", "<string>  a b  </string>", legacy.KindString, "  a b  ", "  a b  "},
		{"empty string", "<string/>", legacy.KindString, "", ""},
		{"escaped string", "<string>a &amp; b &lt;c&gt; &#233;</string>", legacy.KindString, "a & b <c> é", "a & b <c> é"},
		{"CDATA string", "<string><![CDATA[<x>]]></string>", legacy.KindString, "<x>", "<x>"},
		{"untyped value", "Waiting For Opt-In Confirmation", legacy.KindString, "Waiting For Opt-In Confirmation", "Waiting For Opt-In Confirmation"},
		{"untyped empty value", "", legacy.KindString, "", ""},
		{"int", "<int>42</int>", legacy.KindInt, "42", int64(42)},
		{"int with spaces and sign", "<int> -7 </int>", legacy.KindInt, "-7", int64(-7)},
		{"i4", "<i4>+12</i4>", legacy.KindInt, "+12", int64(12)},
		{"i8", "<i8>9007199254740993</i8>", legacy.KindInt, "9007199254740993", int64(9007199254740993)},
		{"empty int", "<int></int>", legacy.KindInt, "", int64(0)},
		{"boolean 1", "<boolean>1</boolean>", legacy.KindBoolean, "1", true},
		{"boolean 0", "<boolean>0</boolean>", legacy.KindBoolean, "0", false},
		{"boolean true", "<boolean>true</boolean>", legacy.KindBoolean, "true", true},
		{"double", "<double>-12.5</double>", legacy.KindDouble, "-12.5", -12.5},
		{"double exponent", "<double>1e3</double>", legacy.KindDouble, "1e3", 1000.0},
		{"dateTime basic", "<dateTime.iso8601>20250310T14:08:55</dateTime.iso8601>", legacy.KindDateTime,
			"20250310T14:08:55", time.Date(2025, 3, 10, 14, 8, 55, 0, time.UTC)},
		{"dateTime compact", "<dateTime.iso8601>20250310T140855</dateTime.iso8601>", legacy.KindDateTime,
			"20250310T140855", time.Date(2025, 3, 10, 14, 8, 55, 0, time.UTC)},
		{"dateTime extended with zone", "<dateTime.iso8601>2025-03-10T14:08:55+02:00</dateTime.iso8601>", legacy.KindDateTime,
			"2025-03-10T14:08:55+02:00", time.Date(2025, 3, 10, 12, 8, 55, 0, time.UTC)},
		{"dateTime fraction and Z", "<dateTime.iso8601>20250310T14:08:55.5Z</dateTime.iso8601>", legacy.KindDateTime,
			"20250310T14:08:55.5Z", time.Date(2025, 3, 10, 14, 8, 55, 500_000_000, time.UTC)},
		{"empty dateTime", "<dateTime.iso8601/>", legacy.KindDateTime, "", time.Time{}},
		{"base64", "<base64>R0lGODlh</base64>", legacy.KindBase64, "R0lGODlh", []byte("GIF89a")},
		{"base64 with line breaks", "<base64>R0lG\r\nODlh\n</base64>", legacy.KindBase64, "R0lG\nODlh", []byte("GIF89a")}, // XML reads CR LF as LF
		{"base64 without padding", "<base64>YQ</base64>", legacy.KindBase64, "YQ", []byte("a")},
		{"nil", "<nil/>", legacy.KindNil, "", nil},
		{"typed value among blanks", "\n  <int>3</int>\n  ", legacy.KindInt, "3", int64(3)},
		{"comment inside", "<!-- c --><int>3</int>", legacy.KindInt, "3", int64(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := legacy.Decode(response(tt.value))
			require.NoError(t, err)
			assert.Equal(t, tt.kind, v.Kind())
			assert.Equal(t, tt.text, v.Text())
			got := v.Interface()
			if want, ok := tt.want.(time.Time); ok {
				gotTime, isTime := got.(time.Time)
				require.True(t, isTime)
				assert.True(t, want.Equal(gotTime), "%v != %v", want, gotTime)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeNested(t *testing.T) {
	t.Parallel()
	body := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<methodResponse>
  <params>
    <param>
      <value>
        <struct>
          <member><name>Status</name><value><string>Completed</string></value></member>
          <member><name>Count</name><value><int>2</int></value></member>
          <member>
            <name>Items</name>
            <value><array><data>
              <value><struct><member><name>ID</name><value>7</value></member></struct></value>
              <value><array><data><value><boolean>1</boolean></value></data></array></value>
              <value><string>x</string></value>
            </data></array></value>
          </member>
          <member><name>Status</name><value>second</value></member>
          <member><name>Empty</name><value><struct></struct></value></member>
          <member><name>NoItems</name><value><array><data/></array></value></member>
        </struct>
      </value>
    </param>
    <param><value><string>ignored</string></value></param>
  </params>
</methodResponse>
`)
	v, err := legacy.Decode(body)
	require.NoError(t, err)
	require.Equal(t, legacy.KindStruct, v.Kind())
	st := v.Struct()
	require.Len(t, st, 6)
	assert.Equal(t, "Completed", st.Text("Status"), "the first member of a repeated name wins")
	count, _ := st.Get("Count")
	n, err := count.Int()
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	items, ok := st.Get("Items")
	require.True(t, ok)
	require.Len(t, items.Array(), 3)
	assert.Equal(t, "7", items.Array()[0].Struct().Text("ID"))
	assert.Equal(t, legacy.KindBoolean, items.Array()[1].Array()[0].Kind())
	assert.Equal(t, map[string]any{
		"Status":  "Completed",
		"Count":   int64(2),
		"Items":   []any{map[string]any{"ID": "7"}, []any{true}, "x"},
		"Empty":   map[string]any{},
		"NoItems": []any{},
	}, st.Map())
	_, missing := st.Get("Nope")
	assert.False(t, missing)
	assert.Equal(t, "", st.Text("Nope"))
	assert.Nil(t, count.Struct())
	assert.Nil(t, count.Array())
}

func TestDecodeFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		code int
		msg  string
	}{
		{"int code", `<methodResponse><fault><value><struct>
			<member><name>faultCode</name><value><int>-32601</int></value></member>
			<member><name>faultString</name><value><string>no such method</string></value></member>
			</struct></value></fault></methodResponse>`, -32601, "no such method"},
		{"string code", `<methodResponse><fault><value><struct>
			<member><name>faultString</name><value>bad</value></member>
			<member><name>faultCode</name><value>4</value></member>
			</struct></value></fault></methodResponse>`, 4, "bad"},
		{"no code", `<methodResponse><fault><value><struct></struct></value></fault></methodResponse>`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := legacy.Decode([]byte(tt.body))
			var fault *legacy.Fault
			require.True(t, errors.As(err, &fault), "got %v", err)
			assert.Equal(t, tt.code, fault.Code)
			assert.Equal(t, tt.msg, fault.Message)
			assert.Contains(t, fault.Error(), "XML-RPC fault")
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want string
	}{
		{"empty", "", "ends early"},
		{"not XML", "<html><body>502 Bad Gateway</body></html>", "is not <methodResponse>"},
		{"text only", "Internal error", "text before the root element"},
		{"truncated", `<methodResponse><params><param><value><string>a`, "unexpected EOF"},
		{"nothing after the prolog", `<?xml version="1.0"?>`, "ends early"},
		{"mismatched tags", `<methodResponse><params></param></methodResponse>`, "malformed XML"},
		{"no value", `<methodResponse></methodResponse>`, "holds no value"},
		{"empty params", `<methodResponse><params></params></methodResponse>`, "holds no value"},
		{"param without value", `<methodResponse><params><param></param></params></methodResponse>`, "<value> is missing"},
		{"two values in a param", string(response("<int>1</int></value><value><int>2</int>")), "two values"},
		{"unknown type", string(response("<float>1</float>")), "unknown XML-RPC type <float>"},
		{"bad int", string(response("<int>x</int>")), "invalid <int>"},
		{"i4 out of range", string(response("<i4>4294967296</i4>")), "32-bit"},
		{"bad boolean", string(response("<boolean>2</boolean>")), "invalid <boolean>"},
		{"NaN double", string(response("<double>NaN</double>")), "invalid <double>"},
		{"bad date", string(response("<dateTime.iso8601>yesterday</dateTime.iso8601>")), "invalid <dateTime.iso8601>"},
		{"bad base64", string(response("<base64>!!!</base64>")), "invalid <base64>"},
		{"mixed content", string(response("text<int>1</int>")), "mixes text"},
		{"two typed elements", string(response("<int>1</int><int>2</int>")), "second element"},
		{"element in a scalar", string(response("<string><b>x</b></string>")), "holds an element"},
		{"element in nil", string(response("<nil><x/></nil>")), "holds an element"},
		{"member without name", string(response("<struct><member><value>1</value></member></struct>")), "lacks its <name>"},
		{"member without value", string(response("<struct><member><name>a</name></member></struct>")), "lacks its <name> or <value>"},
		{"member with two names", string(response("<struct><member><name>a</name><name>b</name></member></struct>")), "unexpected <name> in <member>"},
		{"stray element in struct", string(response("<struct><x/></struct>")), "unexpected <x> in <struct>"},
		{"array without data", string(response("<array><value>1</value></array>")), "unexpected <value> in <array>"},
		{"array with two data", string(response("<array><data/><data/></array>")), "unexpected <data> in <array>"},
		{"stray element in data", string(response("<array><data><x/></data></array>")), "in an array's <data>"},
		{"stray element in response", `<methodResponse><x/></methodResponse>`, "unexpected <x> in <methodResponse>"},
		{"stray element in params", `<methodResponse><params><x/></params></methodResponse>`, "unexpected <x> in <params>"},
		{"text between elements", `<methodResponse>oops<params/></methodResponse>`, "unexpected text"},
		{"second root", `<methodResponse><params><param><value>a</value></param></params></methodResponse><x/>`, "second root"},
		{"text after the root", `<methodResponse><params><param><value>a</value></param></params></methodResponse>tail`, "text after"},
		{"fault not a struct", `<methodResponse><fault><value>x</value></fault></methodResponse>`, "not a struct"},
		{"fault code not a number", `<methodResponse><fault><value><struct><member><name>faultCode</name><value>x</value></member></struct></value></fault></methodResponse>`, "faultCode is not an integer"},
		{"unknown charset", `<?xml version="1.0" encoding="KOI8-R"?><methodResponse/>`, "charset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := legacy.Decode([]byte(tt.body))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var fault *legacy.Fault
			assert.False(t, errors.As(err, &fault))
		})
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	t.Parallel()
	nest := func(n int) []byte {
		v := "<string>x</string>"
		for i := 0; i < n; i++ {
			v = "<array><data><value>" + v + "</value></data></array>"
		}
		return response(v)
	}
	_, err := legacy.Decode(nest(64))
	require.NoError(t, err)
	_, err = legacy.Decode(nest(65))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nested too deep")
}

func TestDecodeCharsets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"ISO-8859-1", append(append([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><methodResponse><params><param><value>caf`),
			0xE9), []byte(`</value></param></params></methodResponse>`)...), "café"},
		{"Windows-1252", append(append([]byte(`<?xml version="1.0" encoding="windows-1252"?><methodResponse><params><param><value>`),
			0x80, 0x93, 0x81), []byte(`</value></param></params></methodResponse>`)...), "€“\u0081"},
		{"US-ASCII", []byte(`<?xml version="1.0" encoding="us-ascii"?><methodResponse><params><param><value>ok</value></param></params></methodResponse>`), "ok"},
		{"UTF-8 declared", []byte(`<?xml version="1.0" encoding="utf-8"?><methodResponse><params><param><value>é</value></param></params></methodResponse>`), "é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := legacy.Decode(tt.body)
			require.NoError(t, err)
			assert.Equal(t, tt.want, v.Text())
		})
	}
}

func TestValueConversions(t *testing.T) {
	t.Parallel()
	decode := func(t *testing.T, value string) legacy.Value {
		v, err := legacy.Decode(response(value))
		require.NoError(t, err)
		return v
	}
	t.Run("Int", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			value   string
			want    int64
			wantErr bool
		}{
			{"<int>5</int>", 5, false},
			{"<string>12</string>", 12, false},
			{"<string> 12 </string>", 12, false},
			{"<string></string>", 0, false},
			{"12.0", 12, false},
			{"<double>3</double>", 3, false},
			{"<double>3.5</double>", 0, true},
			{"<boolean>1</boolean>", 1, false},
			{"abc", 0, true},
			{"<struct></struct>", 0, true},
			{"<base64>YQ==</base64>", 0, true},
		}
		for _, tt := range tests {
			n, err := decode(t, tt.value).Int()
			if tt.wantErr {
				assert.Error(t, err, tt.value)
				continue
			}
			assert.NoError(t, err, tt.value)
			assert.Equal(t, tt.want, n, tt.value)
		}
	})
	t.Run("Float", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			value   string
			want    float64
			wantErr bool
		}{
			{"<double>2.5</double>", 2.5, false},
			{"<int>2</int>", 2, false},
			{"2.5", 2.5, false},
			{"12.5%", 12.5, false},
			{"", 0, false},
			{"x", 0, true},
			{"<nil/>", 0, true},
		}
		for _, tt := range tests {
			f, err := decode(t, tt.value).Float()
			if tt.wantErr {
				assert.Error(t, err, tt.value)
				continue
			}
			assert.NoError(t, err, tt.value)
			assert.Equal(t, tt.want, f, tt.value)
		}
	})
	t.Run("Bool", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			value   string
			want    bool
			wantErr bool
		}{
			{"<boolean>1</boolean>", true, false},
			{"<int>0</int>", false, false},
			{"<int>2</int>", true, false},
			{"Yes", true, false},
			{"off", false, false},
			{"", false, false},
			{"maybe", false, true},
			{"<double>1</double>", false, true},
		}
		for _, tt := range tests {
			b, err := decode(t, tt.value).Bool()
			if tt.wantErr {
				assert.Error(t, err, tt.value)
				continue
			}
			assert.NoError(t, err, tt.value)
			assert.Equal(t, tt.want, b, tt.value)
		}
	})
	t.Run("Time", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			value   string
			want    time.Time
			wantErr bool
		}{
			{"<dateTime.iso8601>20250102T03:04:05</dateTime.iso8601>", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), false},
			{"2025-01-02 03:04:05", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), false},
			{"2025-01-02", time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), false},
			{"0000-00-00", time.Time{}, false},
			{"0000-00-00 00:00:00", time.Time{}, false},
			{"", time.Time{}, false},
			{"soon", time.Time{}, true},
			{"<int>1</int>", time.Time{}, true},
		}
		for _, tt := range tests {
			got, err := decode(t, tt.value).Time()
			if tt.wantErr {
				assert.Error(t, err, tt.value)
				continue
			}
			assert.NoError(t, err, tt.value)
			assert.True(t, tt.want.Equal(got), "%s: %v", tt.value, got)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		t.Parallel()
		b, err := decode(t, "<base64>R0lGODlh</base64>").Bytes()
		require.NoError(t, err)
		assert.Equal(t, []byte("GIF89a"), b)
		b, err = decode(t, "raw").Bytes()
		require.NoError(t, err)
		assert.Equal(t, []byte("raw"), b)
		_, err = decode(t, "<int>1</int>").Bytes()
		assert.Error(t, err)
	})
}

func TestKindString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "dateTime.iso8601", legacy.KindDateTime.String())
	assert.Equal(t, "nil", legacy.KindNil.String())
	assert.Equal(t, "array", legacy.KindArray.String())
	assert.Equal(t, "kind(42)", legacy.Kind(42).String())
	var zero legacy.Value
	assert.Equal(t, legacy.KindNil, zero.Kind())
	assert.Nil(t, zero.Interface())
}

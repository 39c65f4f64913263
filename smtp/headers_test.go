package smtp_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/mail"
	"net/textproto"
	"reflect"
	"strings"
	"testing"

	"github.com/emersion/go-message"

	"github.com/go-sendloop/sendloop/smtp"
)

func TestHeadersRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   smtp.Headers
	}{
		{"zero", smtp.Headers{}},
		{"tracking only", smtp.Headers{TrackOpens: true, TrackGA: true}},
		{"all tracking", smtp.Headers{TrackOpens: true, TrackClicks: true, TrackGA: true}},
		{"custom args", smtp.Headers{CustomArgs: map[string]any{"campaign": "spring", "empty": "", "quote": `say "hi" \ <b>&`}}},
		{"tags", smtp.Headers{Tags: []string{"welcome", "q3", "welcome"}}},
		{"merge vars", smtp.Headers{MergeVars: map[string]any{
			"%FIRSTNAME%": "Zoë",
			"NAME":        "Zoë 😀",
			"ADDRESS":     "1 Main St\r\nSpringfield",
			"COUNT":       json.Number("12345678901234567890"),
			"PRICE":       json.Number("1.5"),
			"VIP":         true,
			"NOTHING":     nil,
			"ITEMS":       []any{map[string]any{"name": "tea"}, "x"},
		}}},
		{"everything", smtp.Headers{
			CustomArgs:  map[string]any{"id": "42", "ünï": "cödé"},
			MergeVars:   map[string]any{"%A%": "<b>bold</b> & co"},
			Tags:        []string{"日本", "emoji 🎉"},
			TrackOpens:  true,
			TrackClicks: true,
			TrackGA:     true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			header, err := tt.in.Header()
			if err != nil {
				t.Fatalf("Header: %v", err)
			}
			got, err := smtp.ParseHeaders(header)
			if err != nil {
				t.Fatalf("ParseHeaders: %v", err)
			}
			if !reflect.DeepEqual(got, tt.in) {
				t.Errorf("round trip:\n got %#v\nwant %#v", got, tt.in)
			}
			if tt.in.IsZero() != (len(header) == 0) {
				t.Errorf("IsZero = %v with %d headers", tt.in.IsZero(), len(header))
			}
		})
	}
}

func TestHeadersFieldsFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   smtp.Headers
		want []smtp.Field
	}{
		{"zero emits nothing", smtp.Headers{}, nil},
		{"empty collections emit nothing", smtp.Headers{CustomArgs: map[string]any{}, MergeVars: map[string]any{}, Tags: []string{}}, nil},
		{"false tracking emits nothing", smtp.Headers{TrackOpens: false}, nil},
		{
			"sorted keys, order of headers",
			smtp.Headers{TrackGA: true, Tags: []string{"b", "a"}, CustomArgs: map[string]any{"z": "1", "a": "2"}, TrackClicks: true},
			[]smtp.Field{
				{Name: "X-SL-Custom-Args", Value: `{"a":"2","z":"1"}`},
				{Name: "X-SL-Tags", Value: `["b","a"]`},
				{Name: "X-SL-Track-Clicks", Value: "1"},
				{Name: "X-SL-Track-GA", Value: "1"},
			},
		},
		{"latin escaped", smtp.Headers{Tags: []string{"é"}}, []smtp.Field{{Name: "X-SL-Tags", Value: `["\u00e9"]`}}},
		{"emoji as surrogate pair", smtp.Headers{Tags: []string{"😀"}}, []smtp.Field{{Name: "X-SL-Tags", Value: `["\ud83d\ude00"]`}}},
		{"CJK", smtp.Headers{CustomArgs: map[string]any{"k": "日本"}}, []smtp.Field{{Name: "X-SL-Custom-Args", Value: `{"k":"\u65e5\u672c"}`}}},
		{"HTML characters kept", smtp.Headers{MergeVars: map[string]any{"X": "<a href=\"?a=1&b=2\">"}}, []smtp.Field{{Name: "X-SL-Merge-Vars", Value: `{"X":"<a href=\"?a=1&b=2\">"}`}}},
		{"newline in merge value escaped", smtp.Headers{MergeVars: map[string]any{"X": "a\r\nb\u2028"}}, []smtp.Field{{Name: "X-SL-Merge-Vars", Value: `{"X":"a\r\nb\u2028"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.in.Fields()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fields:\n got %q\nwant %q", got, tt.want)
			}
			for _, f := range got {
				for i := 0; i < len(f.Value); i++ {
					if c := f.Value[i]; c < ' ' || c > '~' {
						t.Errorf("%s has byte %#x: not printable ASCII", f.Name, c)
					}
				}
			}
		})
	}
}

func TestHeadersRefuseInvalidText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         smtp.Headers
		wantHeader string
		wantKey    string
		wantErr    error
	}{
		{"LF in tag", smtp.Headers{Tags: []string{"ok", "a\nb"}}, smtp.HeaderTags, "a\nb", smtp.ErrInvalidCharacter},
		{"CR in tag", smtp.Headers{Tags: []string{"a\rb"}}, smtp.HeaderTags, "a\rb", smtp.ErrInvalidCharacter},
		{"NUL in tag", smtp.Headers{Tags: []string{"a\x00"}}, smtp.HeaderTags, "a\x00", smtp.ErrInvalidCharacter},
		{"tab in tag", smtp.Headers{Tags: []string{"a\tb"}}, smtp.HeaderTags, "a\tb", smtp.ErrInvalidCharacter},
		{"DEL in tag", smtp.Headers{Tags: []string{"a\x7f"}}, smtp.HeaderTags, "a\x7f", smtp.ErrInvalidCharacter},
		{"C1 control in tag", smtp.Headers{Tags: []string{"a\u0085"}}, smtp.HeaderTags, "a\u0085", smtp.ErrInvalidCharacter},
		{"invalid UTF-8 in tag", smtp.Headers{Tags: []string{"a\xffb"}}, smtp.HeaderTags, "a\xffb", smtp.ErrInvalidCharacter},
		{"empty tag", smtp.Headers{Tags: []string{""}}, smtp.HeaderTags, "", smtp.ErrEmpty},
		{"CRLF in custom-arg key", smtp.Headers{CustomArgs: map[string]any{"a\r\nBcc: x": "v"}}, smtp.HeaderCustomArgs, "a\r\nBcc: x", smtp.ErrInvalidCharacter},
		{"CRLF in custom-arg value", smtp.Headers{CustomArgs: map[string]any{"key": "v\r\nBcc: x"}}, smtp.HeaderCustomArgs, "key", smtp.ErrInvalidCharacter},
		{"empty custom-arg key", smtp.Headers{CustomArgs: map[string]any{"": "v"}}, smtp.HeaderCustomArgs, "", smtp.ErrEmpty},
		{"LF in merge-var key", smtp.Headers{MergeVars: map[string]any{"%A\n%": "v"}}, smtp.HeaderMergeVars, "%A\n%", smtp.ErrInvalidCharacter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.in.Fields()
			var headerErr *smtp.HeaderError
			if !errors.As(err, &headerErr) {
				t.Fatalf("err = %v, want *HeaderError", err)
			}
			if headerErr.Header != tt.wantHeader || headerErr.Key != tt.wantKey || !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %#v, want header %s key %q wrapping %v", headerErr, tt.wantHeader, tt.wantKey, tt.wantErr)
			}
			if strings.ContainsAny(err.Error(), "\r\n\x00") {
				t.Errorf("error text %q holds raw control characters", err)
			}
			if _, err := tt.in.Header(); err == nil {
				t.Error("Header accepted what Fields refused")
			}
		})
	}
}

func TestHeadersRefuseUnencodableMergeVar(t *testing.T) {
	t.Parallel()
	_, err := smtp.Headers{MergeVars: map[string]any{"F": func() {}}}.Fields()
	var headerErr *smtp.HeaderError
	if !errors.As(err, &headerErr) || headerErr.Header != smtp.HeaderMergeVars {
		t.Fatalf("err = %v, want *HeaderError for %s", err, smtp.HeaderMergeVars)
	}
}

func TestParseHeadersTracking(t *testing.T) {
	t.Parallel()
	enabling := []string{"1", "true", "on", "yes", "TRUE", "Yes", "oN", " 1 ", "\ttrue "}
	disabling := []string{"0", "false", "off", "no", "FALSE", "No", "OFF", " 0\t"}
	for _, name := range []string{smtp.HeaderTrackOpens, smtp.HeaderTrackClicks, smtp.HeaderTrackGA} {
		for _, values := range []struct {
			spellings []string
			want      bool
		}{{enabling, true}, {disabling, false}} {
			for _, value := range values.spellings {
				h, err := smtp.ParseHeaders(map[string][]string{name: {value}})
				if err != nil {
					t.Errorf("%s: %q: %v", name, value, err)
					continue
				}
				got := map[string]bool{
					smtp.HeaderTrackOpens:  h.TrackOpens,
					smtp.HeaderTrackClicks: h.TrackClicks,
					smtp.HeaderTrackGA:     h.TrackGA,
				}
				for other, on := range got {
					if want := values.want && other == name; on != want {
						t.Errorf("%s: %q: %s = %v, want %v", name, value, other, on, want)
					}
				}
			}
		}
	}
}

func TestParseHeadersErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		header     map[string][]string
		wantHeader string
		wantErr    error
		wantText   string
	}{
		{"invalid tracking value", map[string][]string{"X-Sl-Track-Opens": {"maybe"}}, smtp.HeaderTrackOpens, smtp.ErrInvalidTrackingValue, `"maybe"`},
		{"empty tracking value", map[string][]string{"X-Sl-Track-Ga": {""}}, smtp.HeaderTrackGA, smtp.ErrInvalidTrackingValue, "X-SL-Track-GA"},
		{"tracking 2", map[string][]string{"X-Sl-Track-Clicks": {"2"}}, smtp.HeaderTrackClicks, smtp.ErrInvalidTrackingValue, `"2"`},
		{"truncated JSON", map[string][]string{"X-Sl-Custom-Args": {`{"a":"b"`}}, smtp.HeaderCustomArgs, smtp.ErrMalformedJSON, "X-SL-Custom-Args"},
		{"trailing data", map[string][]string{"X-Sl-Custom-Args": {`{"a":"b"} x`}}, smtp.HeaderCustomArgs, smtp.ErrMalformedJSON, "after the JSON"},
		{"trailing value", map[string][]string{"X-Sl-Tags": {`["a"] ["b"]`}}, smtp.HeaderTags, smtp.ErrMalformedJSON, "after the JSON"},
		{"array for object", map[string][]string{"X-Sl-Merge-Vars": {`[]`}}, smtp.HeaderMergeVars, smtp.ErrMalformedJSON, "want an object"},
		{"null object", map[string][]string{"X-Sl-Custom-Args": {`null`}}, smtp.HeaderCustomArgs, smtp.ErrMalformedJSON, "want an object"},
		{"object for array", map[string][]string{"X-Sl-Tags": {`{}`}}, smtp.HeaderTags, smtp.ErrMalformedJSON, "want an array"},
		{"object custom arg", map[string][]string{"X-Sl-Custom-Args": {`{"a":{"b":1}}`}}, smtp.HeaderCustomArgs, smtp.ErrNotScalar, "X-SL-Custom-Args"},
		{"array custom arg", map[string][]string{"X-Sl-Custom-Args": {`{"a":[1]}`}}, smtp.HeaderCustomArgs, smtp.ErrNotScalar, "X-SL-Custom-Args"},
		{"number tag", map[string][]string{"X-Sl-Tags": {`[1]`}}, smtp.HeaderTags, smtp.ErrMalformedJSON, "X-SL-Tags"},
		{"escaped newline in tag", map[string][]string{"X-Sl-Tags": {`["a\nb"]`}}, smtp.HeaderTags, smtp.ErrInvalidCharacter, "U+000A"},
		{"empty tag", map[string][]string{"X-Sl-Tags": {`[""]`}}, smtp.HeaderTags, smtp.ErrEmpty, "X-SL-Tags"},
		{"duplicate header", map[string][]string{"X-Sl-Tags": {`["a"]`, `["b"]`}}, smtp.HeaderTags, smtp.ErrDuplicateHeader, "2 times"},
		{"duplicate across key cases", map[string][]string{"X-SL-Track-Opens": {"1"}, "x-sl-track-opens": {"0"}}, smtp.HeaderTrackOpens, smtp.ErrDuplicateHeader, "2 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := smtp.ParseHeaders(tt.header)
			var headerErr *smtp.HeaderError
			if !errors.As(err, &headerErr) {
				t.Fatalf("err = %v, want *HeaderError", err)
			}
			if headerErr.Header != tt.wantHeader || !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %q (header %s), want header %s wrapping %v and containing %q", err, headerErr.Header, tt.wantHeader, tt.wantErr, tt.wantText)
			}
		})
	}
}

func TestParseHeadersTolerance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header map[string][]string
		want   smtp.Headers
	}{
		{"absent means defaults", map[string][]string{"Subject": {"hi"}}, smtp.Headers{}},
		{"non-canonical keys", map[string][]string{"x-sl-tags": {`["a"]`}, "X-SL-TRACK-OPENS": {"yes"}}, smtp.Headers{Tags: []string{"a"}, TrackOpens: true}},
		{"unfolded whitespace", map[string][]string{"X-Sl-Custom-Args": {"{\"a\":\"1\", \r\n \"b\":\"2\"}"}}, smtp.Headers{CustomArgs: map[string]any{"a": "1", "b": "2"}}},
		{"raw UTF-8", map[string][]string{"X-Sl-Tags": {`["é"]`}}, smtp.Headers{Tags: []string{"é"}}},
		{"encoded-word", map[string][]string{"X-Sl-Tags": {`=?utf-8?q?=5B=22=C3=A9=22=5D?=`}}, smtp.Headers{Tags: []string{"é"}}},
		{"encoded-word tracking", map[string][]string{"X-Sl-Track-Opens": {`=?utf-8?b?b24=?=`}}, smtp.Headers{TrackOpens: true}},
		{"empty object and array", map[string][]string{"X-Sl-Custom-Args": {`{}`}, "X-Sl-Merge-Vars": {` { } `}, "X-Sl-Tags": {`[]`}}, smtp.Headers{}},
		{"unknown X-SL header ignored", map[string][]string{"X-Sl-Future": {"whatever"}}, smtp.Headers{}},
		{"custom args of every scalar", map[string][]string{"X-Sl-Custom-Args": {`{"s":"x","n":17,"f":1.5,"t":true,"z":null}`}},
			smtp.Headers{CustomArgs: map[string]any{"s": "x", "n": json.Number("17"), "f": json.Number("1.5"), "t": true, "z": nil}}},
		{"number as json.Number", map[string][]string{"X-Sl-Merge-Vars": {`{"N":12345678901234567890}`}}, smtp.Headers{MergeVars: map[string]any{"N": json.Number("12345678901234567890")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := smtp.ParseHeaders(tt.header)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestParseHeadersFromMailHeader(t *testing.T) {
	t.Parallel()
	const raw = "Subject: x\r\n" +
		"X-SL-Merge-Vars: {\"%NAME%\":\"Zo\\u00eb\",\r\n \"N\":1}\r\n" +
		"X-SL-Track-Clicks: on\r\n" +
		"\r\nbody\r\n"
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	// go-message's header, as the fake relay reads it.
	entity, err := message.Read(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, header := range []map[string][]string{msg.Header, textproto.MIMEHeader(msg.Header), entity.Header.Map()} {
		got, err := smtp.ParseHeaders(header)
		if err != nil {
			t.Fatal(err)
		}
		want := smtp.Headers{MergeVars: map[string]any{"%NAME%": "Zoë", "N": json.Number("1")}, TrackClicks: true}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
	}
}

func FuzzParseHeaders(f *testing.F) {
	f.Add(`{"a":"b"}`, `{"%NAME%":"Zo\u00eb","N":1.50,"L":[1,{"x":null}]}`, `["t1","t2"]`, "1", "off", " Yes ")
	f.Add(`{}`, `{}`, `[]`, "", "", "")
	f.Add(`{"a":"b","a":"c"}`, `{"\u00e9":"\ud83d\ude00"}`, `["\u0000"]`, "true", "no", "2")
	f.Add(`=?utf-8?q?=7B=7D?=`, `{"k":"\r\n"}`, `[""]`, "on", "0", "FALSE")
	f.Add(`null`, `[1]`, `["a"] x`, "maybe", "\x00", "ON")
	f.Fuzz(func(t *testing.T, customArgs, mergeVars, tags, opens, clicks, ga string) {
		header := map[string][]string{}
		for name, value := range map[string]string{
			smtp.HeaderCustomArgs: customArgs, smtp.HeaderMergeVars: mergeVars, smtp.HeaderTags: tags,
			smtp.HeaderTrackOpens: opens, smtp.HeaderTrackClicks: clicks, smtp.HeaderTrackGA: ga,
		} {
			if value != "" {
				header[name] = []string{value}
			}
		}
		parsed, err := smtp.ParseHeaders(header)
		if err != nil {
			var headerErr *smtp.HeaderError
			if !errors.As(err, &headerErr) {
				t.Fatalf("error %v is not a *HeaderError", err)
			}
			return
		}
		encoded, err := parsed.Header()
		if err != nil {
			t.Fatalf("parsed %#v but cannot encode it: %v", parsed, err)
		}
		again, err := smtp.ParseHeaders(encoded)
		if err != nil {
			t.Fatalf("cannot parse %q again: %v", encoded, err)
		}
		if !reflect.DeepEqual(again, parsed) {
			t.Fatalf("round trip changed the headers:\n first %#v\nsecond %#v", parsed, again)
		}
	})
}

func TestCustomArgsScalars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value any
		want  string // the header value, or "" when refused with ErrNotScalar
	}{
		{"string", "spring", `{"k":"spring"}`},
		{"int", 42, `{"k":42}`},
		{"uint64", uint64(1) << 63, `{"k":9223372036854775808}`},
		{"float", 1.25, `{"k":1.25}`},
		{"json.Number", json.Number("12345678901234567890"), `{"k":12345678901234567890}`},
		{"bool", false, `{"k":false}`},
		{"null", nil, `{"k":null}`},
		{"NaN", math.NaN(), ""},
		{"infinity", math.Inf(1), ""},
		{"bad json.Number", json.Number("12abc"), ""},
		{"map", map[string]string{"a": "b"}, ""},
		{"slice", []string{"a"}, ""},
		{"struct", struct{ A int }{1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fields, err := smtp.Headers{CustomArgs: map[string]any{"k": tt.value}}.Fields()
			if tt.want == "" {
				var he *smtp.HeaderError
				if !errors.As(err, &he) || !errors.Is(err, smtp.ErrNotScalar) || he.Key != "k" {
					t.Fatalf("err = %v, want a *HeaderError for key k matching ErrNotScalar", err)
				}
				return
			}
			want := []smtp.Field{{Name: smtp.HeaderCustomArgs, Value: tt.want}}
			if err != nil || !reflect.DeepEqual(fields, want) {
				t.Fatalf("Fields() = %v, %v; want %v", fields, err, want)
			}
			back, err := smtp.ParseHeaders(map[string][]string{fields[0].Name: {fields[0].Value}})
			if err != nil {
				t.Fatal(err)
			}
			again, err := back.Fields()
			if err != nil || !reflect.DeepEqual(again, fields) {
				t.Fatalf("build, parse, build again = %v, %v; want %v", again, err, fields)
			}
		})
	}
}

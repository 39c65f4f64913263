package wire

import (
	"errors"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCustomFields is a map type that go-querystring cannot express, encoded through
// query.Encoder the way the sendloop package's CustomFields is.
type testCustomFields map[int]string

func (f testCustomFields) EncodeValues(key string, v *url.Values) error {
	EncodeCustomFields(key, f, v)
	return nil
}

var errEncoder = errors.New("encoder failed")

type failingEncoder struct{}

func (failingEncoder) EncodeValues(string, *url.Values) error { return errEncoder }

type subscriberParams struct {
	EmailAddress  string           `url:"EmailAddress"`
	Name          string           `url:"Name,omitempty"`
	Empty         string           `url:"Empty,omitempty"`
	TargetListIDs []int            `url:"TargetListIDs,brackets"`
	Active        bool             `url:"Active,int"`
	Quiet         bool             `url:"Quiet,int,omitempty"`
	Explicit      *bool            `url:"Explicit,int,omitempty"`
	Unset         *bool            `url:"Unset,int,omitempty"`
	Fields        testCustomFields `url:"Fields,omitempty"`
	NoFields      testCustomFields `url:"NoFields,omitempty"`
	Ignored       string           `url:"-"`
	unexported    string
}

func TestValues(t *testing.T) {
	t.Parallel()
	no := false
	tests := []struct {
		name   string
		params any
		want   string
	}{
		{"nil", nil, ""},
		{"nil struct pointer", (*subscriberParams)(nil), ""},
		{"empty url.Values", url.Values{}, ""},
		{"url.Values", url.Values{"b": {"2"}, "a": {"1", "x y"}}, "a=1&a=x+y&b=2"},
		{"map[string]string", map[string]string{"Z": "last", "A": "a&b=c", "M": ""}, "A=a%26b%3Dc&M=&Z=last"},
		{"brackets", struct {
			TargetListIDs []int `url:"TargetListIDs,brackets"`
		}{[]int{1, 2}}, "TargetListIDs%5B%5D=1&TargetListIDs%5B%5D=2"},
		{"tagged struct", subscriberParams{
			EmailAddress:  "a+b@example.com",
			Name:          "Ann Lee",
			TargetListIDs: []int{3, 1},
			Active:        true,
			Explicit:      &no,
			Fields:        testCustomFields{10: "ten", 2: "two & more", 7: ""},
			NoFields:      testCustomFields{},
			Ignored:       "never sent",
			unexported:    "never sent",
		}, "Active=1" +
			"&EmailAddress=a%2Bb%40example.com" +
			"&Explicit=0" +
			"&Fields%5BCustomField10%5D=ten" +
			"&Fields%5BCustomField2%5D=two+%26+more" +
			"&Fields%5BCustomField7%5D=" +
			"&Name=Ann+Lee" +
			"&TargetListIDs%5B%5D=3&TargetListIDs%5B%5D=1"},
		{"tagged struct pointer, zero values", &subscriberParams{}, "Active=0&EmailAddress="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Values(tt.params)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Encode())
		})
	}
}

func TestValuesDeterministic(t *testing.T) {
	t.Parallel()
	params := subscriberParams{
		EmailAddress: "a@b.c",
		Fields:       testCustomFields{1: "a", 2: "b", 3: "c", 4: "d", 5: "e", 6: "f", 7: "g", 8: "h"},
	}
	first, err := Values(params)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		again, err := Values(params)
		require.NoError(t, err)
		require.Equal(t, first.Encode(), again.Encode())
	}
}

func TestValuesCopiesURLValues(t *testing.T) {
	t.Parallel()
	in := url.Values{"a": {"1", "2"}}
	out, err := Values(in)
	require.NoError(t, err)
	require.Equal(t, in, out)

	out["a"][0] = "changed"
	out.Add("a", "3")
	out.Set("b", "new")
	assert.Equal(t, url.Values{"a": {"1", "2"}}, in, "the input is untouched by changes to the output")

	in["a"][1] = "changed too"
	assert.Equal(t, []string{"changed", "2", "3"}, out["a"], "the output is untouched by changes to the input")
}

func TestValuesErrors(t *testing.T) {
	t.Parallel()
	for _, params := range []any{42, "a=b", map[string]int{"a": 1}, []string{"a"}} {
		got, err := Values(params)
		require.Error(t, err, "Values(%#v)", params)
		assert.Contains(t, err.Error(), "encoding parameters: ")
		assert.Nil(t, got)
	}

	_, err := Values(struct {
		F failingEncoder `url:"F"`
	}{})
	require.ErrorIs(t, err, errEncoder)
	assert.EqualError(t, err, "encoding parameters: encoder failed")
}

func TestCustomFieldID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		id   int
		isCF bool
	}{
		{"CustomField7", 7, true},
		{"CustomField0", 0, true},
		{"CustomField123", 123, true},
		{"CustomField999999999999999999", 999999999999999999, true},
		{"CustomField", 0, false},
		{"CustomFieldx", 0, false},
		{"CustomField-1", 0, false},
		{"CustomField-0", 0, false},
		{"CustomField+1", 0, false},
		{"CustomField7x", 0, false},
		{"CustomField 7", 0, false},
		{"CustomField7 ", 0, false},
		{"CustomField1.5", 0, false},
		{"CustomField9999999999999999999", 0, false},
		{"Custom7", 0, false},
		{"customfield7", 0, false},
		{"XCustomField7", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		id, ok := CustomFieldID([]byte(tt.key))
		assert.Equal(t, tt.isCF, ok, "CustomFieldID(%q)", tt.key)
		assert.Equal(t, tt.id, id, "CustomFieldID(%q)", tt.key)
	}
}

func TestEncodeCustomFields(t *testing.T) {
	t.Parallel()
	fields := map[int]string{10: "ten", 2: "two", 7: ""}

	t.Run("under a key", func(t *testing.T) {
		t.Parallel()
		v := url.Values{"Fields[CustomField2]": {"old"}, "Other": {"o"}}
		EncodeCustomFields("Fields", fields, &v)
		assert.Equal(t, url.Values{
			"Fields[CustomField2]":  {"two"},
			"Fields[CustomField7]":  {""},
			"Fields[CustomField10]": {"ten"},
			"Other":                 {"o"},
		}, v)
		assert.Equal(t, "Fields%5BCustomField10%5D=ten&Fields%5BCustomField2%5D=two&Fields%5BCustomField7%5D=&Other=o", v.Encode())
	})
	t.Run("bare", func(t *testing.T) {
		t.Parallel()
		var v url.Values // nil: EncodeCustomFields makes the map
		EncodeCustomFields("", fields, &v)
		require.NotNil(t, v)
		assert.Equal(t, url.Values{
			"CustomField2":  {"two"},
			"CustomField7":  {""},
			"CustomField10": {"ten"},
		}, v)
		assert.Equal(t, "CustomField10=ten&CustomField2=two&CustomField7=", v.Encode())
	})
	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		v := url.Values{}
		EncodeCustomFields("Fields", nil, &v)
		assert.Empty(t, v)
	})
}

func TestAppendQueryEscapeMatchesQueryEscape(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "plain", "a b+c@d.e", "Zoë/ü?&=#%", "\x00\xff\t", "~-_."} {
		assert.Equal(t, url.QueryEscape(in), string(AppendQueryEscape([]byte("x"), in))[1:], in)
	}
}

func FuzzAppendQueryEscape(f *testing.F) {
	f.Add("a b@c")
	f.Add("é\x00")
	f.Fuzz(func(t *testing.T, s string) {
		if got := string(AppendQueryEscape(nil, s)); got != url.QueryEscape(s) {
			t.Fatalf("%q: %q != %q", s, got, url.QueryEscape(s))
		}
	})
}

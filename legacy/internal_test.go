package legacy

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessageDocument(t *testing.T) {
	t.Parallel()
	const head = `<?xml version="1.0" encoding="UTF-8"?><Entry><Message><APIKey>k</APIKey><Command>C.D</Command>`
	const tail = `</Message></Entry>`
	tests := []struct {
		name   string
		params url.Values
		want   string
	}{
		{"no parameters", nil, ""},
		{"flat and sorted", url.Values{"B": {"2"}, "A": {"1"}}, "<A>1</A><B>2</B>"},
		{"array fields nest under one element",
			url.Values{"Fields[EmailAddress]": {"a@b.c"}, "Fields[CustomField7]": {"x"}, "ListID": {"3"}},
			"<Fields><CustomField7>x</CustomField7><EmailAddress>a@b.c</EmailAddress></Fields><ListID>3</ListID>"},
		{"list values repeat bare items", url.Values{"Tags[]": {"a", "b"}},
			"<Tags><item>a</item><item>b</item></Tags>"},
		{"numeric parts become keyed items",
			url.Values{"Subscribers[0][EmailAddress]": {"a@b.c"}, "Subscribers[1][EmailAddress]": {"d@e.f"}},
			`<Subscribers><item key="0"><EmailAddress>a@b.c</EmailAddress></item><item key="1"><EmailAddress>d@e.f</EmailAddress></item></Subscribers>`},
		{"same parent, deeper child",
			url.Values{"A[b]": {"1"}, "A[b][c]": {"2"}, "A[d]": {"3"}},
			"<A><b>1</b><b><c>2</c></b><d>3</d></A>"},
		{"a leaf then the same name as a parent", url.Values{"A": {"1"}, "A[b]": {"2"}}, "<A>1</A><A><b>2</b></A>"},
		{"names that are no XML names", url.Values{"item": {"1"}, "xmlThing": {"2"}, "a b": {"3"}, "9x": {"4"}},
			`<item key="9x">4</item><item key="a b">3</item><item key="item">1</item><item key="xmlThing">2</item>`},
		{"malformed brackets stay one name", url.Values{"A[b": {"1"}, "A]b": {"2"}, "[x]": {"3"}, "A[b]c": {"4"}},
			`<item key="A[b">1</item><item key="A[b]c">4</item><item key="A]b">2</item><item key="[x]">3</item>`},
		{"escaping", url.Values{"Q": {"a&b<c>\"d'e\tf\ng\rh"}},
			"<Q>a&amp;b&lt;c&gt;&#34;d&#39;e&#x9;f&#xA;g&#xD;h</Q>"},
		{"a repeated flat value", url.Values{"A": {"1", "2"}}, "<A>1</A><A>2</A>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := message("k", "C.D", tt.params)
			require.NoError(t, err)
			assert.Equal(t, head+tt.want+tail, string(got))
		})
	}
}

func TestSplitKey(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"A":                      {"A"},
		"Fields[CustomField7]":   {"Fields", "CustomField7"},
		"Tags[]":                 {"Tags", ""},
		"Subscribers[0][Email]":  {"Subscribers", "0", "Email"},
		"A[b":                    {"A[b"},
		"A[b]c":                  {"A[b]c"},
		"[x]":                    {"[x]"},
		"A[b[c]]":                {"A[b[c]]"},
		"Fields[CustomField7][]": {"Fields", "CustomField7", ""},
	}
	for key, want := range tests {
		assert.Equal(t, want, splitKey(key), key)
	}
}

func TestValidXMLText(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"plain":          true,
		"tab\tnl\ncr\r":  true,
		"ünïcödé \uFFFD": true,
		"\U0001F600":     true,
		"nul\x00":        false,
		"bell\x07":       false,
		"bad\xff":        false,
		"\uFFFE":         false,
	}
	for s, want := range tests {
		assert.Equal(t, want, validXMLText(s), "%q", s)
	}
}

package sendlooptest

import (
	"encoding/json"
	"encoding/xml"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendJSONWritesLikePHP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"empty object is a list", object{}, `[]`},
		{"slash escaped", "https://example.com/a", `"https:\/\/example.com\/a"`},
		{"non-ASCII escaped", "Zoë €", `"Zo\u00eb \u20ac"`},
		{"astral plane as a surrogate pair", "😀", `"\ud83d\ude00"`},
		{"controls", "a\nb\tc\x01", `"a\nb\tc\u0001"`},
		{"ordered members", object{{"b", 1}, {"a", "2"}, {"c", nil}, {"d", true}, {"e", 1.5}}, `{"b":1,"a":"2","c":null,"d":true,"e":1.5}`},
		{"lists", object{{"L", []string{"x"}}, {"O", []object{{{"k", int64(7)}}}}, {"A", []any{"s", 2}}}, `{"L":["x"],"O":[{"k":7}],"A":["s",2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := appendJSON(nil, tt.in)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestAppendXML(t *testing.T) {
	t.Parallel()
	doc := object{{"Success", true}, {"Lists", []object{{{"ListID", "1"}, {"Name", "A & B"}}}},
		{"Activity", object{{"2026-11-21", 3}}}, {"Empty", nil}}
	got := string(appendXML(nil, doc))
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<response><Success>true</Success>`+
		`<Lists><item><ListID>1</ListID><Name>A &amp; B</Name></item></Lists>`+
		`<Activity><item key="2026-11-21">3</item></Activity><Empty></Empty></response>`+"\n", got)
	var v struct{ Success bool }
	require.NoError(t, xml.Unmarshal([]byte(got), &v))
	assert.True(t, v.Success)
}

func TestAppendPHP(t *testing.T) {
	t.Parallel()
	doc := object{{"Success", false}, {"ErrorCode", 104}, {"ErrorMessage", "Zoë"}, {"ErrorFields", []string{"A"}},
		{"Map", object{{"7", "x"}}}, {"N", nil}, {"F", 0.5}}
	assert.Equal(t, `a:7:{s:7:"Success";b:0;s:9:"ErrorCode";i:104;s:12:"ErrorMessage";s:4:"Zoë";`+
		`s:11:"ErrorFields";a:1:{i:0;s:1:"A";}s:3:"Map";a:1:{i:7;s:1:"x";}s:1:"N";N;s:1:"F";d:0.5;}`,
		string(appendPHP(nil, doc)))
}

func TestIsXMLName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"ListID": true, "_a.b-c": true, "2026-01-01": false, "": false,
		"a b": false, "xmlThing": false, "CustomField7": true, "a@b.c": false} {
		assert.Equal(t, want, isXMLName(name), name)
	}
}

package jsonlsource

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		keys []string
		vals map[string]string
		err  string
	}{
		{line: `{"email":"a@example.com","Plan":"pro"}`, keys: []string{"email", "Plan"}, vals: map[string]string{"email": "a@example.com", "Plan": "pro"}},
		{line: ` { "n": 1.50, "b": true, "f": false, "z": null, "big": 12345678901234567890 } `, keys: []string{"n", "b", "f", "z", "big"},
			vals: map[string]string{"n": "1.50", "b": "true", "f": "false", "z": "", "big": "12345678901234567890"}},
		{line: `{"tags":["a", "b"],"o":{"k": 1}}`, keys: []string{"tags", "o"}, vals: map[string]string{"tags": `["a","b"]`, "o": `{"k":1}`}},
		{line: `{"s":"caf\u00e9 \"q\""}`, keys: []string{"s"}, vals: map[string]string{"s": `café "q"`}},
		{line: `{}`, keys: []string{}, vals: map[string]string{}},
		{line: `{"email":"a@example.com"`, err: "the line ends inside the object"},
		{line: `{"a":1}{"b":2}`, err: "more after the object"},
		{line: `["a"]`, err: "not a JSON object"},
		{line: `"a"`, err: "not a JSON object"},
		{line: `{"a":1,"a":2}`, err: `key "a" given twice`},
		{line: `{"a":}`, err: "invalid character"},
		{line: "{\"a\":\"\xff\"}", err: "not valid UTF-8"},
	} {
		var obj object
		err := decodeLine([]byte(tc.line), &obj)
		if tc.err != "" {
			require.Error(t, err, tc.line)
			assert.Contains(t, err.Error(), tc.err, tc.line)
			continue
		}
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.keys, append([]string{}, obj.keys...), tc.line)
		assert.Equal(t, tc.vals, obj.vals, tc.line)
	}
}

// FuzzDecodeLine: the decoder never panics, a line it accepts names each key once with a
// value, and its error never holds the package's prefix.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{`{"email":"a@example.com","Plan":"pro"}`, `{"n":1e3,"b":null}`, `{"a":[1,{"b":2}]}`, `{`, `[]`, `{"a":1}{}`, "{\"\xff\":1}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var obj object
		err := decodeLine(line, &obj)
		if err != nil {
			assert.NotContains(t, err.Error(), "json: ")
			return
		}
		assert.Len(t, obj.vals, len(obj.keys))
		for _, k := range obj.keys {
			_, ok := obj.vals[k]
			assert.True(t, ok)
		}
		_ = salvageAddress(line)
	})
}

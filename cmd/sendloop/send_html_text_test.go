package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHTMLText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"paragraphs", "<p>Hi <b>Ann</b>,</p><p>news &amp; more</p>", "Hi Ann,\nnews & more"},
		{"hidden parts", "<html><head><title>T</title><style>p{}</style></head><body>Hello<script>x()</script></body></html>", "Hello"},
		{"breaks and spaces", "one<br>two<br/>  three \t four", "one\ntwo\nthree four"},
		{"references", "O&#39;Brien &lt;3 &quot;x&quot;", `O'Brien <3 "x"`},
		{"blank lines collapse", "<div>a</div>\n\n\n\n<div>b</div>", "a\n\nb"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, htmlText(tc.in))
		})
	}
}

func FuzzHTMLText(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<script>", "&amp;", "<<>>", "<br"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := htmlText(s)
		assert.Equal(t, strings.TrimSpace(out), out, "no space around the text")
		assert.NotContains(t, out, "\n\n\n", "no more than one blank line at a time")
	})
}

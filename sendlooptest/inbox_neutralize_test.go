package sendlooptest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNeutralizeHTML(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`<p>Hello</p>`, `<p>Hello</p>`},
		{`<link rel="preconnect" href="http://x/">`, `<x-neutralized-link rel="preconnect" href="http://x/">`},
		{`<LINK REL=dns-prefetch HREF=//x>`, `<x-neutralized-LINK REL=dns-prefetch HREF=//x>`},
		{`<link rel=prefetch href=a><link rel=preload href=b as=image><link rel=modulepreload href=c>`,
			`<x-neutralized-link rel=prefetch href=a><x-neutralized-link rel=preload href=b as=image><x-neutralized-link rel=modulepreload href=c>`},
		{`<iframe src="http://x/"></iframe>`, `<x-neutralized-iframe src="http://x/"></x-neutralized-iframe>`},
		{`<frameset><frame src=a></frameset>`, `<x-neutralized-frameset><x-neutralized-frame src=a></x-neutralized-frameset>`},
		{`<meta http-equiv="refresh" content="0;url=http://x/">`, `<x-neutralized-meta http-equiv="refresh" content="0;url=http://x/">`},
		{`<script type="speculationrules">{}</script>`, `<x-neutralized-script type="speculationrules">{}</x-neutralized-script>`},
		{`<object data=a></object><embed src=b><portal src=c><fencedframe src=d><base href=e>`,
			`<x-neutralized-object data=a></x-neutralized-object><x-neutralized-embed src=b><x-neutralized-portal src=c><x-neutralized-fencedframe src=d><x-neutralized-base href=e>`},
		{`<img alt="<link">`, `<img alt="<x-neutralized-link">`},
		{`<<link`, `<<x-neutralized-link`},
		{`<`, `<`},
		{`</`, `</`},
		{`<li>list</li>`, `<li>list</li>`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, neutralizeHTML(tt.in), "%q", tt.in)
	}
}

// openingTag matches a start or end tag of an element neutralizeHTML renames.
var openingTag = regexp.MustCompile(`(?i)</?(` + strings.Join(openingElements, "|") + `)`)

// FuzzNeutralizeHTML: whatever the HTML, no tag a browser could read as one of
// openingElements remains, and the text outside such tags is kept.
func FuzzNeutralizeHTML(f *testing.F) {
	for _, s := range []string{`<link rel=preconnect href=//x>`, `<IFRAME SRC=//x>`, `</script>`, `<<<frame`, "<li\x00nk>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := neutralizeHTML(in)
		assert.Empty(t, openingTag.FindAllString(strings.ReplaceAll(out, "<"+neutralizedPrefix, "<!"), -1), "%q → %q", in, out)
		assert.Equal(t, strings.ReplaceAll(out, neutralizedPrefix, ""), strings.ReplaceAll(in, neutralizedPrefix, ""))
	})
}

package sendlooptest

import "strings"

// openingElements are the elements whose mere presence in a document can make a browser
// open a connection that the Content-Security-Policy does not stop, or stops only after
// the connection is made: resource hints and preloads (<link rel=preconnect,
// dns-prefetch, prefetch, preload, prerender, modulepreload>), frames and embedded
// objects (<iframe src>, <frame>, <embed>, <object>, <portal>, <fencedframe>), <meta>
// (http-equiv refresh and the like), <base> and <script> (speculation rules).
var openingElements = []string{"link", "iframe", "frame", "embed", "object", "portal", "fencedframe", "meta", "base", "script"}

// neutralizedPrefix renames a neutralized element: "<link" becomes "<x-neutralized-link",
// an element no browser gives a meaning to, whose content still shows.
const neutralizedPrefix = "x-neutralized-"

// neutralizeHTML returns the HTML of a message as the inbox shows it: every start or end
// tag of an element of openingElements renamed, so that none of them exists in the
// document. It works on the text, not on a parse: a browser's tokenizer starts a tag
// name right after "<" (or "</") and never decodes an entity in it, so each place where
// such a tag could begin is found, whatever the context; in text or an attribute value
// the rename only changes what is shown.
func neutralizeHTML(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
		if strings.HasPrefix(s, "/") {
			b.WriteByte('/')
			s = s[1:]
		}
		for _, name := range openingElements {
			if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
				b.WriteString(neutralizedPrefix)
				break
			}
		}
	}
}

package legacy

import (
	"bytes"
	"encoding/xml"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// message builds the FormValue_Message document:
//
//	<?xml version="1.0" encoding="UTF-8"?><Entry><Message><APIKey>…</APIKey><Command>…</Command>
//	<ListID>3</ListID><Fields><CustomField7>…</CustomField7><EmailAddress>…</EmailAddress></Fields>…
//	</Message></Entry>
//
// (on one line). Parameters follow APIKey and Command in sorted order, as in the other
// forms. Bracket notation nests: Fields[EmailAddress] is <EmailAddress> inside <Fields>,
// and consecutive parameters under the same name share its element. A name part that is no
// XML name (a number, "", "item", anything with other characters) is written <item key="…">,
// or <item> for the empty part of a list such as Tags[]; a parameter given several values
// repeats its element.
func message(key, command string, params url.Values) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Entry><Message>`)
	writeLeaf(&b, "APIKey", key)
	writeLeaf(&b, "Command", command)
	var open []string // the parent elements currently open, outermost first
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !validXMLText(k) {
			return nil, invalid(command, 0, "", "a parameter name holds a character XML cannot carry")
		}
		segs := splitKey(k)
		parents, leaf := segs[:len(segs)-1], segs[len(segs)-1]
		for _, v := range params[k] {
			if !validXMLText(v) {
				return nil, invalid(command, 0, k, "the value holds a character XML cannot carry")
			}
			common := 0
			for common < len(open) && common < len(parents) && open[common] == parents[common] {
				common++
			}
			for i := len(open) - 1; i >= common; i-- {
				writeEnd(&b, open[i])
			}
			open = open[:common]
			for _, p := range parents[common:] {
				writeStart(&b, p)
				open = append(open, p)
			}
			writeLeaf(&b, leaf, v)
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		writeEnd(&b, open[i])
	}
	b.WriteString("</Message></Entry>")
	return b.Bytes(), nil
}

// splitKey splits bracket notation: "Fields[CustomField7]" is [Fields CustomField7],
// "Tags[]" is [Tags ""]. A key that is not well-formed bracket notation is one part.
func splitKey(k string) []string {
	name, rest, found := strings.Cut(k, "[")
	if !found || name == "" {
		return []string{k}
	}
	segs := []string{name}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return []string{k}
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 || strings.IndexByte(rest[1:end], '[') >= 0 {
			return []string{k}
		}
		segs = append(segs, rest[1:end])
		rest = rest[end+1:]
	}
	return segs
}

func writeStart(b *bytes.Buffer, seg string) {
	b.WriteByte('<')
	if isXMLName(seg) {
		b.WriteString(seg)
	} else {
		b.WriteString("item")
		if seg != "" {
			b.WriteString(` key="`)
			b.WriteString(escapeXML(seg))
			b.WriteByte('"')
		}
	}
	b.WriteByte('>')
}

func writeEnd(b *bytes.Buffer, seg string) {
	b.WriteString("</")
	if isXMLName(seg) {
		b.WriteString(seg)
	} else {
		b.WriteString("item")
	}
	b.WriteByte('>')
}

func writeLeaf(b *bytes.Buffer, seg, text string) {
	writeStart(b, seg)
	b.WriteString(escapeXML(text))
	writeEnd(b, seg)
}

// isXMLName reports whether s can be an element name as it is: ASCII letters, digits, '_',
// '-' and '.', not starting with a digit, '-', '.' or "xml", and not "item" (which marks
// the parts that are no names).
func isXMLName(s string) bool {
	if s == "" || s == "item" || !(s[0] == '_' || s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return len(s) < 3 || !(s[0]|0x20 == 'x' && s[1]|0x20 == 'm' && s[2]|0x20 == 'l')
}

// escapeXML escapes text for element content and attribute values alike.
func escapeXML(s string) string {
	if !strings.ContainsAny(s, "&<>\"'\t\n\r") {
		return s
	}
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// validXMLText reports whether s is UTF-8 made of characters XML 1.0 can carry.
func validXMLText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
	}
	return true
}

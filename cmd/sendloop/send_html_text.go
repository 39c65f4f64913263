package main

import (
	"html"
	"regexp"
	"strings"
)

// The parts of an HTML body that a text rendering of it drops or turns into line breaks.
var (
	htmlHidden = regexp.MustCompile(`(?is)<(script|style|head|title)\b.*?</(script|style|head|title)\s*>`)
	htmlBreak  = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|li|tr|h[1-6]|table|blockquote|pre)\s*>`)
	htmlTag    = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlSpaces = regexp.MustCompile(`[ \t\r\f\v]+`)
	htmlBlanks = regexp.MustCompile(`\n{3,}`)
)

// htmlText is the text an HTML body shows, roughly as a mail client's plain view gives it,
// for the dry run of a message that has no text part: the hidden parts dropped, block ends
// as line breaks, the tags removed and the character references read.
func htmlText(s string) string {
	s = htmlHidden.ReplaceAllString(s, "")
	s = htmlBreak.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(htmlSpaces.ReplaceAllString(l, " "))
	}
	return strings.TrimSpace(htmlBlanks.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}

package main

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable returns a value that came from the network (a request's path, a message's
// header, an answer of the fake) as one line a terminal shows and acts on in no way:
// every control character (C0, DEL, C1) and every byte that is not UTF-8 is written as a
// Go escape (\x1b, \n, \u0085, \xff), so that no value can move the cursor, retitle the
// window or forge a line of the log. Printable text, non-ASCII included, is kept.
func printable(s string) string { return escapeControls(s, false) }

// printableLines is printable for a body of text: line breaks and tabs stay.
func printableLines(s string) string { return escapeControls(s, true) }

func escapeControls(s string, keepLines bool) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) && !(keepLines && (r == '\n' || r == '\t'))
	}) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unicode.IsControl(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// redactedURL returns a webhook URL for text output: the value of every query parameter
// (a receiver's token, often) is REDACTED, and so is a password in it, as the webhook
// package keeps the query out of its logs. The control API's JSON keeps the URL whole.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i] + "?REDACTED"
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	if u.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			if name, _, hasValue := strings.Cut(kv, "="); hasValue {
				parts = append(parts, name+"=REDACTED")
			} else {
				parts = append(parts, "REDACTED") // a bare ?s3cret is a value too
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// withArticle puts "a" or "an" before an event kind: "an open", "a click", "an
// unsubscription".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

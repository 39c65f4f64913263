// Package address is the one email-address rule of the sendloop packages (root, legacy,
// smtp and the CLI): what mail systems accept, checked quickly for the common case, since
// bulk imports check every row and net/mail's full parser dominated their cost.
//
// An address is valid when it is a bare address (local@domain: no display name, no
// comment, no surrounding space) that net/mail accepts, and also:
//
//   - at most 254 octets in all, the local part at most 64 (RFC 5321);
//   - the domain is a host name: at most 255 octets, at least two labels (a dot:
//     "ann@localhost" is refused), each label 1 to 63 octets of letters, digits and
//     hyphens, neither starting nor ending with a hyphen, the last label not all digits;
//   - no quoted local part and no address literal ("ann@[192.0.2.1]"): they are rarely
//     deliverable, and the service mails host names only;
//   - internationalised (non-ASCII) domains and local parts are accepted: a non-ASCII
//     label may hold any Unicode letter, digit or combining mark, its length counted in
//     UTF-8 octets (its punycode form is not computed: that would need a dependency);
//   - nothing that Normalize removes at either end: white space, a byte-order mark, a
//     zero-width space (net/mail would take a leading U+00A0 or U+200B as part of the
//     local part). Such characters inside the address are left to the rules above.
//
// Normalize cleans input the way every caller that reads addresses from people does (the
// CLI, a CSV row); Problem says why an address is refused. The table in address_test.go
// lists each rule with an address it accepts or refuses.
package address

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RFC 5321 limits, in octets.
const (
	maxAddress = 254
	maxLocal   = 64
	maxDomain  = 255
	maxLabel   = 63
)

// Valid reports whether s is an address mail systems accept (see the package doc).
func Valid(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 0 || len(s) > maxAddress || !trimmed(s) {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > maxLocal || !validDomain(domain) {
		return false
	}
	if dotAtom(local) {
		return true
	}
	// Quoted local parts, non-ASCII text: net/mail decides.
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// validDomain applies the host-name rule to domain, in one pass over an ASCII domain.
func validDomain(domain string) bool {
	if len(domain) > maxDomain || domain == "" {
		return false
	}
	labels, start, digits := 0, 0, true
	for i := 0; i < len(domain); i++ {
		switch c := domain[i]; {
		case c == '.':
			if !asciiLabel(domain[start:i]) {
				return false
			}
			labels, start, digits = labels+1, i+1, true
		case c >= utf8.RuneSelf:
			return validDomainUnicode(domain)
		case class[c]&classHost == 0:
			return false
		case c < '0' || c > '9':
			digits = false
		}
	}
	return asciiLabel(domain[start:]) && labels >= 1 && !digits
}

// asciiLabel checks the length and hyphens of a label of letters, digits and hyphens.
func asciiLabel(label string) bool {
	return label != "" && len(label) <= maxLabel && label[0] != '-' && label[len(label)-1] != '-'
}

// validDomainUnicode applies the host-name rule to a domain with non-ASCII labels.
func validDomainUnicode(domain string) bool {
	labels := 0
	lastAllDigits := false
	for rest := domain; ; {
		label, tail, more := strings.Cut(rest, ".")
		if !validLabel(label) {
			return false
		}
		labels++
		lastAllDigits = strings.Trim(label, "0123456789") == ""
		if !more {
			break
		}
		rest = tail
	}
	return labels >= 2 && !lastAllDigits
}

func validLabel(label string) bool {
	if label == "" || len(label) > maxLabel || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for i := 0; i < len(label); {
		c := label[i]
		if c < utf8.RuneSelf {
			if !(c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(label[i:])
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) {
			return false
		}
		i += size
	}
	return true
}

// dotAtom reports an ASCII dot-atom: atext runs joined by single dots. It decides the vast
// majority of local parts without allocating.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		case class[c]&classAtext == 0:
			return false
		}
	}
	return true
}

// The classes of ASCII bytes, in class.
const (
	classAtext = 1 << iota // RFC 5322 atext
	classHost              // a host name's letters, digits and hyphen
)

// class holds the classes of each byte; non-ASCII bytes have none.
var class = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= classAtext | classHost
		t[c-'a'+'A'] |= classAtext | classHost
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= classAtext | classHost
	}
	t['-'] |= classHost
	for _, c := range "!#$%&'*+-/=?^_`{|}~" {
		t[c] |= classAtext
	}
	return t
}()

// trimmed reports whether s has nothing for Normalize to remove: in the common case, an
// ASCII letter or digit at each end, two byte comparisons.
func trimmed(s string) bool {
	return s != "" && !isJunkAt(s, 0) && !isJunkBefore(s, len(s))
}

// Normalize returns s without the white space (Unicode's, as unicode.IsSpace), byte-order
// marks (U+FEFF) and zero-width spaces (U+200B, U+200C, U+200D, U+2060) at either end. It
// changes nothing else: no case change, no display-name stripping, nothing inside. The
// result is a substring of s: nothing is allocated.
func Normalize(s string) string {
	start, end := 0, len(s)
	for start < end && isJunkAt(s[:end], start) {
		_, size := utf8.DecodeRuneInString(s[start:end])
		start += size
	}
	for end > start && isJunkBefore(s[start:end], end-start) {
		_, size := utf8.DecodeLastRuneInString(s[start:end])
		end -= size
	}
	return s[start:end]
}

// isJunkAt reports whether the rune starting at s[i] is one Normalize removes.
func isJunkAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	if c := s[i]; c < utf8.RuneSelf {
		return asciiSpace(c)
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return junk(r)
}

// isJunkBefore reports whether the rune ending at s[i-1] is one Normalize removes.
func isJunkBefore(s string, i int) bool {
	if i <= 0 {
		return false
	}
	if c := s[i-1]; c < utf8.RuneSelf {
		return asciiSpace(c)
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return junk(r)
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// junk reports a rune Normalize removes: Unicode white space, a byte-order mark or a
// zero-width space.
func junk(r rune) bool {
	switch r {
	case '\uFEFF', '\u200B', '\u200C', '\u200D', '\u2060':
		return true
	}
	return unicode.IsSpace(r)
}

// Problem returns why s is not a valid address, for people (e.g. "it has white space
// around it"), or "" when it is valid. It is for error messages: Valid is the fast test.
func Problem(s string) string {
	if Valid(s) {
		return ""
	}
	if s == "" {
		return "it is empty"
	}
	if n := Normalize(s); n != s {
		if n == "" {
			return "it is only white space"
		}
		if strings.TrimFunc(s, unicode.IsSpace) == n {
			return "it has white space around it"
		}
		return "it has white space or an invisible character (a byte-order mark, a zero-width space) around it"
	}
	if strings.ContainsAny(s, "<>") {
		return "it is not a bare address: give name@example.com without a display name or angle brackets"
	}
	at := strings.LastIndexByte(s, '@')
	switch {
	case at < 0:
		return "it has no @"
	case strings.Count(s, "@") > 1:
		return "it has more than one @"
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "it holds a control character"
	case !utf8.ValidString(s):
		return "it is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsSpace):
		return "it has white space inside"
	case len(s) > maxAddress:
		return "it is longer than 254 octets"
	}
	local, domain := s[:at], s[at+1:]
	switch {
	case local == "":
		return "nothing comes before the @"
	case len(local) > maxLocal:
		return "the part before the @ is longer than 64 octets"
	case domain == "":
		return "nothing comes after the @"
	case !strings.Contains(domain, "."):
		return "the domain has no dot"
	case !validDomain(domain):
		return "the domain is not a host name"
	}
	return "the part before the @ is malformed: a leading, trailing or doubled dot, a quote, or a character mail systems refuse"
}

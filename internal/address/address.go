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
//     UTF-8 octets (its punycode form is not computed: that would need a dependency).
//
// The table in address_test.go lists each rule with an address it accepts or refuses.
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
	if at < 0 || len(s) > maxAddress {
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

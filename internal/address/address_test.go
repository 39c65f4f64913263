package address

import (
	"net/mail"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func netMailValid(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// rules documents the address rule, one row a case: the package doc points here.
var rules = []struct {
	address string
	valid   bool
	rule    string
}{
	{"ann@example.com", true, "a plain address"},
	{"a.b+tag@sub.example.co.uk", true, "dots and plus in the local part, subdomains"},
	{"o'brien@example.ie", true, "any atext character"},
	{"!#$%&'*+-/=?^_`{|}~@example.com", true, "every atext character"},
	{"zoë@example.com", true, "a non-ASCII local part (SMTPUTF8)"},
	{"ann@bücher.example", true, "an internationalised domain label"},
	{"ann@例え.テスト", true, "an internationalised domain, top-level label included"},
	{"ann@xn--bcher-kva.example", true, "a punycode label"},
	{"ann@a-b.example.com", true, "a hyphen inside a label"},
	{"ann@123.example.com", true, "a numeric label that is not the last"},
	{strings.Repeat("l", 64) + "@example.com", true, "a 64-octet local part"},
	{"ann@" + strings.Repeat("d", 63) + ".com", true, "a 63-octet label"},

	{"", false, "empty"},
	{"plain", false, "no @"},
	{"@example.com", false, "no local part"},
	{"ann@", false, "no domain"},
	{"a@@example.com", false, "two @"},
	{"a..b@example.com", false, "two dots in a row"},
	{".a@example.com", false, "a leading dot"},
	{"a.@example.com", false, "a trailing dot in the local part"},
	{"a b@example.com", false, "a space"},
	{`"quoted name"@example.com`, false, "a quoted local part (rarely deliverable; net/mail unquotes it)"},
	{"Ann <ann@example.com>", false, "a display name"},
	{" ann@example.com", false, "surrounding space"},
	{"ann@localhost", false, "a domain without a dot"},
	{"bob@example", false, "a domain without a dot"},
	{"ann@example.com.", false, "a trailing dot in the domain"},
	{"ann@example..com", false, "an empty label"},
	{"ann@-example.com", false, "a label starting with a hyphen"},
	{"ann@example-.com", false, "a label ending with a hyphen"},
	{"ann@exa_mple.com", false, "an underscore in a host name"},
	{"ann@[192.0.2.1]", false, "an address literal"},
	{"ann@192.0.2.1", false, "a bare IP address (all-digit top-level label)"},
	{strings.Repeat("l", 65) + "@example.com", false, "a local part over 64 octets"},
	{"ann@" + strings.Repeat("d", 64) + ".com", false, "a label over 63 octets"},
	{"ann@" + strings.Repeat("d.", 126) + "com", false, "an address over 254 octets"},
	{"ann@ex\u00a0ample.com", false, "a non-letter in an internationalised label"},
	{"ann@exam\xffple.com", false, "invalid UTF-8"},
	{"ann@example.com\r\nBcc: x@example.com", false, "a line break"},
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, r := range rules {
		if got := Valid(r.address); got != r.valid {
			t.Errorf("Valid(%q) = %v, want %v: %s", r.address, got, r.valid, r.rule)
		}
		if got := beforeValid(r.address); got != r.valid {
			t.Errorf("before the rewrite, Valid(%q) was %v", r.address, got)
		}
		if r.valid && !netMailValid(r.address) {
			t.Errorf("net/mail refuses %q, which the rule accepts (%s)", r.address, r.rule)
		}
	}
}

// FuzzValid checks that the rule is never looser than net/mail's reading of a bare address.
func FuzzValid(f *testing.F) {
	for _, r := range rules {
		f.Add(r.address)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Valid(s) && !netMailValid(s) {
			t.Fatalf("Valid(%q) accepts what net/mail refuses", s)
		}
		if Valid(s) != beforeValid(s) {
			t.Fatalf("Valid(%q) = %v, but %v before the single-pass rewrite", s, Valid(s), beforeValid(s))
		}
	})
}

func BenchmarkValid(b *testing.B) {
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !Valid("some.user+tag@mail.example.com") {
				b.Fatal()
			}
		}
	})
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !beforeValid("some.user+tag@mail.example.com") {
				b.Fatal()
			}
		}
	})
	b.Run("net_mail", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !netMailValid("some.user+tag@mail.example.com") {
				b.Fatal()
			}
		}
	})
}

// Valid reports whether s is an address mail systems accept (see the package doc).
func beforeValid(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 0 || len(s) > maxAddress {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > maxLocal || !beforeValidDomain(domain) {
		return false
	}
	if beforeDotAtom(local) {
		return true
	}
	// Quoted local parts, non-ASCII text: net/mail decides.
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// validDomain applies the host-name rule to domain.
func beforeValidDomain(domain string) bool {
	if len(domain) > maxDomain || domain == "" {
		return false
	}
	labels := 0
	lastAllDigits := false
	for rest := domain; ; {
		label, tail, more := strings.Cut(rest, ".")
		if !beforeValidLabel(label) {
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

func beforeValidLabel(label string) bool {
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
func beforeDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		case !beforeIsAtext(c):
			return false
		}
	}
	return true
}

func beforeIsAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~':
		return true
	}
	return false
}

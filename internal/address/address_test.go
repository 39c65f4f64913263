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
	{"ann@example.com\t", false, "a trailing tab"},
	{"\u00a0ann@example.com", false, "a leading no-break space (net/mail takes it into the local part)"},
	{"\u3000ann@example.com", false, "a leading ideographic space"},
	{"\ufeffann@example.com", false, "a leading byte-order mark"},
	{"\u200bann@example.com", false, "a leading zero-width space"},
	{"\u2060ann@example.com", false, "a leading word joiner"},
	{"ann@example.com\u200d", false, "a trailing zero-width joiner"},
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

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ann@example.com", "ann@example.com"},
		{"", ""},
		{" \t\r\n", ""},
		{" ann@example.com ", "ann@example.com"},
		{"\ufeffann@example.com", "ann@example.com"},
		{"\u200b\u00a0Ann@Example.com\u2060\u3000\u200c\u200d\u0085", "Ann@Example.com"},
		{"Ann <ann@example.com>", "Ann <ann@example.com>"}, // no display-name stripping
		{" a b@example.com ", "a b@example.com"},           // nothing inside
		{"an\u200bn@example.com", "an\u200bn@example.com"},
		{"\xffann@example.com\xff", "\xffann@example.com\xff"}, // invalid UTF-8 is not white space
		{"\u00e9", "\u00e9"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProblem(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ann@example.com", ""},
		{"", "it is empty"},
		{"\ufeff", "it is only white space"},
		{" ann@example.com", "it has white space around it"},
		{"ann@example.com\n", "it has white space around it"},
		{"\ufeffann@example.com", "a byte-order mark, a zero-width space"},
		{"Ann <ann@example.com>", "without a display name or angle brackets"},
		{"plain", "it has no @"},
		{"a@@example.com", "more than one @"},
		{"ann@example.com\r\nBcc: x.example.com", "control character"},
		{"ann@exam\xffple.com", "not valid UTF-8"},
		{"a b@example.com", "white space inside"},
		{"ann@" + strings.Repeat("d.", 126) + "com", "longer than 254 octets"},
		{"@example.com", "nothing comes before the @"},
		{strings.Repeat("l", 65) + "@example.com", "longer than 64 octets"},
		{"ann@", "nothing comes after the @"},
		{"ann@localhost", "the domain has no dot"},
		{"ann@exa_mple.com", "the domain is not a host name"},
		{"a..b@example.com", "the part before the @ is malformed"},
	}
	for _, tt := range tests {
		got := Problem(tt.in)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("Problem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, r := range rules {
		if got := Problem(r.address); (got == "") != r.valid {
			t.Errorf("Problem(%q) = %q, but Valid is %v (%s)", r.address, got, r.valid, r.rule)
		}
	}
}

// TestNothingAllocated: Valid and Normalize are on bulk imports' path, once per row.
func TestNothingAllocated(t *testing.T) {
	const addr = "some.user+tag@mail.example.com"
	padded := " \ufeff" + addr + "\u200b\n"
	if n := testing.AllocsPerRun(100, func() {
		if !Valid(addr) || Normalize(addr) != addr || Normalize(padded) != addr {
			t.Fatal("wrong answer")
		}
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// FuzzNormalize checks Normalize and Problem against each other and against Valid.
func FuzzNormalize(f *testing.F) {
	for _, r := range rules {
		f.Add(r.address)
	}
	f.Add(" \ufeff\u200bann@example.com\u2060\u3000")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !strings.Contains(s, n) {
			t.Fatalf("Normalize(%q) = %q, not a part of it", s, n)
		}
		if Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q, which Normalize changes again", s, n)
		}
		if n != "" && !trimmed(n) {
			t.Fatalf("Normalize(%q) = %q, which still has white space at an end", s, n)
		}
		if Valid(s) && n != s {
			t.Fatalf("Valid(%q), but Normalize changes it to %q", s, n)
		}
		if p := Problem(s); (p == "") != Valid(s) {
			t.Fatalf("Problem(%q) = %q, Valid = %v", s, p, Valid(s))
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

// beforeValid is Valid as it was before the single-pass domain check and the byte-class
// table: the oracle FuzzValid compares Valid with, and BenchmarkValid's baseline.
func beforeValid(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 0 || len(s) > maxAddress || !trimmed(s) {
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

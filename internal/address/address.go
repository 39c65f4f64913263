// Package address checks email addresses as net/mail does, quickly for the common case:
// bulk imports check every row, and net/mail's full parser dominated their cost.
package address

import "net/mail"

// Valid reports whether s is a bare address (local@domain, no display name, no
// surrounding space) that net/mail accepts.
func Valid(s string) bool {
	if valid, decided := quick(s); decided {
		return valid
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// quick decides dot-atom addresses (the vast majority) without allocating; anything
// unusual (quotes, comments, brackets, non-ASCII) is left to net/mail.
func quick(s string) (valid, decided bool) {
	at := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '@':
			if at >= 0 {
				return false, false
			}
			at = i
		case c == '.' || isAtext(c):
		default:
			return false, false
		}
	}
	if at < 0 {
		return false, true
	}
	return dotAtom(s[:at]) && dotAtom(s[at+1:]), true
}

// dotAtom reports atext runs joined by single dots.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '.' && s[i-1] == '.' {
			return false
		}
	}
	return true
}

func isAtext(c byte) bool {
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

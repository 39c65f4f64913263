package sendloop

import (
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
)

// NormalizeAddress returns s without the white space (Unicode's: spaces, tabs, line
// breaks, no-break and ideographic spaces, …), byte-order marks (U+FEFF) and zero-width
// spaces (U+200B, U+200C, U+200D, U+2060) at either end, as copied text and spreadsheet
// cells often carry. It changes nothing else: no case change, no display-name stripping,
// nothing inside the address. It allocates nothing.
//
// The SDK never does this itself: every method that takes an address refuses one with
// such characters around it (CheckAddress says so), so that what is sent is what the
// caller gave. Clean input with NormalizeAddress first, as the sendloop CLI does.
func NormalizeAddress(s string) string { return address.Normalize(s) }

// CheckAddress returns nil when s is an email address the SDK sends, by the one rule that
// every method taking an address applies before sending, or a *ValidationError matching
// ErrInvalidEmailFormat (ErrMissingParameters for an empty one) whose message says what is
// wrong: white space around it, no @, a display name, a domain without a dot, …
//
// The rule: a bare address (local@domain, no display name) that net/mail accepts, at most
// 254 octets with a local part of at most 64, whose domain is a host name with a dot (an
// internationalised one too), without a quoted local part or an address literal, and with
// nothing that NormalizeAddress removes at either end.
func CheckAddress(s string) error {
	return checkEmail("", "", s)
}

// checkEmail refuses an empty or malformed address before anything is sent, saying what
// is wrong with it. field is the parameter that holds it, "" for none.
func checkEmail(command, field, addr string) error {
	var fields []string
	if field != "" {
		fields = []string{field}
	}
	if strings.TrimSpace(addr) == "" {
		name := field
		if name == "" {
			name = "the address"
		}
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: fields, Reason: name + " is empty"}
	}
	problem := address.Problem(addr)
	if problem == "" {
		return nil
	}
	reason := fmt.Sprintf("%q is not an email address: %s", addr, problem)
	if n := address.Normalize(addr); n != addr && address.Valid(n) {
		reason += " (NormalizeAddress removes it)"
	}
	return &ValidationError{Code: ErrInvalidEmailFormat, Command: command, Fields: fields, Reason: reason}
}

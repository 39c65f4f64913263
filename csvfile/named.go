package csvfile

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"unicode"
)

// ColumnEmail is the subscriber record's address column, as `sendloop export` writes it.
const ColumnEmail = "EmailAddress"

// emailAliases are the header names read as the address column, compared as NormalizeName
// leaves them: EmailAddress, "Email Address", E-mail, email_address, Mail, …
var emailAliases = []string{"emailaddress", "email", "mail", "emailaddr", "mailaddress", "emailid"}

// NormalizeName folds a column name as the subscriber record's own column names are
// compared: lower case, without spaces, '-', '_' or '.'.
func NormalizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.', '\t', '\u00a0':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// IsAddressName reports whether a column name names the address column: ColumnEmail in any
// common spelling (Email, E-mail, "Email Address", email_address, Mail, …).
func IsAddressName(name string) bool {
	return slices.Contains(emailAliases, NormalizeName(name))
}

// ColumnMap maps a CSV column to what it holds, overriding the name: --column SOURCE=TARGET.
type ColumnMap struct {
	// Source is the column's name in the header, compared case-insensitively, trimmed.
	Source string
	// Target is EmailAddress (or another of its spellings), a custom field's name, or its
	// key CustomField<id>.
	Target string
}

// ParseColumnMap reads "SOURCE=TARGET" (split at the first '=').
func ParseColumnMap(s string) (ColumnMap, error) {
	src, target, ok := strings.Cut(s, "=")
	src, target = strings.TrimSpace(src), strings.TrimSpace(target)
	if !ok || src == "" || target == "" {
		return ColumnMap{}, fmt.Errorf("%q is not SOURCE=TARGET (a column of the file = EmailAddress or a custom field)", s)
	}
	return ColumnMap{Source: src, Target: target}, nil
}

// sameColumn compares a column's name with a name given on the command line.
func sameColumn(header, given string) bool {
	return strings.EqualFold(strings.TrimSpace(header), strings.TrimSpace(given))
}

// NamedRecord is a record read by column name: its address and its other columns.
type NamedRecord struct {
	// Line is the line the record starts on, from 1 (the file's first line).
	Line int
	// Address is the address, without surrounding spaces; empty when the record is rejected
	// for not holding one.
	Address string
	// Raw is the address as written, for the user to find the row (see RecordAddress.Raw).
	Raw string
	// Columns holds every other column by its header name (trimmed), values as written;
	// nil for a rejected record.
	Columns map[string]string
	// Reject, when not empty, says why the record cannot be used: malformed, the wrong
	// number of fields, invalid UTF-8, a missing or invalid address.
	Reject string
	// Malformed reports a record the CSV reader could not parse (an unterminated quote
	// swallows the lines after it).
	Malformed bool
}

// AddressColumn returns the index of header's address column: the column columns maps to
// EmailAddress (Source compared case-insensitively, trimmed), or else the one named
// EmailAddress in any common spelling (see IsAddressName).
func AddressColumn(header []string, columns []ColumnMap) (int, error) {
	for _, c := range columns {
		if !IsAddressName(c.Target) {
			continue
		}
		if i := slices.IndexFunc(header, func(h string) bool { return sameColumn(h, c.Source) }); i >= 0 {
			return i, nil
		}
		return -1, fmt.Errorf("the header has no column %q", c.Source)
	}
	found := -1
	for i, h := range header {
		if !IsAddressName(h) {
			continue
		}
		if found >= 0 {
			return -1, fmt.Errorf("columns %d and %d both hold %s (map one with a ColumnMap)", found+1, i+1, ColumnEmail)
		}
		found = i
	}
	if found < 0 {
		return -1, fmt.Errorf("no address column (name one %s, or map one to it)", ColumnEmail)
	}
	return found, nil
}

// Named yields the records left in r with the address in column addr (see AddressColumn)
// and every other column by name. A rejected record is yielded with its Reject set, and
// reading goes on; a read error is yielded once and ends the sequence. The addresses are
// checked and trimmed by Record.Address, as a sync's are; nothing else is (duplicates are
// the caller's to find).
func (r *Reader) Named(addr int) iter.Seq2[NamedRecord, error] {
	names := make([]string, len(r.Header))
	for i, h := range r.Header {
		names[i] = strings.TrimSpace(h)
	}
	return func(yield func(NamedRecord, error) bool) {
		if addr < 0 || addr >= len(r.Header) {
			yield(NamedRecord{}, fmt.Errorf("csvfile: address column %d is not among the header's, 0 to %d", addr, len(r.Header)-1))
			return
		}
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(NamedRecord{}, fmt.Errorf("reading the CSV: %w", err))
				return
			}
			a := rec.Address(addr, len(names))
			out := NamedRecord{Line: rec.Line, Address: a.Address, Raw: a.Raw, Reject: a.Reject, Malformed: a.Malformed}
			if out.Reject == "" {
				out.Columns = make(map[string]string, len(names)-1)
				for i, v := range rec.Fields {
					if i != addr {
						out.Columns[names[i]] = v
					}
				}
			} else {
				out.Address = ""
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

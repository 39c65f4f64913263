package csvfile

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/address"
)

// RecordAddress is what a record says of its address, read by Record.Address: the one rule
// by which Reader.Named's records and a sync's rows (listsync.Mapping.Row) take their
// address or are rejected.
type RecordAddress struct {
	// Address is the address without surrounding spaces (sendloop.NormalizeAddress): empty
	// for a Malformed record, nothing in which can be trusted; for a record of the wrong
	// number of fields, the field Raw names, if that is an address. It is set, invalid UTF-8
	// as U+FFFD, for a record rejected for its UTF-8 or its address.
	Address string
	// Raw is the address as written, for the user to find the row: the address cell
	// untrimmed; for a record of the wrong number of fields, the field that is an address
	// (the address column's if it is one) or else the line itself; for a Malformed record,
	// the address column of its first line split plainly, or failing that the line itself
	// (at most 1 KiB), or "(line N)" when the line lies beyond what the reader can see or
	// holds only spaces. Never "" for a rejected record, except one whose address cell is
	// empty. Invalid UTF-8 shows as U+FFFD.
	Raw string
	// Reject, when not empty, says why the record cannot be used: malformed, the wrong
	// number of fields, invalid UTF-8 in any field, a missing or invalid address.
	Reject string
	// Protect lists, lower-cased, the fields of a record of the wrong number of fields that
	// are valid addresses: a stray comma shifts the address out of its column, and the
	// subscriber any of them names must not be taken for missing from the file.
	Protect []string
	// Malformed reports a record the reader could not parse (Record.Err is set): its text,
	// and the lines it may have swallowed, name no address that can be trusted.
	Malformed bool
}

// Address reads the record's address from column col (0 ≤ col < columns) of a file whose
// header has columns fields. A malformed record, a record of the wrong number of fields,
// invalid UTF-8 in any field and a missing or invalid address are rejected, with the
// reason and the text the user can look for in the file.
func (r Record) Address(col, columns int) RecordAddress {
	var a RecordAddress
	switch {
	case r.Err != nil:
		a.Malformed = true
		a.Reject = "malformed line: " + r.Err.Error()
		a.Raw = r.rawFromText(col, columns)
		if strings.TrimSpace(a.Raw) == "" {
			// No text to show (the reader keeps every malformed record's): say where it is.
			a.Raw = fmt.Sprintf("(line %d)", r.Line)
		}
		return a
	case len(r.Fields) != columns:
		noun := "fields"
		if len(r.Fields) == 1 {
			noun = "field"
		}
		a.Reject = fmt.Sprintf("malformed line: %d %s, the header has %d", len(r.Fields), noun, columns)
		// A stray comma shifts the address out of its column: which field was meant is
		// unknown, so every field that is an address names the record (and its subscriber
		// stays); the address column's, if it is one, else the first, is the address.
		for i, f := range r.Fields {
			v := address.Normalize(f)
			if !address.Valid(v) {
				continue
			}
			if a.Address == "" || i == col {
				a.Address, a.Raw = v, f
			}
			if k := strings.ToLower(v); !slices.Contains(a.Protect, k) {
				a.Protect = append(a.Protect, k)
			}
		}
		if a.Address == "" {
			a.Raw = r.Text
			if a.Raw == "" {
				a.Raw = strings.ToValidUTF8(strings.Join(r.Fields, string(r.comma)), "\uFFFD")
			}
			if strings.TrimSpace(a.Raw) == "" {
				a.Raw = fmt.Sprintf("(line %d)", r.Line) // a line of spaces: show where it is
			}
		}
		return a
	}
	a.Raw = r.Fields[col]
	a.Address = address.Normalize(r.Fields[col])
	for _, f := range r.Fields {
		if !utf8.ValidString(f) {
			a.Address = strings.ToValidUTF8(a.Address, "\uFFFD")
			a.Raw = strings.ToValidUTF8(a.Raw, "\uFFFD")
			a.Reject = "not valid UTF-8 (save the file as UTF-8, or name its encoding with --encoding, e.g. windows-1252)"
			return a
		}
	}
	switch {
	case a.Address == "":
		a.Reject = "missing email address"
	case !address.Valid(a.Address):
		a.Reject = "invalid email address"
	}
	return a
}

// rawFromText reads the address column from the first line of a record the reader could
// not parse: split as CSV with quotes tolerated when that gives the header's number of
// fields, else split at every delimiter; failing that, the line.
func (r Record) rawFromText(col, columns int) string {
	if r.comma == 0 || r.Text == "" {
		return r.Text
	}
	cr := csv.NewReader(strings.NewReader(r.Text))
	cr.Comma, cr.LazyQuotes, cr.FieldsPerRecord = r.comma, true, -1
	fields, err := cr.Read()
	if err != nil || len(fields) != columns {
		fields = strings.Split(r.Text, string(r.comma))
	}
	if col < len(fields) {
		if v := strings.Trim(fields[col], " \t\""); v != "" {
			return strings.ToValidUTF8(v, "\uFFFD")
		}
	}
	return r.Text
}

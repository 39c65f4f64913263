package csvsync

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/address"
)

// Field is a custom field of the list, as list.get describes it.
type Field struct {
	ID   int
	Name string
}

// The subscriber record's own columns, as `sendloop export` writes them. EmailAddress is the
// one sync reads; SubscriptionStatus decides whether a row counts (see Mapping.Status); the
// others are read-only and ignored.
const (
	ColumnEmail  = "EmailAddress"
	ColumnStatus = "SubscriptionStatus"
)

// ReadOnlyColumns are the subscriber record's columns that export writes after the custom
// fields and that sync ignores (SubscriptionStatus aside).
var ReadOnlyColumns = []string{"SubscriberID", ColumnStatus, "BounceType", "SubscriptionDate",
	"SubscriptionIP", "UnsubscriptionDate", "UnsubscriptionIP", "OptInDate"}

// emailAliases are the header names read as the address column, compared case-insensitively.
var emailAliases = []string{ColumnEmail, "Email Address", "Email"}

// customFieldPrefix is the service's key for a custom field: CustomField<id>.
const customFieldPrefix = "CustomField"

// MappedField is a CSV column holding a custom field.
type MappedField struct {
	Column int    // index in the record
	Header string // as written in the header row
	Field  Field
}

// Mapping says which CSV column holds what.
type Mapping struct {
	// Columns is the number of columns in the header; every record must have as many.
	Columns int
	// Email is the column of the address.
	Email int
	// Status is the SubscriptionStatus column, or -1. With one, only rows whose status is
	// Subscribed count: the others are skipped.
	Status int
	// Fields are the custom-field columns, in header order.
	Fields []MappedField
	// Ignored names the read-only columns the header holds.
	Ignored []string
}

// HeaderError says what is wrong with a header row: a usage error.
type HeaderError struct {
	// Unknown lists the columns that name neither the address, a custom field of the list,
	// nor a read-only column.
	Unknown []string
	// Problems lists the other faults: a missing address column, a column given twice, an
	// ambiguous field name.
	Problems []string
	// Fields are the list's custom fields, to tell the user what is available.
	Fields []Field
}

func (e *HeaderError) Error() string {
	var parts []string
	if len(e.Unknown) > 0 {
		quoted := make([]string, len(e.Unknown))
		for i, u := range e.Unknown {
			quoted[i] = strconv.Quote(u)
		}
		noun := "column"
		if len(e.Unknown) > 1 {
			noun = "columns"
		}
		parts = append(parts, fmt.Sprintf("unknown %s %s (the list's custom fields are %s)",
			noun, strings.Join(quoted, ", "), describeFields(e.Fields)))
	}
	parts = append(parts, e.Problems...)
	return "CSV header: " + strings.Join(parts, "; ")
}

func describeFields(fields []Field) string {
	if len(fields) == 0 {
		return "none"
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = fmt.Sprintf("%q (%s%d)", f.Name, customFieldPrefix, f.ID)
	}
	return strings.Join(out, ", ")
}

// parseFieldKey reads "CustomField<id>" in any case.
func parseFieldKey(s string) (int, bool) {
	if len(s) <= len(customFieldPrefix) || !strings.EqualFold(s[:len(customFieldPrefix)], customFieldPrefix) {
		return 0, false
	}
	id, err := strconv.Atoi(s[len(customFieldPrefix):])
	if err != nil || id <= 0 || s[len(customFieldPrefix)] == '+' {
		return 0, false
	}
	return id, true
}

func isStandardColumn(name string) bool {
	for _, c := range emailAliases {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	for _, c := range ReadOnlyColumns {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// MapHeader maps a header row to the address column and the list's custom fields. Names are
// compared case-insensitively after trimming spaces. A custom field is named by its key,
// CustomField<id>, or by its FieldName when no other field of the list has that name.
func MapHeader(header []string, fields []Field) (*Mapping, error) {
	m := &Mapping{Columns: len(header), Email: -1, Status: -1}
	herr := &HeaderError{Fields: fields}
	byName := map[string][]Field{}
	byID := map[int]Field{}
	for _, f := range fields {
		key := strings.ToLower(strings.TrimSpace(f.Name))
		byName[key] = append(byName[key], f)
		byID[f.ID] = f
	}
	taken := map[string]int{} // target → column, to catch a target given twice
	claim := func(target string, col int, header string) bool {
		if prev, dup := taken[target]; dup {
			herr.Problems = append(herr.Problems, fmt.Sprintf("columns %d and %d (%q) both hold %s", prev+1, col+1, header, target))
			return false
		}
		taken[target] = col
		return true
	}
	for col, raw := range header {
		name := strings.TrimSpace(raw)
		switch {
		case name == "":
			herr.Problems = append(herr.Problems, fmt.Sprintf("column %d has no name", col+1))
		case !utf8.ValidString(name):
			herr.Problems = append(herr.Problems, fmt.Sprintf("column %d's name is not valid UTF-8", col+1))
		case isEmailAlias(name):
			if claim(ColumnEmail, col, name) {
				m.Email = col
			}
		case strings.EqualFold(name, ColumnStatus):
			if claim(ColumnStatus, col, name) {
				m.Status = col
				m.Ignored = append(m.Ignored, name)
			}
		case isStandardColumn(name):
			if claim(strings.ToLower(name), col, name) {
				m.Ignored = append(m.Ignored, name)
			}
		default:
			f, ok := resolveField(name, byID, byName, herr)
			if !ok {
				continue
			}
			if claim(customFieldPrefix+strconv.Itoa(f.ID), col, name) {
				m.Fields = append(m.Fields, MappedField{Column: col, Header: name, Field: f})
			}
		}
	}
	if m.Email < 0 {
		herr.Problems = append(herr.Problems, fmt.Sprintf("no address column (name one %s)", ColumnEmail))
	}
	if len(herr.Unknown) > 0 || len(herr.Problems) > 0 {
		return nil, herr
	}
	return m, nil
}

func isEmailAlias(name string) bool {
	for _, c := range emailAliases {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// resolveField finds the custom field a column names, recording why it cannot.
func resolveField(name string, byID map[int]Field, byName map[string][]Field, herr *HeaderError) (Field, bool) {
	if id, ok := parseFieldKey(name); ok {
		if f, ok := byID[id]; ok {
			return f, true
		}
	}
	switch matches := byName[strings.ToLower(name)]; len(matches) {
	case 0:
		herr.Unknown = append(herr.Unknown, name)
	case 1:
		return matches[0], true
	default:
		ids := make([]string, len(matches))
		for i, f := range matches {
			ids[i] = customFieldPrefix + strconv.Itoa(f.ID)
		}
		herr.Problems = append(herr.Problems, fmt.Sprintf("column %q names %d custom fields (%s): use one of those keys",
			name, len(matches), strings.Join(ids, ", ")))
	}
	return Field{}, false
}

// ColumnNames returns the header names export gives the custom fields, in order, so that
// sync reads them back: the field's name, or its key CustomField<id> when the name is
// empty, shared with another field, or one of the subscriber record's own columns.
func ColumnNames(fields []Field) []string {
	count := map[string]int{}
	for _, f := range fields {
		count[strings.ToLower(strings.TrimSpace(f.Name))]++
	}
	out := make([]string, len(fields))
	for i, f := range fields {
		name := strings.TrimSpace(f.Name)
		key := strings.ToLower(name)
		_, looksLikeKey := parseFieldKey(name)
		if name == "" || count[key] > 1 || isStandardColumn(name) || looksLikeKey || !utf8.ValidString(name) {
			name = customFieldPrefix + strconv.Itoa(f.ID)
		}
		out[i] = name
	}
	return out
}

// Row is a data record read through a Mapping.
type Row struct {
	// Line is the line the record starts on.
	Line int
	// Email is the address as written, without surrounding spaces; Key is it lower-cased,
	// for comparisons (the service compares addresses case-insensitively).
	Email, Key string
	// Values holds the custom-field values in Mapping.Fields order, as written.
	Values []string
	// Reject, when not empty, says why the row is rejected.
	Reject string
	// Skip reports a row whose SubscriptionStatus column says other than Subscribed.
	Skip bool
	// Malformed reports a record the CSV reader could not parse (a stray quote, say):
	// its text, and the lines it may have swallowed, name no address that can be trusted.
	Malformed bool
}

// Row reads a record. Malformed records, records with the wrong number of fields, invalid
// UTF-8 and missing or malformed addresses are rejected.
func (m *Mapping) Row(rec Record) Row {
	row := Row{Line: rec.Line}
	switch {
	case rec.Err != nil:
		row.Malformed = true
		row.Reject = "malformed line: " + rec.Err.Error()
		return row
	case len(rec.Fields) != m.Columns:
		noun := "fields"
		if len(rec.Fields) == 1 {
			noun = "field"
		}
		row.Reject = fmt.Sprintf("malformed line: %d %s, the header has %d", len(rec.Fields), noun, m.Columns)
		if m.Email < len(rec.Fields) {
			row.Email = strings.TrimSpace(rec.Fields[m.Email])
		}
		return row
	}
	row.Email = strings.TrimSpace(rec.Fields[m.Email])
	for _, f := range rec.Fields {
		if !utf8.ValidString(f) {
			row.Email = strings.ToValidUTF8(row.Email, "\uFFFD")
			row.Reject = "not valid UTF-8 (save the file as UTF-8)"
			return row
		}
	}
	switch {
	case row.Email == "":
		row.Reject = "missing email address"
		return row
	case !address.Valid(row.Email):
		row.Reject = "invalid email address"
		return row
	}
	row.Key = strings.ToLower(row.Email)
	if m.Status >= 0 && !strings.EqualFold(strings.TrimSpace(rec.Fields[m.Status]), "Subscribed") {
		row.Skip = true
	}
	if len(m.Fields) > 0 {
		row.Values = make([]string, len(m.Fields))
		for i, f := range m.Fields {
			row.Values[i] = rec.Fields[f.Column]
		}
	}
	return row
}

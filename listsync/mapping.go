package listsync

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/csvfile"
)

// Field is a custom field of the list, as list.get describes it.
type Field struct {
	// ID is the field's ID: its key is CustomField<ID>.
	ID int
	// Name is the field's FieldName.
	Name string
}

// columnStatus is the subscriber record's status column, as `sendloop export` writes it: it
// decides whether a row counts (see Mapping.Status). The address column is
// csvfile.ColumnEmail; the others are read-only and ignored.
const columnStatus = "SubscriptionStatus"

// readOnlyColumns are the subscriber record's columns that export writes after the custom
// fields and that sync ignores (SubscriptionStatus aside).
var readOnlyColumns = []string{"SubscriberID", columnStatus, "BounceType", "SubscriptionDate",
	"SubscriptionIP", "UnsubscriptionDate", "UnsubscriptionIP", "OptInDate"}

// customFieldPrefix is the service's key for a custom field: CustomField<id>.
const customFieldPrefix = "CustomField"

// MappedField is a CSV column holding a custom field.
type MappedField struct {
	// Column is the column's index in the record.
	Column int
	// Header is the column's name, as written in the header row (trimmed).
	Header string
	// Field is the custom field it holds.
	Field Field
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
	// Ignored names the columns read for nothing: the read-only ones, and those ignored
	// through HeaderOptions.
	Ignored []string

	keepSpaces bool
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

	rows bool // the header of a RowFunc or Rows source: no flags to suggest
}

// Error describes every fault of the header.
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
		if e.rows {
			parts = append(parts, fmt.Sprintf("unknown %s %s (the list's custom fields are %s)",
				strings.Replace(noun, "column", "field", 1), strings.Join(quoted, ", "), describeFields(e.Fields)))
		} else {
			parts = append(parts, fmt.Sprintf("unknown %s %s (the list's custom fields are %s; map a column with --column 'NAME=FIELD', or skip it with --ignore-column NAME or --ignore-unknown-columns)",
				noun, strings.Join(quoted, ", "), describeFields(e.Fields)))
		}
	}
	parts = append(parts, e.Problems...)
	if e.rows {
		return "listsync: source fields: " + strings.Join(parts, "; ")
	}
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
	return csvfile.IsAddressName(name) || readOnlyColumn(name) != ""
}

// readOnlyColumn returns the read-only column name names, "" when none.
func readOnlyColumn(name string) string {
	n := csvfile.NormalizeName(name)
	for _, c := range readOnlyColumns {
		if csvfile.NormalizeName(c) == n {
			return c
		}
	}
	return ""
}

// HeaderOptions tunes how a header maps to the list (CSVOptions.Header); the zero value
// maps by name, refuses unknown columns and trims values.
type HeaderOptions struct {
	// Columns map columns to targets whatever their names.
	Columns []csvfile.ColumnMap
	// Ignore names columns to ignore (each must be in the header).
	Ignore []string
	// IgnoreUnknown ignores the columns that name nothing known, unnamed ones included,
	// instead of refusing the header.
	IgnoreUnknown bool
	// KeepSpaces keeps the spaces around custom-field values (addresses are always cleaned
	// with sendloop.NormalizeAddress).
	KeepSpaces bool
}

// sameColumn compares a column's name with a name given on the command line.
func sameColumn(header, given string) bool {
	return strings.EqualFold(strings.TrimSpace(header), strings.TrimSpace(given))
}

// mapHeader maps a header row to the address column and the list's custom fields. The
// address column is any spelling of EmailAddress (compared without case, spaces, '-' and
// '_'); a custom field is named by its key, CustomField<id>, or by its FieldName
// (case-insensitively, trimmed) when no other field of the list has that name. Pass at most
// one HeaderOptions.
func mapHeader(header []string, fields []Field, opts ...HeaderOptions) (*Mapping, error) {
	var o HeaderOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	m := &Mapping{Columns: len(header), Email: -1, Status: -1, keepSpaces: o.KeepSpaces}
	herr := &HeaderError{Fields: fields}
	byName := map[string][]Field{}
	byID := map[int]Field{}
	for _, f := range fields {
		key := strings.ToLower(strings.TrimSpace(f.Name))
		byName[key] = append(byName[key], f)
		byID[f.ID] = f
	}
	// The flags must name columns of the file: a typo would otherwise do nothing.
	for _, name := range o.Ignore {
		if !slices.ContainsFunc(header, func(h string) bool { return sameColumn(h, name) }) {
			herr.Problems = append(herr.Problems, fmt.Sprintf("--ignore-column %q: the header has no such column", name))
		}
	}
	for _, c := range o.Columns {
		if !slices.ContainsFunc(header, func(h string) bool { return sameColumn(h, c.Source) }) {
			herr.Problems = append(herr.Problems, fmt.Sprintf("--column %q: the header has no column %q", c.Source+"="+c.Target, c.Source))
		}
	}
	taken := map[string]int{} // target → column, to catch a target given twice
	claim := func(target string, col int, header string) bool {
		if prev, dup := taken[target]; dup {
			herr.Problems = append(herr.Problems, fmt.Sprintf("columns %d and %d (%q) both hold %s (map one with --column or skip one with --ignore-column)",
				prev+1, col+1, header, target))
			return false
		}
		taken[target] = col
		return true
	}
	mapTo := func(col int, name, target string, explicit bool) {
		switch {
		case csvfile.IsAddressName(target):
			if claim(csvfile.ColumnEmail, col, name) {
				m.Email = col
			}
			return
		case !explicit && csvfile.NormalizeName(target) == csvfile.NormalizeName(columnStatus):
			if claim(columnStatus, col, name) {
				m.Status = col
				m.Ignored = append(m.Ignored, name)
			}
			return
		case !explicit && readOnlyColumn(target) != "":
			if claim(strings.ToLower(readOnlyColumn(target)), col, name) {
				m.Ignored = append(m.Ignored, name)
			}
			return
		}
		f, problem := resolveField(target, byID, byName)
		switch {
		case problem == "" && claim(customFieldPrefix+strconv.Itoa(f.ID), col, name):
			m.Fields = append(m.Fields, MappedField{Column: col, Header: name, Field: f})
		case problem == "":
		case explicit:
			herr.Problems = append(herr.Problems, fmt.Sprintf("--column %q: %s is neither EmailAddress nor a custom field of the list (%s)",
				name+"="+target, strconv.Quote(target), describeFields(herr.Fields)))
		case problem == errUnknown && o.IgnoreUnknown:
			m.Ignored = append(m.Ignored, name)
		case problem == errUnknown:
			herr.Unknown = append(herr.Unknown, name)
		default:
			herr.Problems = append(herr.Problems, problem)
		}
	}
	for col, raw := range header {
		name := strings.TrimSpace(raw)
		if slices.ContainsFunc(o.Ignore, func(g string) bool { return sameColumn(raw, g) }) {
			m.Ignored = append(m.Ignored, name)
			continue
		}
		if i := slices.IndexFunc(o.Columns, func(c csvfile.ColumnMap) bool { return sameColumn(raw, c.Source) }); i >= 0 {
			mapTo(col, name, o.Columns[i].Target, true)
			continue
		}
		switch {
		case name == "" && o.IgnoreUnknown:
		case name == "":
			herr.Problems = append(herr.Problems, fmt.Sprintf("column %d has no name", col+1))
		case !utf8.ValidString(name):
			herr.Problems = append(herr.Problems, fmt.Sprintf("column %d's name is not valid UTF-8", col+1))
		default:
			mapTo(col, name, name, false)
		}
	}
	if m.Email < 0 {
		herr.Problems = append(herr.Problems, fmt.Sprintf("no address column (name one %s, or map one with --column 'NAME=%s')", csvfile.ColumnEmail, csvfile.ColumnEmail))
	}
	if len(herr.Unknown) > 0 || len(herr.Problems) > 0 {
		return nil, herr
	}
	return m, nil
}

// errUnknown is resolveField's problem for a name that matches no field.
const errUnknown = "unknown"

// resolveField finds the custom field a name designates, or says why it cannot: errUnknown,
// or the fields it is ambiguous between.
func resolveField(name string, byID map[int]Field, byName map[string][]Field) (Field, string) {
	if id, ok := parseFieldKey(name); ok {
		if f, ok := byID[id]; ok {
			return f, ""
		}
	}
	switch matches := byName[strings.ToLower(strings.TrimSpace(name))]; len(matches) {
	case 0:
		return Field{}, errUnknown
	case 1:
		return matches[0], ""
	default:
		ids := make([]string, len(matches))
		for i, f := range matches {
			ids[i] = customFieldPrefix + strconv.Itoa(f.ID)
		}
		return Field{}, fmt.Sprintf("column %q names %d custom fields (%s): use one of those keys",
			name, len(matches), strings.Join(ids, ", "))
	}
}

// ExportHeader returns the header `sendloop export` writes for a list of fields, so that a
// sync reads it back: EmailAddress; each custom field, in order, by its name, or by its key
// CustomField<id> when the name is empty, shared with another field, or one of the
// subscriber record's own columns; then the record's read-only columns (SubscriberID,
// SubscriptionStatus, BounceType, …), which a sync ignores, SubscriptionStatus aside.
func ExportHeader(fields []Field) []string {
	out := append([]string{csvfile.ColumnEmail}, columnNames(fields)...)
	return append(out, readOnlyColumns...)
}

// columnNames returns the header names of fields, as ExportHeader writes them.
func columnNames(fields []Field) []string {
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

// MappedRow is a row read through a Mapping: what the plan and its events carry. Rows of
// any Source become MappedRows.
type MappedRow struct {
	// Line is the line the record starts on.
	Line int
	// Email is the address as written, without surrounding spaces; Key is it lower-cased,
	// for comparisons (the service compares addresses case-insensitively). Email is empty
	// for a Malformed record: nothing in it can be trusted; for a record of the wrong
	// length it is the field Raw names, if that is an address.
	Email, Key string
	// Raw is the address as written, for the user to find the row, by csvfile.RecordAddress.Raw's
	// rule; for a row of a RowFunc or Rows source, the address as given.
	Raw string
	// Values holds the custom-field values in Mapping.Fields order, as written, without
	// surrounding spaces unless HeaderOptions.KeepSpaces.
	Values []string
	// Reject, when not empty, says why the row is rejected.
	Reject string
	// Skip reports a row whose SubscriptionStatus column says other than Subscribed.
	Skip bool
	// Protect lists, lower-cased, the fields of a record of the wrong number of fields that
	// are valid addresses: a stray comma shifts the address out of its column, and the
	// member any of them names must not be taken for missing from the file.
	Protect []string
	// Malformed reports a record the CSV reader could not parse (a stray quote, say):
	// its text, and the lines it may have swallowed, name no address that can be trusted.
	Malformed bool
}

// Row reads a record through the mapping. Malformed records, records with the wrong number
// of fields, invalid UTF-8 and missing or malformed addresses are rejected, by
// csvfile.Record.Address's rule.
func (m *Mapping) Row(rec csvfile.Record) MappedRow { return m.row(rec, nil) }

// row is Row with the values in values' array when it has room: the plan's pass, which
// keeps only their fingerprint, reuses one array for every row.
func (m *Mapping) row(rec csvfile.Record, values []string) MappedRow {
	a := rec.Address(m.Email, m.Columns)
	row := MappedRow{Line: rec.Line, Email: a.Address, Raw: a.Raw, Reject: a.Reject, Protect: a.Protect, Malformed: a.Malformed}
	if row.Reject != "" {
		return row
	}
	row.Key = strings.ToLower(row.Email)
	if m.Status >= 0 && !strings.EqualFold(strings.TrimSpace(rec.Fields[m.Status]), "Subscribed") {
		row.Skip = true
	}
	if len(m.Fields) > 0 {
		if cap(values) >= len(m.Fields) {
			row.Values = values[:len(m.Fields)]
		} else {
			row.Values = make([]string, len(m.Fields))
		}
		for i, f := range m.Fields {
			v := rec.Fields[f.Column]
			if !m.keepSpaces {
				v = strings.TrimSpace(v)
			}
			row.Values[i] = v
		}
	}
	return row
}

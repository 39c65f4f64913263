package listsync

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/address"
)

// Field is a custom field of the list, as list.get describes it.
type Field struct {
	// ID is the field's ID: its key is CustomField<ID>.
	ID int
	// Name is the field's FieldName.
	Name string
}

// The subscriber record's own columns, as `sendloop export` writes them. EmailAddress is the
// one sync reads; SubscriptionStatus decides whether a row counts (see Mapping.Status); the
// others are read-only and ignored.
const (
	ColumnEmail  = "EmailAddress"
	ColumnStatus = "SubscriptionStatus"
)

// ReadOnlyColumns returns the subscriber record's columns that export writes after the
// custom fields and that sync ignores (SubscriptionStatus aside), in that order: a new
// slice each time.
func ReadOnlyColumns() []string { return slices.Clone(readOnlyColumns) }

var readOnlyColumns = []string{"SubscriberID", ColumnStatus, "BounceType", "SubscriptionDate",
	"SubscriptionIP", "UnsubscriptionDate", "UnsubscriptionIP", "OptInDate"}

// emailAliases are the header names read as the address column, compared as normalizeName
// leaves them: EmailAddress, "Email Address", E-mail, email_address, Mail, …
var emailAliases = []string{"emailaddress", "email", "mail", "emailaddr", "mailaddress", "emailid"}

// normalizeName folds a column name for comparing the subscriber record's own names: lower
// case, without spaces, '-', '_' or '.'.
func normalizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.', '\t', '\u00a0':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

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
	return isEmailAlias(name) || readOnlyColumn(name) != ""
}

// readOnlyColumn returns the read-only column name names, "" when none.
func readOnlyColumn(name string) string {
	n := normalizeName(name)
	for _, c := range readOnlyColumns {
		if normalizeName(c) == n {
			return c
		}
	}
	return ""
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

// HeaderOptions tunes MapHeader; the zero value maps by name, refuses unknown columns and
// trims values.
type HeaderOptions struct {
	// Columns map columns to targets whatever their names.
	Columns []ColumnMap
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

// MapHeader maps a header row to the address column and the list's custom fields. The
// address column is any spelling of EmailAddress (compared without case, spaces, '-' and
// '_'); a custom field is named by its key, CustomField<id>, or by its FieldName
// (case-insensitively, trimmed) when no other field of the list has that name. Pass at most
// one HeaderOptions.
func MapHeader(header []string, fields []Field, opts ...HeaderOptions) (*Mapping, error) {
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
		case isEmailAlias(target):
			if claim(ColumnEmail, col, name) {
				m.Email = col
			}
			return
		case !explicit && normalizeName(target) == normalizeName(ColumnStatus):
			if claim(ColumnStatus, col, name) {
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
		if i := slices.IndexFunc(o.Columns, func(c ColumnMap) bool { return sameColumn(raw, c.Source) }); i >= 0 {
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
		herr.Problems = append(herr.Problems, fmt.Sprintf("no address column (name one %s, or map one with --column 'NAME=%s')", ColumnEmail, ColumnEmail))
	}
	if len(herr.Unknown) > 0 || len(herr.Problems) > 0 {
		return nil, herr
	}
	return m, nil
}

func isEmailAlias(name string) bool {
	n := normalizeName(name)
	for _, c := range emailAliases {
		if n == c {
			return true
		}
	}
	return false
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
	// Raw is the address as written, for the user to find the row: the address cell
	// untrimmed; for a record of the wrong length, the field that is an address (the
	// address column's if it is one) or else the line itself; for a Malformed record, the
	// address column of its first line split plainly, or failing that the line itself (at
	// most 1 KiB), or "(line N)" when the line lies beyond what the reader can see or
	// holds only spaces. Never "" for a rejected row, except one whose address cell is empty.
	// Invalid UTF-8 shows as U+FFFD.
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

// Row reads a record through the mapping. Malformed records, records with the wrong number of fields, invalid
// UTF-8 and missing or malformed addresses are rejected.
func (m *Mapping) Row(rec Record) MappedRow { return m.row(rec, nil) }

// row is Row with the values in values' array when it has room: the plan's pass, which
// keeps only their fingerprint, reuses one array for every row.
func (m *Mapping) row(rec Record, values []string) MappedRow {
	row := MappedRow{Line: rec.Line}
	switch {
	case rec.Err != nil:
		row.Malformed = true
		row.Reject = "malformed line: " + rec.Err.Error()
		row.Raw = m.rawFromText(rec)
		if strings.TrimSpace(row.Raw) == "" {
			// No text to show (the reader keeps every malformed record's): say where it is.
			row.Raw = fmt.Sprintf("(line %d)", rec.Line)
		}
		return row
	case len(rec.Fields) != m.Columns:
		noun := "fields"
		if len(rec.Fields) == 1 {
			noun = "field"
		}
		row.Reject = fmt.Sprintf("malformed line: %d %s, the header has %d", len(rec.Fields), noun, m.Columns)
		// A stray comma shifts the address out of its column: which field was meant is
		// unknown, so every field that is an address names the row (and its member stays);
		// the address column's, if it is one, else the first, is the row's address.
		for i, f := range rec.Fields {
			v := sendloop.NormalizeAddress(f)
			if !address.Valid(v) {
				continue
			}
			if row.Email == "" || i == m.Email {
				row.Email, row.Raw = v, f
			}
			if k := strings.ToLower(v); !slices.Contains(row.Protect, k) {
				row.Protect = append(row.Protect, k)
			}
		}
		if row.Email == "" {
			row.Raw = rec.Text
			if row.Raw == "" {
				row.Raw = strings.ToValidUTF8(strings.Join(rec.Fields, string(rec.comma)), "\uFFFD")
			}
			if strings.TrimSpace(row.Raw) == "" {
				row.Raw = fmt.Sprintf("(line %d)", rec.Line) // a line of spaces: show where it is
			}
		}
		return row
	}
	row.Raw = rec.Fields[m.Email]
	row.Email = sendloop.NormalizeAddress(rec.Fields[m.Email])
	for _, f := range rec.Fields {
		if !utf8.ValidString(f) {
			row.Email = strings.ToValidUTF8(row.Email, "\uFFFD")
			row.Raw = strings.ToValidUTF8(row.Raw, "\uFFFD")
			row.Reject = "not valid UTF-8 (save the file as UTF-8, or name its encoding with --encoding, e.g. windows-1252)"
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

// rawFromText reads the address column from the first line of a record the CSV reader
// could not parse: split as CSV with quotes tolerated when that gives the header's number of
// fields, else split at every delimiter; failing that, the line.
func (m *Mapping) rawFromText(rec Record) string {
	if rec.comma == 0 || rec.Text == "" {
		return rec.Text
	}
	cr := csv.NewReader(strings.NewReader(rec.Text))
	cr.Comma, cr.LazyQuotes, cr.FieldsPerRecord = rec.comma, true, -1
	fields, err := cr.Read()
	if err != nil || len(fields) != m.Columns {
		fields = strings.Split(rec.Text, string(rec.comma))
	}
	if m.Email < len(fields) {
		if v := strings.Trim(fields[m.Email], " \t\""); v != "" {
			return strings.ToValidUTF8(v, "\uFFFD")
		}
	}
	return rec.Text
}

package mailmerge

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/go-sendloop/sendloop/csvfile"
)

// FileOptions says how File reads a CSV file.
type FileOptions struct {
	// Read is the encoding and delimiter (detected when zero).
	Read csvfile.ReadOptions
	// Columns renames columns (a name with spaces becomes a merge variable) or names the
	// address column (Target EmailAddress).
	Columns []csvfile.ColumnMap
}

// ColumnNameError reports a column whose name cannot be a merge variable.
type ColumnNameError struct {
	// Path is the file, Column the column's name as written.
	Path, Column string
	// Suggest is a name it could be renamed to.
	Suggest string
}

// Error implements the error interface.
func (e *ColumnNameError) Error() string {
	return fmt.Sprintf("%s: column %q cannot be a merge variable: rename it, e.g. to %s", e.Path, e.Column, e.Suggest)
}

// fileSource reads a CSV file: its address column, and every other column as a merge
// variable under its name (renamed by FileOptions.Columns). The address is a merge
// variable too, under its column's name, when that name can be one ({{email}}).
type fileSource struct {
	path     string
	opts     FileOptions
	addrCol  int
	addrName string
	names    map[string]string // header name (trimmed) → merge-variable name
	columns  []string
}

// File returns the source of the CSV file at path, read as `sendloop sync` reads it. It
// reads the header now, and refuses a file without an address column or with a column
// whose name cannot be a merge variable (*ColumnNameError).
func File(path string, opts FileOptions) (Source, error) {
	r, err := csvfile.Open(path, opts.Read)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	addrCol, err := csvfile.AddressColumn(r.Header, opts.Columns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rename := map[string]string{}
	for _, m := range opts.Columns {
		rename[strings.ToLower(strings.TrimSpace(m.Source))] = m.Target
	}
	s := &fileSource{path: path, opts: opts, addrCol: addrCol, names: map[string]string{}}
	for i, h := range r.Header {
		h = strings.TrimSpace(h)
		if i == addrCol {
			if ValidName(h) {
				s.addrName = h
				s.columns = append(s.columns, h)
			}
			continue
		}
		name := h
		if t, ok := rename[strings.ToLower(h)]; ok {
			name = t
		}
		if !ValidName(name) {
			return nil, &ColumnNameError{Path: path, Column: h, Suggest: SuggestName(h)}
		}
		s.names[h] = name
		s.columns = append(s.columns, name)
	}
	return s, nil
}

// SuggestName makes a merge-variable name out of a column's name: spaces and other
// characters become underscores.
func SuggestName(h string) string {
	var b strings.Builder
	for _, r := range h {
		if r < 0x80 && ValidName(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (s *fileSource) Columns() []string { return append([]string(nil), s.columns...) }

func (s *fileSource) Rows(context.Context) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		r, err := csvfile.Open(s.path, s.opts.Read)
		if err != nil {
			yield(Row{}, err)
			return
		}
		defer r.Close()
		for rec, err := range r.Named(s.addrCol) {
			// The context does not stop the reading: rows after an interruption are still
			// counted, as not attempted.
			if err != nil {
				yield(Row{}, err)
				return
			}
			row := Row{Line: rec.Line, Address: rec.Address, Raw: rec.Raw, Reject: rec.Reject}
			if rec.Reject == "" {
				row.Values = make(map[string]string, len(rec.Columns)+1)
				if s.addrName != "" {
					row.Values[s.addrName] = rec.Address
				}
				for h, v := range rec.Columns {
					row.Values[s.names[h]] = v
				}
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

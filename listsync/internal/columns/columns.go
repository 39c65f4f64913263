// Package columns maps the named columns of a source that is not a CSV file (a query's
// result, the keys of JSON Lines objects) to the address and the field keys that
// listsync.RowFunc takes, by the rules of a CSV header: the address column by any usual
// spelling of EmailAddress, the others by name, HeaderOptions.Columns and .Ignore as
// --column and --ignore-column give them.
package columns

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/listsync"
)

// Layout is where a row's address and fields are among its columns.
type Layout struct {
	// Email is the address column's index.
	Email int
	// Fields are the field keys, for listsync.RowFunc: a column's name, or the target
	// --column gives it.
	Fields []string
	// Columns[i] is the index of the column holding Fields[i].
	Columns []int
}

// Map maps the columns named names. The list's fields are not known here (a source learns
// them only when the sync reads the list), so a name that is no field of the list rejects
// the sync when it maps the source, as a CSV header's would: HeaderOptions.IgnoreUnknown
// cannot be honoured and is refused, as KeepSpaces is (RowFunc's values are trimmed).
func Map(names []string, opts listsync.HeaderOptions) (*Layout, error) {
	var problems []string
	if opts.IgnoreUnknown {
		problems = append(problems, "ignoring unknown columns (--ignore-unknown-columns) is for CSV files: leave the columns out, or name them with --ignore-column")
	}
	if opts.KeepSpaces {
		problems = append(problems, "keeping spaces around values (--keep-spaces) is for CSV files")
	}
	same := func(a, b string) bool { return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) }
	for _, name := range opts.Ignore {
		if !slices.ContainsFunc(names, func(n string) bool { return same(n, name) }) {
			problems = append(problems, fmt.Sprintf("--ignore-column %q: the source has no such column", name))
		}
	}
	for _, c := range opts.Columns {
		if !slices.ContainsFunc(names, func(n string) bool { return same(n, c.Source) }) {
			problems = append(problems, fmt.Sprintf("--column %q: the source has no column %q", c.Source+"="+c.Target, c.Source))
		}
	}
	l := &Layout{Email: -1}
	taken := map[string]int{} // lower-cased key → column
	for col, raw := range names {
		name := strings.TrimSpace(raw)
		if slices.ContainsFunc(opts.Ignore, func(g string) bool { return same(raw, g) }) {
			continue
		}
		target := name
		if i := slices.IndexFunc(opts.Columns, func(c csvfile.ColumnMap) bool { return same(raw, c.Source) }); i >= 0 {
			target = strings.TrimSpace(opts.Columns[i].Target)
		}
		if target == "" {
			problems = append(problems, fmt.Sprintf("column %d has no name", col+1))
			continue
		}
		key := strings.ToLower(target)
		if csvfile.IsAddressName(target) {
			key = strings.ToLower(csvfile.ColumnEmail)
		}
		if prev, dup := taken[key]; dup {
			problems = append(problems, fmt.Sprintf("columns %q and %q both hold %s (map one with --column or skip one with --ignore-column)",
				strings.TrimSpace(names[prev]), name, target))
			continue
		}
		taken[key] = col
		if csvfile.IsAddressName(target) {
			l.Email = col
			continue
		}
		l.Fields = append(l.Fields, target)
		l.Columns = append(l.Columns, col)
	}
	if l.Email < 0 && len(names) > 0 {
		problems = append(problems, fmt.Sprintf("no address column (name one %s, email or e-mail, or map one with --column 'NAME=%s')", csvfile.ColumnEmail, csvfile.ColumnEmail))
	}
	if len(names) == 0 {
		problems = append(problems, "the source has no columns")
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return l, nil
}

// Parts returns copies of the layout's address index, field names and field columns, or
// -1 and nils for a nil layout (a source not mapped yet).
func (l *Layout) Parts() (email int, fields []string, cols []int) {
	if l == nil {
		return -1, nil, nil
	}
	return l.Email, append([]string(nil), l.Fields...), append([]int(nil), l.Columns...)
}

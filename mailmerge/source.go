package mailmerge

import (
	"context"
	"iter"
	"regexp"
	"slices"
)

// Row is one recipient of a source.
type Row struct {
	// Line is the line of the file the row starts on, from 1; 0 for a source without
	// lines (the row's index, from 1, names it then).
	Line int
	// Address is the recipient's address, without surrounding spaces.
	Address string
	// Raw is the address as written, to name a rejected row; Address when empty.
	Raw string
	// Values holds the row's merge variables by name (a column's name after renames).
	Values map[string]string
	// Reject, when not empty, says why the source cannot use the row (malformed, no
	// address): the row is rejected with this reason.
	Reject string
	// Key, when not empty, is the row's key in the journal instead of its lower-cased
	// address: OpenList's rows are keyed by subscriber ID, so that a member whose address
	// changes between two runs is not sent twice. Duplicates and shards go by the key.
	Key string
	// NotSubscribed, when not empty, says why the row's recipient is a member of the
	// send's list who is not Subscribed ("unsubscribed from list 7"): OpenList's rows carry
	// it. The row gets the fate job.NotSubscribed unless Options.IncludeNotSubscribed.
	NotSubscribed string
}

// Source is where the recipients come from: File, RowFunc or Rows.
type Source interface {
	// Columns returns the names of the merge variables every row may hold.
	Columns() []string
	// Rows yields the rows from the first; it is called once per pass (a check, a preview,
	// a send), and a read error ends the pass.
	Rows(ctx context.Context) iter.Seq2[Row, error]
}

// mergeName is what a column or variable name must look like to be a merge variable.
var mergeName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// ValidName reports whether name can be a merge variable: letters, digits, '_', '.' and
// '-'.
func ValidName(name string) bool { return mergeName.MatchString(name) }

// RowFunc returns a source whose rows come from rows, called once per pass; columns names
// the merge variables its rows hold.
func RowFunc(columns []string, rows func(ctx context.Context) iter.Seq2[Row, error]) Source {
	return funcSource{columns: slices.Clone(columns), rows: rows}
}

// Rows returns a source of rows held in memory; columns names the merge variables they
// hold.
func Rows(columns []string, rows []Row) Source {
	return RowFunc(columns, func(context.Context) iter.Seq2[Row, error] {
		return func(yield func(Row, error) bool) {
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		}
	})
}

type funcSource struct {
	columns []string
	rows    func(ctx context.Context) iter.Seq2[Row, error]
}

func (s funcSource) Columns() []string                              { return slices.Clone(s.columns) }
func (s funcSource) Rows(ctx context.Context) iter.Seq2[Row, error] { return s.rows(ctx) }

package listsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/go-sendloop/sendloop/csvfile"
)

// Row is a subscriber as a Source gives it.
type Row struct {
	// Line is the row's position, for reports (for a CSV file, the first physical line of
	// its record). Zero numbers the rows 1, 2, 3, … in the order the source yields them;
	// otherwise it must increase from row to row, up to 4294967295.
	Line int
	// Email is the address; spaces around it are trimmed, and addresses are compared
	// case-insensitively.
	Email string
	// Fields holds the custom-field values, keyed as the source's fields are named: by the
	// field's name (case-insensitively) or its key CustomField<id>. A field of the source
	// that a row leaves out is empty, as an empty CSV cell is: it empties the member's
	// value. A key the source does not name rejects the row.
	Fields map[string]string
}

// Source is where a sync's rows come from: a CSV file (OpenCSV), rows yielded by a function
// (RowFunc), or rows held in memory (Rows). A source is read once to plan and again to
// apply the plan, so it must yield the same rows in the same order each time it is read:
// see the package documentation.
type Source interface {
	// mapping maps the source's columns to the list's custom fields.
	mapping(fields []Field) (*Mapping, error)
	// open starts a reading of the source through m.
	open(ctx context.Context, m *Mapping) (pass, error)
}

// pass is one reading of a source, record by record.
type pass interface {
	// next moves to the next record and returns its line; io.EOF after the last one.
	next() (int, error)
	// row reads the current record through the mapping.
	row() MappedRow
	// scratchRow is row with Values valid only until the next call to next: for the plan,
	// which keeps only their fingerprint.
	scratchRow() MappedRow
	// offset says how far the pass has read: bytes of a file, or rows.
	offset() int64
	close()
}

// opener starts a pass.
type opener func() (pass, error)

// RowFunc returns a Source whose rows come from rows, called each time the source is read
// (to plan, to apply, to trace the rows the service refused): a database query run again,
// a file decoded again. fields names the custom fields the rows give (by name or
// CustomField<id>): the fields the sync compares and sets; the others are left alone.
func RowFunc(fields []string, rows func(ctx context.Context) iter.Seq2[Row, error]) Source {
	return &funcSource{fields: slices.Clone(fields), rows: rows}
}

// Rows returns a Source of rows held in memory. Its fields are the keys of the rows'
// Fields, in the order they first appear.
func Rows(rows []Row) Source {
	var fields []string
	seen := map[string]bool{}
	for _, r := range rows {
		keys := make([]string, 0, len(r.Fields))
		for k := range r.Fields {
			if !seen[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys) // a map's order is random: sorted within a row
		for _, k := range keys {
			seen[k] = true
			fields = append(fields, k)
		}
	}
	return &funcSource{fields: fields, rows: func(context.Context) iter.Seq2[Row, error] {
		return func(yield func(Row, error) bool) {
			for _, r := range rows {
				if !yield(r, nil) {
					return
				}
			}
		}
	}}
}

type funcSource struct {
	fields []string
	rows   func(ctx context.Context) iter.Seq2[Row, error]
}

func (s *funcSource) mapping(fields []Field) (*Mapping, error) {
	m, err := mapHeader(append([]string{csvfile.ColumnEmail}, s.fields...), fields)
	var herr *HeaderError
	if errors.As(err, &herr) {
		herr.rows = true
	}
	return m, err
}

func (s *funcSource) open(ctx context.Context, m *Mapping) (pass, error) {
	next, stop := iter.Pull2(s.rows(ctx))
	known := make(map[string]bool, len(s.fields))
	for _, f := range s.fields {
		known[f] = true
	}
	return &rowPass{m: m, fields: s.fields, known: known, pull: next, stop: stop}, nil
}

// rowPass reads the rows of a funcSource as records: the address, then the fields.
type rowPass struct {
	m      *Mapping
	fields []string
	known  map[string]bool
	pull   func() (Row, error, bool)
	stop   func()
	cur    Row
	n      int // rows read
	line   int // the current row's line
	rec    []string
}

func (p *rowPass) next() (int, error) {
	r, err, ok := p.pull()
	switch {
	case !ok:
		return 0, io.EOF
	case err != nil:
		return 0, fmt.Errorf("reading the source: %w", err)
	}
	p.n++
	line := r.Line
	if line == 0 {
		line = p.n
	}
	if int64(line) > math.MaxUint32 { // the plan keeps a line in 32 bits
		return 0, fmt.Errorf("reading the source: row %d has Line %d: lines go up to %d", p.n, line, uint32(math.MaxUint32))
	}
	if line <= p.line {
		return 0, fmt.Errorf("reading the source: row %d has Line %d, after a row with Line %d: lines must increase", p.n, line, p.line)
	}
	p.cur, p.line = r, line
	return line, nil
}

func (p *rowPass) scratchRow() MappedRow { return p.row() }

func (p *rowPass) row() MappedRow {
	p.rec = append(p.rec[:0], p.cur.Email)
	for _, f := range p.fields {
		p.rec = append(p.rec, p.cur.Fields[f])
	}
	row := p.m.Row(csvfile.Record{Line: p.line, Fields: p.rec})
	if row.Reject == "" && len(p.cur.Fields) > 0 {
		var unknown []string
		for k := range p.cur.Fields {
			if !p.known[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			row.Reject = fmt.Sprintf("unknown field %s (the source's fields are %s)", strings.Join(quoteAll(unknown), ", "), strings.Join(quoteAll(p.fields), ", "))
		}
	}
	return row
}

func (p *rowPass) offset() int64 { return int64(p.n) }

func (p *rowPass) close() { p.stop() }

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

package listsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-sendloop/sendloop/csvfile"
)

// CSVOptions says how OpenCSV reads a file and maps its columns; the zero value detects the
// encoding and the delimiter, maps columns by name, refuses unknown columns and trims values.
type CSVOptions struct {
	// Read says how the file is read: its encoding and delimiter.
	Read csvfile.ReadOptions
	// Header says how its columns map to the address and the custom fields.
	Header HeaderOptions
}

// CSVFile is a Source reading a CSV file: the rows of `sendloop sync --csv`. It is read
// once to plan and again to apply; each reading refuses the file if its size or
// modification time changed since OpenCSV, and a line that no longer holds the address
// planned for it is rejected with ReasonFileChanged.
type CSVFile struct {
	// Path is the file's path.
	Path string
	// Header is the header row, as written.
	Header []string
	// Comma is the delimiter, detected or given.
	Comma rune
	// Encoding is the encoding the file is read in (one of csvfile.Encodings()).
	Encoding string
	// BOM reports whether the file begins with a byte-order mark.
	BOM bool
	// SepLine reports an Excel "sep=X" first line.
	SepLine bool

	opts CSVOptions
	info os.FileInfo
}

// OpenCSV reads the header of a CSV file and returns it as a Source. The file is not kept
// open: each reading opens it again.
func OpenCSV(path string, opts CSVOptions) (*CSVFile, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	r, err := csvfile.Open(path, opts.Read)
	if err != nil {
		return nil, err
	}
	r.Close()
	return &CSVFile{Path: path, Header: r.Header, Comma: r.Comma, Encoding: r.Encoding, BOM: r.BOM, SepLine: r.SepLine,
		opts: opts, info: info}, nil
}

// Reopen opens the file again for reading, and refuses it if its size or modification time
// is not what they were at OpenCSV: the plan's decisions are by line.
func (f *CSVFile) Reopen() (*csvfile.Reader, error) {
	r, err := csvfile.Open(f.Path, f.opts.Read)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(f.Path)
	if err == nil && (info.Size() != f.info.Size() || !info.ModTime().Equal(f.info.ModTime())) {
		err = fmt.Errorf("%s changed during the sync (its size or modification time differs); nothing more was read from it: run the sync again", f.Path)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// CountRecords counts the file's data records, malformed ones included, without mapping
// them: the rows a sync stopped before its plan did not reach.
func (f *CSVFile) CountRecords() (int, error) {
	r, err := f.Reopen()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for n := 0; ; n++ {
		if _, err := r.Read(); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
	}
}

func (f *CSVFile) mapping(fields []Field) (*Mapping, error) {
	return mapHeader(f.Header, fields, f.opts.Header)
}

func (f *CSVFile) open(_ context.Context, m *Mapping) (pass, error) {
	r, err := f.Reopen()
	if err != nil {
		return nil, err
	}
	return &csvPass{r: r, m: m}, nil
}

// csvPass reads a CSV file's records.
type csvPass struct {
	r      *csvfile.Reader
	m      *Mapping
	rec    csvfile.Record
	values []string // scratchRow's Values
}

func (p *csvPass) next() (int, error) {
	rec, err := p.r.Read()
	if errors.Is(err, io.EOF) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("reading the CSV: %w", err)
	}
	p.rec = rec
	return rec.Line, nil
}

func (p *csvPass) row() MappedRow { return p.m.Row(p.rec) }

func (p *csvPass) scratchRow() MappedRow {
	row := p.m.row(p.rec, p.values)
	if row.Values != nil {
		p.values = row.Values
	}
	return row
}

func (p *csvPass) offset() int64 { return p.r.Offset() }

func (p *csvPass) close() { p.r.Close() }

// readerPass reads records from a Reader already open (the tests').
func readerPass(r *csvfile.Reader, m *Mapping) pass { return &csvPass{r: r, m: m} }

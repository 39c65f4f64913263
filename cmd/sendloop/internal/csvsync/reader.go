// Package csvsync reads the CSV files of `sendloop sync` and plans the changes that bring a
// list in step with one: which addresses to add, which subscribers to update or unsubscribe,
// and which rows to reject, with why.
//
// It holds the list's members and a few bytes per CSV row for the duplicate check, never
// the rows themselves: the file is read once to plan (twice when it repeats addresses that
// are new to the list) and once more to stream the additions.
package csvsync

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
)

// bom is the UTF-8 byte-order mark that spreadsheet programs put before the header.
var bom = []byte{0xEF, 0xBB, 0xBF}

// headPeek is how much of the file is examined to find the header line's delimiter.
const headPeek = 64 << 10

// ErrNoHeader is returned for a file with no header row.
var ErrNoHeader = errors.New("the CSV file is empty: it needs a header row")

// Reader reads a subscriber CSV: an optional UTF-8 byte-order mark, a header row, then one
// record per subscriber. The delimiter (comma, semicolon or tab) is detected from the
// header line.
type Reader struct {
	// Comma is the detected delimiter.
	Comma rune
	// BOM reports whether the file began with a UTF-8 byte-order mark.
	BOM bool
	// Header is the header row, as written.
	Header []string

	cr     *csv.Reader
	closer io.Closer
	skip   int64 // bytes before the CSV data (the BOM)
}

// Record is a data record of the file.
type Record struct {
	// Line is the line the record starts on, from 1 (the header's line).
	Line int
	// Fields holds the record's fields; the slice is reused by the next Read.
	Fields []string
	// Err, when set, says why the record is malformed (an encoding/csv parse error such as
	// a stray quote); Fields is then nil.
	Err error
}

// Open opens a CSV file and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the byte-order mark, the delimiter and the header row from r.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, headPeek)
	out := &Reader{Comma: ','}
	if head, _ := br.Peek(len(bom)); bytes.Equal(head, bom) {
		_, _ = br.Discard(len(bom))
		out.BOM, out.skip = true, int64(len(bom))
	}
	head, err := br.Peek(headPeek)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	out.Comma = DetectComma(head)
	out.cr = csv.NewReader(br)
	out.cr.Comma = out.Comma
	out.cr.FieldsPerRecord = -1 // a record of the wrong length is rejected by the caller, with its line
	out.cr.ReuseRecord = true
	header, err := out.cr.Read()
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return nil, ErrNoHeader
	case errors.As(err, &pe):
		return nil, fmt.Errorf("the header row is malformed: %w", pe.Err)
	case err != nil:
		return nil, err
	}
	out.Header = append([]string(nil), header...)
	return out, nil
}

// DetectComma returns the delimiter of the first line of head: whichever of ',', ';' and
// tab occurs most often outside quotes, ',' on a tie or when none does.
func DetectComma(head []byte) rune {
	counts := map[byte]int{}
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' || c == '\r' {
			break
		}
		if c == ',' || c == ';' || c == '\t' {
			counts[c]++
		}
	}
	best := byte(',')
	for _, c := range []byte{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return rune(best)
}

// Read returns the next record, or io.EOF after the last one. A malformed record is
// returned with its Err set, and reading goes on after it; any other error ends the file.
func (r *Reader) Read() (Record, error) {
	fields, err := r.cr.Read()
	if err == nil {
		line, _ := r.cr.FieldPos(0)
		return Record{Line: line, Fields: fields}, nil
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) && pe.Err != nil {
		if pe.StartLine != pe.Line {
			return Record{Line: pe.StartLine, Err: fmt.Errorf("%w (lines %d to %d)", pe.Err, pe.StartLine, pe.Line)}, nil
		}
		return Record{Line: pe.StartLine, Err: pe.Err}, nil
	}
	return Record{}, err
}

// Offset returns how many bytes of the file have been read, byte-order mark included.
func (r *Reader) Offset() int64 { return r.skip + r.cr.InputOffset() }

// Close closes the file Open opened; it does nothing for a NewReader.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

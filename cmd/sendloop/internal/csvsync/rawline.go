package csvsync

import (
	"bufio"
	"os"
	"strings"
)

// maxRawText is the most of a malformed line that RawLines returns.
const maxRawText = 200

// RawLines reads a file's physical lines forward, to report a malformed record (one the CSV
// reader could not parse, so it has no fields) with the text its address column holds as
// written. Ask for lines in increasing order: it never goes back.
type RawLines struct {
	f    *os.File
	sc   *bufio.Scanner
	line int
	err  error
}

// OpenRawLines opens path for RawLines.
func OpenRawLines(path string) (*RawLines, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &RawLines{f: f, sc: sc}, nil
}

// Field returns the text of column col of physical line n, split naively on comma (quotes
// are what made the record malformed), or the start of the line when it has fewer columns;
// "" once the file cannot be read or n has gone by.
func (r *RawLines) Field(n, col int, comma rune) string {
	for r.err == nil && r.line < n {
		if !r.sc.Scan() {
			r.err = r.sc.Err()
			if r.err == nil {
				r.err = os.ErrNotExist
			}
			return ""
		}
		r.line++
	}
	if r.line != n {
		return ""
	}
	text := strings.TrimPrefix(r.sc.Text(), "\uFEFF")
	if fields := strings.Split(text, string(comma)); col < len(fields) && strings.TrimSpace(fields[col]) != "" {
		text = fields[col]
	}
	if len(text) > maxRawText {
		text = strings.ToValidUTF8(text[:maxRawText], "") + "…"
	}
	return strings.ToValidUTF8(text, "\uFFFD")
}

// Close closes the file.
func (r *RawLines) Close() error { return r.f.Close() }

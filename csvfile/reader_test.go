package csvfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDetectComma(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want rune
	}{
		{"EmailAddress,Name\n", ','},
		{"EmailAddress;Name;Plan\n", ';'},
		{"EmailAddress\tName\n", '\t'},
		{"EmailAddress\n", ','},
		{"", ','},
		{`"Last, First";EmailAddress` + "\n", ';'},
		{`"a;b;c",EmailAddress` + "\n", ','},
		{"EmailAddress;Name\nann@example.com,x,y,z,w\n", ';'}, // only the first line counts
		{"EmailAddress;Name\r\nx,y,z\r\n", ';'},
		{"a,b;c\n", ','}, // a tie goes to the comma
		{"a;b\tc\n", ';'},
	}
	for _, tt := range tests {
		if got := DetectComma([]byte(tt.head)); got != tt.want {
			t.Errorf("DetectComma(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

func TestNewReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		comma         rune
		bom           bool
		header        []string
		err           string
	}{
		{"plain", "EmailAddress,Name\n", ',', false, []string{"EmailAddress", "Name"}, ""},
		{"byte-order mark", "\ufeffEmailAddress;Name\r\n", ';', true, []string{"EmailAddress", "Name"}, ""},
		{"header only, no newline", "EmailAddress", ',', false, []string{"EmailAddress"}, ""},
		{"empty", "", 0, false, nil, "the CSV file is empty"},
		{"byte-order mark only", "\ufeff", 0, false, nil, "the CSV file is empty"},
		{"blank lines only", "\n\n", 0, false, nil, "the CSV file is empty"},
		{"malformed header", "a,\"b\n", 0, false, nil, "the header row is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewReader(strings.NewReader(tt.content))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Comma != tt.comma || r.BOM != tt.bom || !reflect.DeepEqual(r.Header, tt.header) {
				t.Errorf("got %q %v %q", r.Comma, r.BOM, r.Header)
			}
		})
	}
}

func TestReaderRecords(t *testing.T) {
	t.Parallel()
	content := "\ufeffEmailAddress,Name\n" +
		"a@example.com,A\n" + // 2
		"\n" + // 3: blank, skipped
		"b\"@example.com,B\n" + // 4: bare quote
		"c@example.com,\"C\nC\"\n" + // 5-6: a quoted newline
		"d@example.com\n" + // 7: one field (the caller rejects it)
		"\"e@example.com,E\n" + // 8: unterminated quote to the end
		"f@example.com,F\n"
	r, err := NewReader(strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		line   int
		fields string
		err    string
	}
	var got []rec
	last := int64(0)
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		g := rec{line: record.Line, fields: strings.Join(record.Fields, "|")}
		if record.Err != nil {
			g.err = record.Err.Error()
		}
		got = append(got, g)
		if r.Offset() < last {
			t.Errorf("the offset went back from %d to %d", last, r.Offset())
		}
		last = r.Offset()
	}
	want := []rec{
		{2, "a@example.com|A", ""},
		{4, "", `bare " in non-quoted-field`},
		{5, "c@example.com|C\nC", ""},
		{7, "d@example.com", ""},
		{8, "", `extraneous or missing " in quoted-field (lines 8 to 9)`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n%+v\nwant\n%+v", got, want)
	}
	if last != int64(len(content)) {
		t.Errorf("offset %d at the end, want %d", last, len(content))
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	if _, err := Open(filepath.Join(t.TempDir(), "nope.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrNoHeader) {
		t.Errorf("Open of an empty file: %v", err)
	}
}

// TestMalformedAfterBlankLines: the address of a malformed record is found after any run of
// blank lines, longer than the read buffer too, and a rejected row's Raw is never empty.
func TestMalformedAfterBlankLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		blanks int
		want   string
	}{
		{0, "x@example.com"},
		{2000, "x@example.com"},
		{40 << 10, "x@example.com"},
		{100 << 10, "x@example.com"},
	} {
		content := "Name,EmailAddress\n" + strings.Repeat("\n", tt.blanks) + "Bo\"b,x@example.com\n"
		r, err := NewReader(strings.NewReader(content))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if a := rec.Address(1, len(r.Header)); !a.Malformed || a.Raw != tt.want {
			t.Errorf("%d blank lines: malformed %t, raw %q, want %q", tt.blanks, a.Malformed, a.Raw, tt.want)
		}
	}
}

// TestReadPlain checks which lines readPlain reads itself rather than through the parser:
// the plain lines the read buffer holds whole, and the blank lines before them.
func TestReadPlain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content []byte
		opts    ReadOptions
		plain   int // lines readPlain consumed
	}{
		{"plain", []byte("Email,Name\na,b\nc,d\n"), ReadOptions{}, 2},
		{"CRLF", []byte("Email,Name\r\na,b\r\nc,d\r\n"), ReadOptions{}, 2},
		{"blank lines", []byte("Email,Name\n\n\r\na,b\n"), ReadOptions{}, 3},
		{"quotes", []byte("Email,Name\n\"a\",b\nc,d\ne\"f,g\nh,i\n"), ReadOptions{}, 2},
		{"bare CR", []byte("Email,Name\na\rb,c\nd,e\r\r\n"), ReadOptions{}, 0},
		{"no final newline", []byte("Email,Name\na,b\nc,d"), ReadOptions{}, 1},
		{"multi-byte delimiter", []byte("Email¦Name\na¦b\n"), ReadOptions{Comma: '¦'}, 1},
		{"sep= line and BOM", cat(bomUTF8, []byte("sep=;\nEmail;Name\na;b\n")), ReadOptions{}, 1},
		{"UTF-16, decoded", cat(bomUTF16LE, utf16Bytes("Email,Name\na,b\n", true)), ReadOptions{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewReader(bytes.NewReader(tt.content), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := r.Read(); err != nil {
					break
				}
			}
			if r.plainLines != tt.plain {
				t.Errorf("readPlain consumed %d lines, want %d", r.plainLines, tt.plain)
			}
		})
	}
}

// readStep is a record as Read returns it, with Offset after it.
type readStep struct {
	Line   int
	Fields []string
	Err    string
	Text   string
	Offset int64
}

// readSteps reads a whole file: its records, then the error that ended it.
func readSteps(data []byte, opts ReadOptions, oneByte, noFastPath bool) ([]readStep, error) {
	var src io.Reader = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src) // the read buffer rarely holds a whole line
	}
	r, err := NewReader(src, opts)
	if err != nil {
		return nil, err
	}
	r.noFastPath = noFastPath
	var steps []readStep
	for len(steps) < 100_000 {
		rec, err := r.Read()
		if err != nil {
			return steps, err
		}
		s := readStep{Line: rec.Line, Fields: slices.Clone(rec.Fields), Text: rec.Text, Offset: r.Offset()}
		if rec.Err != nil {
			s.Err = rec.Err.Error()
		}
		steps = append(steps, s)
	}
	return steps, errors.New("too many records")
}

// FuzzReaderFastPath reads any bytes, with a delimiter given or detected, from a reader
// that hands over all it can or one byte at a time: readPlain and the parser alone give
// the same records, lines, errors, texts and offsets.
func FuzzReaderFastPath(f *testing.F) {
	lines := func(n int, line string) string { return strings.Repeat(line, n) }
	seeds := []string{
		"Email,Name\na,b\n\"q\",c\nd,\"e\nf\"\ng,h\n",                    // quotes, a quoted newline
		"Email,Name\n\"a\nb\",c\nd,e\na,\"b\n\nc\"\nd,e\n",               // plain lines after quoted newlines
		"Email,Name\r\na,\"b\r\nc\"\r\nd,e\r\n",                          // CRLF in and after quotes
		"Email,Name\na\"b,c\nd,e\n\"a\"x,b\nc,d\n\"a\nb\"x,c\nd,e\n",     // malformed, then plain
		"Email,Name\na,b\n\"c,d\n",                                       // a quote open to the end
		"Email,Name\n\n\r\na,b\n\n\r\n\n",                                // blank lines
		"Email,Name\na\rb,c\nd,e\r\r\nf,g\n\r\nh,i\r",                    // bare CRs, a CR at the end
		"Email,Name\na,b\n\r",                                            // a lone CR after the last line
		"Email,Name \na ,b \n,\n,,\na,\n",                                // spaces, empty fields
		"Email,Name\na\na,b,c\nd\te;f\n",                                 // wrong field counts
		"Email,Name\na,b",                                                // no final newline
		"Email¦Name\na¦b\nc¦d¦e\n\"f\"¦g\n",                              // a multi-byte delimiter
		"sep=|\nEmail|Name\na|b\n\"c\"|d\ne|f\n",                         // a sep= line
		"\ufeffEmail;Name\r\na;b\r\n",                                    // a byte-order mark
		"Email,Name\n" + lines(1023, "x") + "é,y,z\n",                    // a text cut within a rune
		"Email,Name\na," + lines(70_000, "x") + "\nb,c\n",                // a line longer than the buffer
		"Email,Name\n" + lines(64_600, "\n") + "a\n",                     // more blank lines than the buffer holds with a line after them
		"Email,Name\n" + lines(70_000, "\n") + "a\n",                     // more than the buffer holds
		"Email,Name\n" + lines(32_000, "\r\n") + "a,b,c\nd,e\n",          // blank lines to near that limit
		"Email,Name\n" + lines(5000, "user@example.com,Name\n\"q\",x\n"), // lines across buffer ends
	}
	commas := []rune{0, ',', ';', '\t', '¦'} // 0: detected
	corpus := readerSeeds()
	for _, s := range seeds {
		corpus = append(corpus, []byte(s))
	}
	for _, data := range corpus {
		for c := range commas {
			f.Add(data, uint8(c), false)
			if !bigUnderRace(data) {
				f.Add(data, uint8(c), true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, c uint8, oneByte bool) {
		opts := ReadOptions{Comma: commas[int(c)%len(commas)]}
		fast, fastErr := readSteps(data, opts, oneByte, false)
		slow, slowErr := readSteps(data, opts, oneByte, true)
		if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
			t.Fatalf("error %v, through the parser %v", fastErr, slowErr)
		}
		for i := range max(len(fast), len(slow)) {
			if i >= len(fast) || i >= len(slow) || !reflect.DeepEqual(fast[i], slow[i]) {
				t.Fatalf("record %d:\n%+v\nthrough the parser:\n%+v", i, fast[i:min(i+1, len(fast))], slow[i:min(i+1, len(slow))])
			}
		}
	})
}

// bigUnderRace reports a seed read a byte at a time that is too big for a -race run: the
// package runs on its caller's goroutine alone, so the race detector has nothing to find
// in it, and those seeds took most of the package's time under it. The run without -race
// reads every seed both ways.
func bigUnderRace(data []byte) bool {
	return raceEnabled && len(data) > 4<<10
}

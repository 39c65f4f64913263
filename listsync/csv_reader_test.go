package listsync

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
// blank lines the read buffer holds, and a rejected row's Raw is never empty.
func TestMalformedAfterBlankLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		blanks int
		want   string
	}{
		{0, "x@example.com"},
		{2000, "x@example.com"},
		{40 << 10, "x@example.com"},
		{100 << 10, fmt.Sprintf("(line %d)", 2+100<<10)},
	} {
		content := "Name,EmailAddress\n" + strings.Repeat("\n", tt.blanks) + "Bo\"b,x@example.com\n"
		r, err := NewReader(strings.NewReader(content))
		if err != nil {
			t.Fatal(err)
		}
		m, err := MapHeader(r.Header, nil, HeaderOptions{IgnoreUnknown: true})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if row := m.Row(rec); !row.Malformed || row.Raw != tt.want {
			t.Errorf("%d blank lines: malformed %t, raw %q, want %q", tt.blanks, row.Malformed, row.Raw, tt.want)
		}
	}
}

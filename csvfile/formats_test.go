package csvfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"
)

// utf16Bytes encodes s as UTF-16, little- or big-endian, without a byte-order mark.
func utf16Bytes(s string, littleEndian bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if littleEndian {
			b = append(b, byte(u), byte(u>>8))
		} else {
			b = append(b, byte(u>>8), byte(u))
		}
	}
	return b
}

// encode writes s in a single-byte charset, as a spreadsheet on Windows would.
func encode(t testing.TB, cm *charmap.Charmap, s string) []byte {
	t.Helper()
	b, err := cm.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// notUTF8 is the reason a record with invalid UTF-8 is rejected.
const notUTF8 = "not valid UTF-8 (save the file as UTF-8, or name its encoding with --encoding, e.g. windows-1252)"

// excelText is what the fixtures hold once decoded: a header with Excel's spellings, a
// name with accents, a value with surrounding spaces, and a malformed line.
const excelText = "E-mail;Prénom;Plan\r\n" +
	"ann@example.com;Anaïs;  pro \r\n" +
	"bob@example.com;Bob;free\r\n" +
	"\"carol@example.com;Carol;free\r\n"

// TestReaderFormats reads the same list saved the ways spreadsheets save it.
func TestReaderFormats(t *testing.T) {
	t.Parallel()
	sepText := "sep=;\r\n" + excelText
	tests := []struct {
		name     string
		content  []byte
		opts     ReadOptions
		encoding string
		bom      bool
		sepLine  bool
		comma    rune
		firstRow int // the line of the first data row
	}{
		{"UTF-8", []byte(excelText), ReadOptions{}, EncodingUTF8, false, false, ';', 2},
		{"UTF-8 with BOM", cat(bomUTF8, []byte(excelText)), ReadOptions{}, EncodingUTF8, true, false, ';', 2},
		{"UTF-8 with BOM and sep=", cat(bomUTF8, []byte(sepText)), ReadOptions{}, EncodingUTF8, true, true, ';', 3},
		{"quoted sep= line", []byte(`"sep=;"` + "\n" + excelText), ReadOptions{}, EncodingUTF8, false, true, ';', 3},
		{"UTF-16LE with BOM and CRLF", cat(bomUTF16LE, utf16Bytes(excelText, true)), ReadOptions{}, EncodingUTF16LE, true, false, ';', 2},
		{"UTF-16BE with BOM", cat(bomUTF16BE, utf16Bytes(excelText, false)), ReadOptions{}, EncodingUTF16BE, true, false, ';', 2},
		{"UTF-16LE with BOM and sep=", cat(bomUTF16LE, utf16Bytes(sepText, true)), ReadOptions{}, EncodingUTF16LE, true, true, ';', 3},
		{"UTF-16LE without BOM, named", utf16Bytes(excelText, true), ReadOptions{Encoding: "UTF-16LE"}, EncodingUTF16LE, false, false, ';', 2},
		{"latin1, named", encode(t, charmap.ISO8859_1, excelText), ReadOptions{Encoding: "latin1"}, EncodingLatin1, false, false, ';', 2},
		{"windows-1252, named", encode(t, charmap.Windows1252, sepText), ReadOptions{Encoding: "cp1252"}, EncodingWindows1252, false, true, ';', 3},
		{"delimiter given", []byte(excelText), ReadOptions{Comma: ';'}, EncodingUTF8, false, false, ';', 2},
		{"delimiter given over sep=", []byte(strings.ReplaceAll(sepText, ";", "|")), ReadOptions{Comma: '|'}, EncodingUTF8, false, true, '|', 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "list.csv")
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Encoding != tt.encoding || r.BOM != tt.bom || r.SepLine != tt.sepLine || r.Comma != tt.comma {
				t.Errorf("read as %s, BOM %v, sep line %v, comma %q", r.Encoding, r.BOM, r.SepLine, r.Comma)
			}
			col, err := AddressColumn(r.Header, nil)
			require.NoError(t, err)
			var recs []NamedRecord
			for rec, err := range r.Named(col) {
				require.NoError(t, err)
				recs = append(recs, rec)
			}
			want := []NamedRecord{
				{Line: tt.firstRow, Address: "ann@example.com", Raw: "ann@example.com", Columns: map[string]string{"Prénom": "Anaïs", "Plan": "  pro "}},
				{Line: tt.firstRow + 1, Address: "bob@example.com", Raw: "bob@example.com", Columns: map[string]string{"Prénom": "Bob", "Plan": "free"}},
				{Line: tt.firstRow + 2, Raw: "carol@example.com", Malformed: true,
					Reject: "malformed line: extraneous or missing \" in quoted-field"},
			}
			if len(recs) == 3 {
				recs[2].Reject = strings.Split(recs[2].Reject, " (lines")[0]
			}
			assert.Equal(t, want, recs)
			if size := int64(len(tt.content)); r.Offset() != size {
				t.Errorf("offset %d at the end, want %d", r.Offset(), size)
			}
		})
	}
}

// TestReaderEncodingErrors checks that a file not in the encoding it is read in is refused
// with an error naming the encoding it looks like.
func TestReaderEncodingErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content []byte
		opts    ReadOptions
		likely  string
		msg     string
	}{
		{"latin1 header", encode(t, charmap.ISO8859_1, "Email,Prénom\n"), ReadOptions{}, EncodingLatin1, "--encoding latin1"},
		{"windows-1252 header", encode(t, charmap.Windows1252, "Email,Prénom “x”\n"), ReadOptions{}, EncodingWindows1252, "--encoding windows-1252"},
		{"UTF-16LE without BOM", utf16Bytes("Email,Name\r\n", true), ReadOptions{}, EncodingUTF16LE, "--encoding utf-16le"},
		{"UTF-16BE without BOM", utf16Bytes("Email,Name\r\n", false), ReadOptions{}, EncodingUTF16BE, "--encoding utf-16be"},
		{"UTF-16 BOM, latin1 asked", cat(bomUTF16LE, utf16Bytes("Email\n", true)), ReadOptions{Encoding: "latin1"}, EncodingUTF16LE, "UTF-16LE byte-order mark, but --encoding says latin1"},
		{"UTF-8 BOM, UTF-16 asked", cat(bomUTF8, []byte("Email\n")), ReadOptions{Encoding: "utf-16le"}, EncodingUTF8, "UTF-8 byte-order mark"},
		{"latin1 named as UTF-8", encode(t, charmap.ISO8859_1, "Email,Prénom\n"), ReadOptions{Encoding: "utf8"}, EncodingLatin1, "--encoding latin1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewReader(bytes.NewReader(tt.content), tt.opts)
			var ee *EncodingError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v, want an *EncodingError", err)
			}
			if ee.Likely != tt.likely || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q (likely %s), want %s and %q", err, ee.Likely, tt.likely, tt.msg)
			}
		})
	}
	// A UTF-8 header with latin1 rows: the rows are rejected, naming --encoding.
	content := append([]byte("Email,Name\nann@example.com,"), encode(t, charmap.ISO8859_1, "Anaïs\n")...)
	r, err := NewReader(bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Read()
	require.NoError(t, err)
	a := rec.Address(0, len(r.Header))
	assert.Equal(t, notUTF8, a.Reject)
	assert.Equal(t, "ann@example.com", a.Raw)
}

func TestParseOptions(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "UTF8": EncodingUTF8, "iso-8859-1": EncodingLatin1, "Latin-1": EncodingLatin1,
		"CP1252": EncodingWindows1252, "windows_1252": EncodingWindows1252, "utf-16": EncodingUTF16LE, "UTF-16BE": EncodingUTF16BE} {
		if got, err := ParseEncoding(in); err != nil || got != want {
			t.Errorf("ParseEncoding(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseEncoding("ebcdic"); err == nil || !strings.Contains(err.Error(), "latin1") {
		t.Errorf("ParseEncoding(ebcdic): %v", err)
	}
	for in, want := range map[string]rune{",": ',', ";": ';', "tab": '\t', `\t`: '\t', "\t": '\t', "|": '|', "PIPE": '|', "semicolon": ';', "¦": '¦'} {
		if got, err := ParseDelimiter(in); err != nil || got != want {
			t.Errorf("ParseDelimiter(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", `"`, "\n", ",,", "ab"} {
		if _, err := ParseDelimiter(in); err == nil {
			t.Errorf("ParseDelimiter(%q) accepted", in)
		}
	}
	for in, want := range map[string]ColumnMap{"Work Mail=EmailAddress": {"Work Mail", "EmailAddress"}, " a = CustomField2 ": {"a", "CustomField2"}, "x=y=z": {"x", "y=z"}} {
		if got, err := ParseColumnMap(in); err != nil || got != want {
			t.Errorf("ParseColumnMap(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "a", "=b", "a="} {
		if _, err := ParseColumnMap(in); err == nil {
			t.Errorf("ParseColumnMap(%q) accepted", in)
		}
	}
}

// readerSeeds are files in the formats spreadsheets write, and malformed ones.
func readerSeeds() [][]byte {
	return [][]byte{
		[]byte(excelText),
		cat(bomUTF8, []byte("sep=;\r\n"+excelText)),
		cat(bomUTF16LE, utf16Bytes(excelText, true)),
		utf16Bytes(excelText, false),
		[]byte("Email,Plan\n\"a@example.com,x\n\n\nb@example.com\n,,\n"),
		[]byte("\"sep=\t\"\nEmail\tPlan\na\"b@example.com\tpro\n"),
		[]byte("sep=\n"),
		[]byte("Email,Pr\xe9nom\n"),
		[]byte("Email\n\xff\xfe@example.com\n"),
	}
}

// FuzzReader reads any bytes as a subscriber CSV, in every encoding: no panic, lines that
// only grow, an offset that never goes back, and addresses whose rejects always say where
// and what (a malformed record's Raw is never empty).
func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds() {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, enc uint8) {
		opts := ReadOptions{}
		if int(enc) < len(encodings) {
			opts.Encoding = encodings[enc]
		}
		r, err := NewReader(bytes.NewReader(data), opts)
		if err != nil {
			return
		}
		col, err := AddressColumn(r.Header, nil)
		if err != nil {
			col = 0
		}
		last, lastOffset := 0, int64(0)
		for n := 0; n < 10000; n++ {
			rec, err := r.Read()
			if err != nil {
				return
			}
			if rec.Line <= last {
				t.Fatalf("line %d after %d", rec.Line, last)
			}
			last = rec.Line
			if off := r.Offset(); off < lastOffset || off > int64(len(data)) {
				t.Fatalf("offset %d after %d, of %d", off, lastOffset, len(data))
			}
			lastOffset = r.Offset()
			a := rec.Address(col, len(r.Header))
			if !utf8.ValidString(a.Raw) || !utf8.ValidString(a.Address) {
				t.Fatalf("invalid UTF-8 in %+v", a)
			}
			if a.Malformed && a.Raw == "" {
				t.Fatalf("malformed line %d without its text: %+v", rec.Line, rec)
			}
			if a.Reject == "" && (a.Address == "" || a.Malformed) {
				t.Fatalf("accepted record without an address: %+v", a)
			}
		}
	})
}

package listsync

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

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

// excelText is what the fixtures hold once decoded: a header with Excel's spellings, a
// name with accents, a value with surrounding spaces, and a malformed line.
const excelText = "E-mail;Prénom;Plan\r\n" +
	"ann@example.com;Anaïs;  pro \r\n" +
	"bob@example.com;Bob;free\r\n" +
	"\"carol@example.com;Carol;free\r\n"

// TestReaderFormats reads the same list saved the ways spreadsheets save it.
func TestReaderFormats(t *testing.T) {
	t.Parallel()
	fields := []Field{{ID: 1, Name: "Prénom"}, {ID: 2, Name: "Plan"}}
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
			m, err := MapHeader(r.Header, fields)
			if err != nil {
				t.Fatal(err)
			}
			var rows []MappedRow
			for {
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, m.Row(rec))
			}
			want := []MappedRow{
				{Line: tt.firstRow, Email: "ann@example.com", Key: "ann@example.com", Raw: "ann@example.com", Values: []string{"Anaïs", "pro"}},
				{Line: tt.firstRow + 1, Email: "bob@example.com", Key: "bob@example.com", Raw: "bob@example.com", Values: []string{"Bob", "free"}},
				{Line: tt.firstRow + 2, Raw: "carol@example.com", Malformed: true,
					Reject: "malformed line: extraneous or missing \" in quoted-field"},
			}
			if len(rows) == 3 {
				rows[2].Reject = strings.Split(rows[2].Reject, " (lines")[0]
			}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("rows:\n%+v\nwant\n%+v", rows, want)
			}
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
	m, err := MapHeader(r.Header, []Field{{ID: 1, Name: "Name"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if row := m.Row(rec); row.Reject != notUTF8 || row.Raw != "ann@example.com" {
		t.Errorf("row %+v", row)
	}
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

func TestMapHeaderOptions(t *testing.T) {
	t.Parallel()
	fields := []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}}
	tests := []struct {
		name    string
		header  []string
		opts    HeaderOptions
		email   int
		mapped  []int
		ignored []string
		err     []string
	}{
		{name: "Email Address", header: []string{"Email Address"}, email: 0},
		{name: "E-mail", header: []string{"Plan", "E-mail"}, email: 1, mapped: []int{2}},
		{name: "email_address", header: []string{"email_address"}, email: 0},
		{name: "EMAIL-ADDRESS", header: []string{" EMAIL-ADDRESS "}, email: 0},
		{name: "Mail", header: []string{"Mail"}, email: 0},
		{name: "e.mail", header: []string{"e.mail"}, email: 0},
		{name: "export columns spelt otherwise", header: []string{"email", "Subscriber ID", "subscription_status"}, email: 0,
			ignored: []string{"Subscriber ID", "subscription_status"}},
		{name: "--column to the address", header: []string{"Email", "Work"}, email: 1,
			opts: HeaderOptions{Columns: []ColumnMap{{"work", "EmailAddress"}}, Ignore: []string{"email"}}, ignored: []string{"Email"}},
		{name: "--column to fields by name and key", header: []string{"Courriel", "Prénom", "Offre"}, email: 0, mapped: []int{1, 2},
			opts: HeaderOptions{Columns: []ColumnMap{{"Courriel", "E-mail"}, {"prénom", "first NAME"}, {"Offre", "customfield2"}}}},
		{name: "--column beats a name", header: []string{"Email", "Plan"}, email: 0, mapped: []int{1},
			opts: HeaderOptions{Columns: []ColumnMap{{"Plan", "CustomField1"}}}},
		{name: "--ignore-column", header: []string{"Email", "Notes", "Plan"}, email: 0, mapped: []int{2},
			opts: HeaderOptions{Ignore: []string{"notes"}}, ignored: []string{"Notes"}},
		{name: "--ignore-unknown-columns", header: []string{"Email", "Notes", "", "Plan", "Colour"}, email: 0, mapped: []int{2},
			opts: HeaderOptions{IgnoreUnknown: true}, ignored: []string{"Notes", "Colour"}},
		{name: "two addresses", header: []string{"Email", "E-Mail Address"}, err: []string{"both hold EmailAddress", "--ignore-column"}},
		{name: "--column to nothing", header: []string{"Email", "X"}, opts: HeaderOptions{Columns: []ColumnMap{{"X", "Colour"}}},
			err: []string{`--column "X=Colour": "Colour" is neither EmailAddress nor a custom field`}},
		{name: "--column of a missing column", header: []string{"Email"}, opts: HeaderOptions{Columns: []ColumnMap{{"Y", "Plan"}}},
			err: []string{`--column "Y=Plan": the header has no column "Y"`}},
		{name: "--ignore-column of a missing column", header: []string{"Email"}, opts: HeaderOptions{Ignore: []string{"Y"}},
			err: []string{`--ignore-column "Y": the header has no such column`}},
		{name: "no address, with the hint", header: []string{"Plan"}, err: []string{"--column 'NAME=EmailAddress'"}},
		{name: "unknown, with the hints", header: []string{"Email", "Colour"}, err: []string{`unknown column "Colour"`, "--ignore-unknown-columns"}},
		{name: "ambiguous name, ignored unknown", header: []string{"Email", "plan"}, opts: HeaderOptions{IgnoreUnknown: true},
			err: []string{"names 2 custom fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := fields
			if strings.HasPrefix(tt.name, "ambiguous") {
				fs = []Field{{ID: 4, Name: "Plan"}, {ID: 9, Name: "plan"}}
			}
			m, err := MapHeader(tt.header, fs, tt.opts)
			if headerErrorChecked(t, err, tt.err) {
				return
			}
			mapped := mappedIDs(m)
			if m.Email != tt.email || !reflect.DeepEqual(mapped, tt.mapped) || !reflect.DeepEqual(m.Ignored, tt.ignored) {
				t.Errorf("got email %d, fields %v, ignored %q", m.Email, mapped, m.Ignored)
			}
		})
	}
}

func TestKeepSpaces(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		m, err := MapHeader([]string{"Email", "Plan"}, []Field{{ID: 2, Name: "Plan"}}, HeaderOptions{KeepSpaces: keep})
		if err != nil {
			t.Fatal(err)
		}
		row := m.Row(Record{Line: 2, Fields: []string{" a@example.com ", "\t pro  "}})
		want := "pro"
		if keep {
			want = "\t pro  "
		}
		if row.Email != "a@example.com" || row.Values[0] != want {
			t.Errorf("KeepSpaces %v: %+v", keep, row)
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
// only grow, an offset that never goes back, and rows whose rejects always say where and
// what (a malformed record's Raw is never empty).
func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds() {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, enc uint8) {
		opts := ReadOptions{}
		if int(enc) < len(Encodings) {
			opts.Encoding = Encodings[enc]
		}
		r, err := NewReader(bytes.NewReader(data), opts)
		if err != nil {
			return
		}
		m, err := MapHeader(r.Header, []Field{{ID: 2, Name: "Plan"}}, HeaderOptions{IgnoreUnknown: true})
		if err != nil {
			m = &Mapping{Columns: len(r.Header), Email: 0, Status: -1}
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
			row := m.Row(rec)
			if !utf8.ValidString(row.Raw) || !utf8.ValidString(row.Email) {
				t.Fatalf("invalid UTF-8 in %+v", row)
			}
			if row.Malformed && row.Raw == "" {
				t.Fatalf("malformed line %d without its text: %+v", rec.Line, rec)
			}
			if row.Reject == "" && (row.Key == "" || row.Key != strings.ToLower(row.Email)) {
				t.Fatalf("accepted row without an address: %+v", row)
			}
		}
	})
}

// FuzzMapHeader maps any header: either a mapping whose columns are within the header and
// distinct, or a *HeaderError.
func FuzzMapHeader(f *testing.F) {
	f.Add("Email Address;Prénom;plan;;SubscriptionStatus", "Prénom=first name", true)
	f.Add("E-mail,CustomField2,x", "x=EmailAddress", false)
	f.Add("mail,MAIL", "", false)
	f.Fuzz(func(t *testing.T, header, column string, ignoreUnknown bool) {
		names := strings.FieldsFunc(header, func(r rune) bool { return r == ',' || r == ';' })
		opts := HeaderOptions{IgnoreUnknown: ignoreUnknown}
		if c, err := ParseColumnMap(column); err == nil {
			opts.Columns = []ColumnMap{c}
		}
		m, err := MapHeader(names, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}}, opts)
		if err != nil {
			var herr *HeaderError
			if !errors.As(err, &herr) {
				t.Fatalf("error %v is not a *HeaderError", err)
			}
			return
		}
		seen := map[int]bool{m.Email: true}
		if m.Email < 0 || m.Email >= len(names) {
			t.Fatalf("address column %d of %d", m.Email, len(names))
		}
		for _, fld := range m.Fields {
			if fld.Column < 0 || fld.Column >= len(names) || seen[fld.Column] {
				t.Fatalf("field column %d: %+v", fld.Column, m)
			}
			seen[fld.Column] = true
		}
	})
}

package csvfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"
)

// textEncoding is a way a file's text is saved: an encoding, with or without its
// byte-order mark.
type textEncoding struct {
	name string // one of Encodings
	bom  bool
}

// textEncodings are every encoding the reader reads, with and without a byte-order mark.
var textEncodings = []textEncoding{
	{EncodingUTF8, false}, {EncodingUTF8, true},
	{EncodingLatin1, false}, {EncodingWindows1252, false},
	{EncodingUTF16LE, false}, {EncodingUTF16LE, true},
	{EncodingUTF16BE, false}, {EncodingUTF16BE, true},
}

func (e textEncoding) String() string {
	if e.bom {
		return e.name + " with BOM"
	}
	return e.name
}

// charmap returns the single-byte charset of e, nil for a Unicode encoding.
func (e textEncoding) charmap() *charmap.Charmap {
	switch e.name {
	case EncodingLatin1:
		return charmap.ISO8859_1
	case EncodingWindows1252:
		return charmap.Windows1252
	}
	return nil
}

// encode saves s, which e can hold, in e.
func (e textEncoding) encode(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	switch e.name {
	case EncodingUTF8:
		b = []byte(s)
		if e.bom {
			b = cat(bomUTF8, b)
		}
	case EncodingUTF16LE, EncodingUTF16BE:
		le := e.name == EncodingUTF16LE
		b = utf16Bytes(s, le)
		if e.bom && le {
			b = cat(bomUTF16LE, b)
		} else if e.bom {
			b = cat(bomUTF16BE, b)
		}
	default:
		b = encode(t, e.charmap(), s)
	}
	return b
}

// holdable returns s as e holds it: valid UTF-8 outside UTF-8, and '?' for a character a
// single-byte charset lacks.
func (e textEncoding) holdable(s string) string {
	if e.name == EncodingUTF8 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	cm := e.charmap()
	if cm == nil {
		return s
	}
	return strings.Map(func(r rune) rune {
		if b, ok := cm.EncodeRune(r); ok {
			return cm.DecodeByte(b)
		}
		return '?'
	}, s)
}

// readFields reads every record of data as ReadOptions say: each record's line and fields,
// and Err's text for a malformed one.
func readFields(t testing.TB, data []byte, opts ReadOptions, oneByte, noFastPath bool) (header []string, steps []readStep) {
	t.Helper()
	var src io.Reader = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	r, err := NewReader(src, opts)
	require.NoError(t, err)
	r.noFastPath = noFastPath
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		s := readStep{Line: rec.Line, Fields: slices.Clone(rec.Fields)}
		if rec.Err != nil {
			s.Err = rec.Err.Error()
		}
		steps = append(steps, s)
	}
	assert.Equal(t, int64(len(data)), r.Offset(), "offset at the end")
	return r.Header, steps
}

// TestReaderKeepsQuotedLineBreaks: a quoted field's CRLF, LF and lone CR are read as
// written, in every encoding, on the fast path and off it, whole or a byte at a time;
// a CRLF outside quotes ends the record.
func TestReaderKeepsQuotedLineBreaks(t *testing.T) {
	t.Parallel()
	type rec = readStep
	tests := []struct {
		name    string
		content string
		header  []string
		want    []rec
	}{
		{
			name:    "CRLF in quotes",
			content: "Email,Story\r\na@example.com,\"Once upon \r\na time\"\r\nb@example.com,plain\r\n",
			want: []rec{
				{Line: 2, Fields: []string{"a@example.com", "Once upon \r\na time"}},
				{Line: 4, Fields: []string{"b@example.com", "plain"}},
			},
		},
		{
			name:    "lone CR in quotes",
			content: "Email,Story\na@example.com,\"one\rtwo\"\nb@example.com,\"\r\"\n",
			want: []rec{
				{Line: 2, Fields: []string{"a@example.com", "one\rtwo"}},
				{Line: 3, Fields: []string{"b@example.com", "\r"}},
			},
		},
		{
			name:    "LF in quotes",
			content: "Email,Story\na@example.com,\"one\ntwo\"\nb@example.com,x\n",
			want: []rec{
				{Line: 2, Fields: []string{"a@example.com", "one\ntwo"}},
				{Line: 4, Fields: []string{"b@example.com", "x"}},
			},
		},
		{
			name:    "line breaks of every kind, and doubled quotes",
			content: "Email,Story\r\n\"a@example.com\",\"say \"\"hi\"\"\r\n\r\n\n\r\r\nbye\r\"\r\n",
			want:    []rec{{Line: 2, Fields: []string{"a@example.com", "say \"hi\"\r\n\r\n\n\r\r\nbye\r"}}},
		},
		{
			name:    "a quoted value ending in CRLF",
			content: "Email,Story\r\na@example.com,\"x\r\n\"\r\nb@example.com,y\r\n",
			want: []rec{
				{Line: 2, Fields: []string{"a@example.com", "x\r\n"}},
				{Line: 4, Fields: []string{"b@example.com", "y"}},
			},
		},
		{
			name:    "a last record without a line end",
			content: "Email,Story\r\na@example.com,\"x\r\ny\"",
			want:    []rec{{Line: 2, Fields: []string{"a@example.com", "x\r\ny"}}},
		},
		{
			name:    "a last record ending in CR",
			content: "Email,Story\r\na@example.com,\"x\r\ny\"\r",
			want:    []rec{{Line: 2, Fields: []string{"a@example.com", "x\r\ny"}}},
		},
		{
			name:    "CRLF in the header",
			content: "Email,\"First\r\nname\"\r\na@example.com,Ann\r\n",
			header:  []string{"Email", "First\r\nname"},
			want:    []rec{{Line: 3, Fields: []string{"a@example.com", "Ann"}}},
		},
		{
			name:    "a CR before CRLF outside quotes stays in the value",
			content: "Email,Story\r\na@example.com,x\r\r\nb@example.com,y\r\n",
			want: []rec{
				{Line: 2, Fields: []string{"a@example.com", "x\r"}},
				{Line: 3, Fields: []string{"b@example.com", "y"}},
			},
		},
		{
			name:    "blank CRLF lines",
			content: "Email,Story\r\n\r\n\r\na@example.com,\"x\r\n\r\ny\"\r\n\r\nb@example.com,y\r\n",
			want: []rec{
				{Line: 4, Fields: []string{"a@example.com", "x\r\n\r\ny"}},
				{Line: 8, Fields: []string{"b@example.com", "y"}},
			},
		},
		{
			name:    "a quote after a quoted CRLF",
			content: "Email,Story\r\na@example.com,\"x\r\ny\"z\r\nb@example.com,y\r\n",
			want: []rec{
				{Line: 2, Err: `extraneous or missing " in quoted-field (lines 2 to 3)`},
				{Line: 4, Fields: []string{"b@example.com", "y"}},
			},
		},
	}
	for _, tt := range tests {
		for _, enc := range textEncodings {
			t.Run(tt.name+"/"+enc.String(), func(t *testing.T) {
				t.Parallel()
				data := enc.encode(t, tt.content)
				header := tt.header
				if header == nil {
					header = []string{"Email", "Story"}
				}
				for _, oneByte := range []bool{false, true} {
					for _, noFastPath := range []bool{false, true} {
						h, got := readFields(t, data, ReadOptions{Encoding: enc.name}, oneByte, noFastPath)
						assert.Equal(t, header, h, "header, one byte at a time %t, fast path off %t", oneByte, noFastPath)
						assert.Equal(t, tt.want, got, "one byte at a time %t, fast path off %t", oneByte, noFastPath)
					}
				}
			})
		}
	}
}

// TestReaderReadError: a read error within a quoted field ends the file, as any read
// error does.
func TestReaderReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	text := "Email,Story\na@example.com,\"" + strings.Repeat("x\r\n", headPeek) // past what NewReader peeks
	r, err := NewReader(io.MultiReader(strings.NewReader(text), iotest.ErrReader(boom)))
	require.NoError(t, err)
	_, err = r.Read()
	require.ErrorIs(t, err, boom)
}

// TestReaderErrorsMatch: a malformed record's Err matches encoding/csv's error for it, for
// the callers that test for them.
func TestReaderErrorsMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		content string
		want    error
	}{
		{"Email\na\"b\n", csv.ErrBareQuote},
		{"Email\n\"a\"b\n", csv.ErrQuote},
		{"Email\n\"a\nb\n", csv.ErrQuote},
	}
	for _, tt := range tests {
		r, err := NewReader(strings.NewReader(tt.content))
		require.NoError(t, err)
		rec, err := r.Read()
		require.NoError(t, err)
		assert.ErrorIs(t, rec.Err, tt.want, "%q", tt.content)
	}
}

// parseStep is a record as the parser or encoding/csv reads it: the lines it spans, its
// fields or its error, and the offset after it.
type parseStep struct {
	Start, End int
	Fields     []string
	Err        error
	Offset     int64
}

// parseAll reads data with the reader's parser alone, with no header, byte-order mark or
// sep line: the records, then the error that ended the text.
func parseAll(data []byte, comma rune, oneByte bool) ([]parseStep, error) {
	var src io.Reader = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	r := &Reader{Comma: comma, sep: string(comma), sepb: []byte(string(comma)), br: bufio.NewReaderSize(src, headPeek)}
	var steps []parseStep
	for len(steps) < 100_000 {
		p, err := r.parse()
		if err != nil {
			return steps, err
		}
		s := parseStep{Start: p.start, End: p.end, Err: p.bad, Offset: r.offset}
		if p.bad == nil {
			s.Fields = slices.Clone(r.fields)
		}
		steps = append(steps, s)
	}
	return steps, errors.New("too many records")
}

// csvAll reads data with encoding/csv: the records, then the error that ended the text.
func csvAll(data []byte, comma rune, oneByte bool) ([]parseStep, error) {
	var src io.Reader = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	cr := csv.NewReader(src)
	cr.Comma, cr.FieldsPerRecord = comma, -1
	var steps []parseStep
	for len(steps) < 100_000 {
		fields, err := cr.Read()
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			steps = append(steps, parseStep{Start: pe.StartLine, End: pe.Line, Err: pe.Err, Offset: cr.InputOffset()})
			continue
		case err != nil:
			return steps, err
		}
		start, _ := cr.FieldPos(0)
		end, _ := cr.FieldPos(len(fields) - 1)
		end += strings.Count(fields[len(fields)-1], "\n") // only the last field's lines are after its start
		steps = append(steps, parseStep{Start: start, End: end, Fields: fields, Offset: cr.InputOffset()})
	}
	return steps, errors.New("too many records")
}

// FuzzParseCSV compares the reader's parser with encoding/csv on any bytes: the same
// records, lines, errors and offsets, but that a quoted field keeps the CR of a CRLF,
// which encoding/csv drops; a text without CR reads the same byte for byte.
func FuzzParseCSV(f *testing.F) {
	seeds := []string{
		"a,b\nc,d\n",
		"a,\"b\nc\"\nd,e\n",
		"a,\"b\r\nc\"\r\nd,e\r\n",
		"\"a\r\r\nb\"\r\r\n",
		"\"a\rb\",\"\r\"\n",
		"a\"b,c\n\"d\"e,f\n\"g\nh\"i,j\nk,l\n",
		"\"open\r\nto the end\r\n",
		"\"open\n\r",
		"a,b\r",
		"\n\r\n\n\r\n",
		"\r",
		"\"\"\"\",\"\",,\"a,b\"\n",
		"a¦\"b¦c\"¦d\n",
		"a," + strings.Repeat("x", 70_000) + "\nb,\"" + strings.Repeat("y\r\n", 30_000) + "\"\n",
	}
	commas := []rune{',', ';', '\t', '¦'}
	for _, s := range seeds {
		for c := range commas {
			f.Add([]byte(s), uint8(c), false)
		}
		if !bigUnderRace([]byte(s)) {
			f.Add([]byte(s), uint8(0), true)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, c uint8, oneByte bool) {
		comma := commas[int(c)%len(commas)]
		got, gotErr := parseAll(data, comma, oneByte)
		want, wantErr := csvAll(data, comma, oneByte)
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "the error that ends the text")
		noCR := bytes.IndexByte(data, '\r') < 0
		for i := range max(len(got), len(want)) {
			require.Less(t, i, len(got), "record %d: missing, encoding/csv read %+v", i, want[i:min(i+1, len(want))])
			require.Less(t, i, len(want), "record %d: %+v, encoding/csv read none", i, got[i])
			g := got[i]
			if !noCR {
				for j, f := range g.Fields {
					g.Fields[j] = strings.ReplaceAll(f, "\r\n", "\n")
				}
			}
			require.Equal(t, want[i], g, "record %d", i)
		}
	})
}

// roundTripCommas are the delimiters FuzzReaderRoundTrip writes with: each encoding holds
// them.
var roundTripCommas = []rune{',', ';', '\t', '|', '¦'}

// FuzzReaderRoundTrip writes records with encoding/csv's Writer, in every encoding, and
// reads them back unchanged: records are split at \x1e and fields at \x1f, and any value,
// with quotes, delimiters, CR, LF or CRLF, comes back as written. With UseCRLF the Writer
// itself drops a value's CRs and writes its LFs as CRLF: the values come back as it wrote
// them.
func FuzzReaderRoundTrip(f *testing.F) {
	seeds := []string{
		"a@example.com\x1fOnce upon \r\na time",
		"a@example.com\x1fone\rtwo\x1e\"b\"@example.com\x1f\r\n\x1ec\x1f\n\x1e\x1e \x1f\"\"",
		"x,y;z\tw|v¦u\x1f\"a,\"\"b\"\"\"\r\x1e\r\x1e\n",
		"é\x1f€\x1f\xff\xfe\x1f\r\r\n\n\r",
	}
	for i, s := range seeds {
		for enc := range textEncodings {
			f.Add(s, uint8(i), uint8(enc), i%2 == 0, enc%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, values string, c, e uint8, useCRLF, oneByte bool) {
		comma := roundTripCommas[int(c)%len(roundTripCommas)]
		enc := textEncodings[int(e)%len(textEncodings)]
		var text bytes.Buffer
		w := csv.NewWriter(&text)
		w.Comma, w.UseCRLF = comma, useCRLF
		write := func(rec []string) {
			require.NoError(t, w.Write(rec))
			w.Flush()
			require.NoError(t, w.Error())
		}
		write([]string{"Email", "Value"})
		var want []readStep
		for _, line := range strings.Split(values, "\x1e") {
			rec := strings.Split(enc.holdable(line), "\x1f")
			start := bytes.Count(text.Bytes(), []byte("\n")) + 1
			write(rec)
			if len(rec) == 1 && rec[0] == "" {
				continue // the Writer writes a blank line, which holds no record
			}
			if useCRLF {
				for i, v := range rec {
					rec[i] = strings.ReplaceAll(strings.ReplaceAll(v, "\r", ""), "\n", "\r\n")
				}
			}
			want = append(want, readStep{Line: start, Fields: rec})
		}
		data := enc.encode(t, text.String())
		for _, noFastPath := range []bool{false, true} {
			_, got := readFields(t, data, ReadOptions{Encoding: enc.name, Comma: comma}, oneByte, noFastPath)
			require.Equal(t, want, got, "written as %q in %s", text.String(), enc)
		}
	})
}

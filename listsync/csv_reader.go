package listsync

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// The byte-order marks a file may start with.
var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// headPeek is how much of the file is examined to find the header line's delimiter.
const headPeek = 64 << 10

// maxRawText is how much of a record's first line Record.Text keeps.
const maxRawText = 1 << 10

// ErrNoHeader is returned for a file with no header row.
var ErrNoHeader = errors.New("the CSV file is empty: it needs a header row")

// The encodings a file may be read in (ReadOptions.Encoding, Reader.Encoding).
const (
	EncodingUTF8        = "utf-8"
	EncodingLatin1      = "latin1"
	EncodingWindows1252 = "windows-1252"
	EncodingUTF16LE     = "utf-16le"
	EncodingUTF16BE     = "utf-16be"
)

// Encodings lists the encodings ReadOptions.Encoding accepts, for help texts.
var Encodings = []string{EncodingUTF8, EncodingLatin1, EncodingWindows1252, EncodingUTF16LE, EncodingUTF16BE}

// ParseEncoding returns the canonical name of an encoding, accepting the usual aliases
// (utf8, iso-8859-1, cp1252, …) in any case; "" stays "" (detect).
func ParseEncoding(name string) (string, error) {
	n := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(name)))
	switch n {
	case "":
		return "", nil
	case "utf8":
		return EncodingUTF8, nil
	case "latin1", "iso88591", "l1":
		return EncodingLatin1, nil
	case "windows1252", "cp1252", "win1252":
		return EncodingWindows1252, nil
	case "utf16le", "utf16":
		return EncodingUTF16LE, nil
	case "utf16be":
		return EncodingUTF16BE, nil
	}
	return "", fmt.Errorf("unknown encoding %q (use %s)", name, strings.Join(Encodings, ", "))
}

// ParseDelimiter reads a delimiter as a user writes it: the character itself, or tab,
// comma, semicolon or pipe by name ("\t" too).
func ParseDelimiter(s string) (rune, error) {
	switch strings.ToLower(s) {
	case "tab", `\t`:
		return '\t', nil
	case "comma":
		return ',', nil
	case "semicolon":
		return ';', nil
	case "pipe":
		return '|', nil
	}
	r, size := utf8.DecodeRuneInString(s)
	if s == "" || size != len(s) || !validDelim(r) {
		return 0, fmt.Errorf("%q is not a delimiter: give one character (or tab, comma, semicolon, pipe), not a quote or a line end", s)
	}
	return r, nil
}

func validDelim(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && r != utf8.RuneError && utf8.ValidRune(r)
}

// ReadOptions says how to read a file; the zero value detects everything.
type ReadOptions struct {
	// Encoding is one of Encodings, or "" to detect: a UTF-16 byte-order mark, else UTF-8.
	Encoding string
	// Comma is the delimiter, or 0 to detect it: Excel's "sep=X" first line, else
	// whichever of comma, semicolon and tab the header line holds most of.
	Comma rune
}

// EncodingError reports a file that is not in the encoding it is read in: the header row is
// not UTF-8, or a byte-order mark disagrees with ReadOptions.Encoding. A usage error.
type EncodingError struct {
	// Likely is the encoding the header looks like it is in, "" when unknown.
	Likely string
	msg    string
}

// Error says what is wrong and which encoding to give.
func (e *EncodingError) Error() string { return e.msg }

// Reader reads a subscriber CSV: an optional byte-order mark, Excel's optional "sep=X" line,
// a header row, then one record per subscriber.
type Reader struct {
	// Comma is the delimiter, detected or given.
	Comma rune
	// BOM reports whether the file began with a byte-order mark (UTF-8 or UTF-16).
	BOM bool
	// Encoding is the encoding the file is read in (one of Encodings).
	Encoding string
	// SepLine reports an Excel "sep=X" first line (which set Comma unless one was given).
	SepLine bool
	// Header is the header row, as written.
	Header []string

	br        *bufio.Reader // the decoded text, after the BOM and the sep line
	cr        *csv.Reader
	closer    io.Closer
	src       *countingReader // the file's bytes, for Offset when decoding
	skip      int64           // bytes before br's text: the BOM and the sep line
	lineBase  int             // lines before br's text: the sep line
	raw       []byte          // the first line of the record being read, as written
	transcode bool

	// readPlain reads plain lines without encoding/csv, which then never sees them: its
	// line numbers and offset need what readPlain consumed added.
	sep        string   // Comma, encoded
	fields     []string // readPlain's record, reused
	csvLines   int      // lines encoding/csv had read by the end of its last record
	plainLines int      // lines readPlain consumed
	plainBytes int64    // bytes readPlain consumed
	noFastPath bool     // tests: read every record through encoding/csv
}

// Record is a data record of the file.
type Record struct {
	// Line is the line the record starts on, from 1 (the file's first line).
	Line int
	// Fields holds the record's fields; the slice is reused by the next Read.
	Fields []string
	// Err, when set, says why the record is malformed (an encoding/csv parse error such as
	// a stray quote); Fields is then nil.
	Err error
	// Text is the record's first line as written (at most 1 KiB, without its line end,
	// invalid UTF-8 as U+FFFD), set only when Err is or the record's length differs from the
	// header's: what the user can look for in the file.
	Text string

	comma rune // the delimiter, to read an address out of Text
}

// Open opens a CSV file and reads its header. Pass at most one ReadOptions.
func Open(path string, opts ...ReadOptions) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads the byte-order mark, the encoding, the delimiter and the header row from
// r. Pass at most one ReadOptions.
func NewReader(r io.Reader, opts ...ReadOptions) (*Reader, error) {
	var o ReadOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	enc, err := ParseEncoding(o.Encoding)
	if err != nil {
		return nil, err
	}
	if o.Comma != 0 && !validDelim(o.Comma) {
		return nil, fmt.Errorf("%q is not a delimiter", o.Comma)
	}
	src := &countingReader{r: r}
	raw := bufio.NewReaderSize(src, headPeek)
	out := &Reader{src: src}

	// The byte-order mark decides the encoding, and must agree with the one given.
	head, _ := raw.Peek(len(bomUTF8))
	bomEnc := ""
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		bomEnc = EncodingUTF8
	case bytes.HasPrefix(head, bomUTF16LE):
		bomEnc = EncodingUTF16LE
	case bytes.HasPrefix(head, bomUTF16BE):
		bomEnc = EncodingUTF16BE
	}
	if bomEnc != "" {
		if enc != "" && enc != bomEnc {
			return nil, &EncodingError{Likely: bomEnc, msg: fmt.Sprintf(
				"the file starts with a %s byte-order mark, but --encoding says %s", strings.ToUpper(bomEnc), enc)}
		}
		enc = bomEnc
		n := len(bomUTF8)
		if bomEnc != EncodingUTF8 {
			n = 2
		}
		_, _ = raw.Discard(n)
		out.BOM, out.skip = true, int64(n)
	}
	explicit := enc != "" && bomEnc == ""
	if enc == "" {
		enc = EncodingUTF8
	}
	out.Encoding = enc

	// UTF-8 is read as it is (Offset is then exact); the rest is decoded to UTF-8.
	out.br = raw
	if dec := decoder(enc); dec != nil {
		out.transcode = true
		out.br = bufio.NewReaderSize(transform.NewReader(raw, dec), headPeek)
	}

	if err := out.readSepLine(o.Comma); err != nil {
		return nil, err
	}
	head, err = out.br.Peek(headPeek)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if enc == EncodingUTF8 {
		if err := checkUTF8Header(head, !out.BOM && !explicit); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Comma != 0:
		out.Comma = o.Comma
	case out.Comma == 0:
		out.Comma = DetectComma(head)
	}
	out.cr = csv.NewReader(out.br)
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
	out.csvLines = out.lastLine(header)
	out.sep = string(out.Comma)
	return out, nil
}

// decoder returns the decoder of an encoding, nil for UTF-8.
func decoder(enc string) *encoding.Decoder {
	switch enc {
	case EncodingLatin1:
		return charmap.ISO8859_1.NewDecoder()
	case EncodingWindows1252:
		return charmap.Windows1252.NewDecoder()
	case EncodingUTF16LE:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder()
	case EncodingUTF16BE:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder()
	}
	return nil
}

// readSepLine consumes Excel's "sep=X" first line, which sets the delimiter unless one is
// given.
func (r *Reader) readSepLine(given rune) error {
	const peek = 16 // `"sep=X"\r\n` and a multi-byte X fit
	head, _ := r.br.Peek(peek)
	line, _, found := bytes.Cut(head, []byte("\n"))
	if !found && len(head) == peek {
		return nil // no line end near: not a sep line
	}
	text := strings.TrimSuffix(string(line), "\r")
	if len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"' {
		text = text[1 : len(text)-1]
	}
	if len(text) < 5 || !strings.EqualFold(text[:4], "sep=") {
		return nil
	}
	sep, size := utf8.DecodeRuneInString(text[4:])
	if 4+size != len(text) || !validDelim(sep) {
		return nil
	}
	n := len(line)
	if found {
		n++ // the \n
	}
	if _, err := r.br.Discard(n); err != nil {
		return err
	}
	r.SepLine, r.lineBase = true, 1
	if !r.transcode {
		r.skip += int64(n)
	}
	if given == 0 {
		r.Comma = sep
	}
	return nil
}

// checkUTF8Header fails when the header line of a file read as UTF-8 is not: the error names
// the encoding the bytes look like.
func checkUTF8Header(head []byte, mayBeUTF16 bool) error {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	if guess := guessUTF16(head); mayBeUTF16 && guess != "" {
		return &EncodingError{Likely: guess, msg: fmt.Sprintf(
			"the header row is not UTF-8: it looks like %s without a byte-order mark (give --encoding %s, or save the file as UTF-8)",
			strings.ToUpper(guess), guess)}
	}
	if utf8.Valid(line) {
		return nil
	}
	guess := EncodingLatin1
	for _, c := range line {
		if c >= 0x80 && c <= 0x9F {
			guess = EncodingWindows1252 // C1 controls in latin1, printable in windows-1252
			break
		}
	}
	return &EncodingError{Likely: guess, msg: fmt.Sprintf(
		"the header row is not UTF-8: it looks like %s, as spreadsheets write on Windows (give --encoding %s, or save the file as \"CSV UTF-8\")",
		guess, guess)}
}

// guessUTF16 recognises UTF-16 text without a byte-order mark by its NUL bytes: ASCII
// characters have a zero high byte, first (big-endian) or second (little-endian).
func guessUTF16(head []byte) string {
	n := min(len(head), 64) &^ 1
	if n < 4 {
		return ""
	}
	var even, odd int
	for i := 0; i < n; i += 2 {
		if head[i] == 0 {
			even++
		}
		if head[i+1] == 0 {
			odd++
		}
	}
	switch pairs := n / 2; {
	case odd*2 > pairs && even == 0:
		return EncodingUTF16LE
	case even*2 > pairs && odd == 0:
		return EncodingUTF16BE
	}
	return ""
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
// returned with its Err and Text set, and reading goes on after it; any other error ends
// the file.
func (r *Reader) Read() (Record, error) {
	if line, text, ok := r.readPlain(); ok {
		return Record{Line: line, Fields: r.fields, Text: text, comma: r.Comma}, nil
	}
	r.keepFirstLine()
	fields, err := r.cr.Read()
	base := r.lineBase + r.plainLines // encoding/csv counts only the lines it read
	if err == nil {
		r.csvLines = r.lastLine(fields)
		line, _ := r.cr.FieldPos(0)
		rec := Record{Line: base + line, Fields: fields, comma: r.Comma}
		if len(fields) != len(r.Header) {
			rec.Text = validText(r.raw)
		}
		return rec, nil
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) && pe.Err != nil {
		// encoding/csv is on pe.Line, or one past it for a quote left open at the end of
		// the file: there, nothing is left for readPlain.
		r.csvLines = pe.Line
		rec := Record{Line: base + pe.StartLine, Err: pe.Err, Text: validText(r.raw), comma: r.Comma}
		if pe.StartLine != pe.Line {
			rec.Err = fmt.Errorf("%w (lines %d to %d)", pe.Err, base+pe.StartLine, base+pe.Line)
		}
		return rec, nil
	}
	return Record{}, err
}

// lastLine returns the line encoding/csv is on after reading fields: the last field's first
// line, plus the line ends within it (only a quoted field holds any).
func (r *Reader) lastLine(fields []string) int {
	line, _ := r.cr.FieldPos(len(fields) - 1)
	return line + strings.Count(fields[len(fields)-1], "\n")
}

// readPlain reads the next record without encoding/csv when the read buffer already holds
// its whole line and the line is plain: no quote, and no CR but in a final CRLF. Such a
// line is its fields joined by the delimiter, as most lines of most files are; splitting it
// here spares the parser and keepFirstLine's copy. The blank lines before it are skipped as
// encoding/csv skips them. It returns the record's Line and Text, its fields in r.fields;
// it reports false, having consumed nothing, for any other line, and for a decoded file,
// whose Offset counts what the decoder read.
func (r *Reader) readPlain() (int, string, bool) {
	if r.noFastPath || r.transcode {
		return 0, "", false
	}
	buf, _ := r.br.Peek(r.br.Buffered()) // never blocks
	var line []byte
	start, end, blanks := 0, 0, 0
	for {
		n := bytes.IndexByte(buf[start:], '\n')
		if n < 0 {
			return 0, "", false
		}
		line, end = bytes.TrimSuffix(buf[start:start+n], []byte("\r")), start+n+1
		if len(line) > 0 {
			break
		}
		if start >= r.blankLimit() {
			return 0, "", false // keepFirstLine would keep this blank line as the text
		}
		start = end
		blanks++
	}
	if bytes.IndexByte(line, '"') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
		return 0, "", false
	}
	// One string for the record, as encoding/csv allocates with ReuseRecord.
	s := string(line)
	fields := r.fields[:0]
	for {
		i := strings.Index(s, r.sep)
		if i < 0 {
			break
		}
		fields = append(fields, s[:i])
		s = s[i+len(r.sep):]
	}
	r.fields = append(fields, s)
	var text string
	if len(r.fields) != len(r.Header) {
		text = validText(line[:min(len(line), maxRawText)])
	}
	r.plainLines += blanks + 1
	r.plainBytes += int64(end)
	_, _ = r.br.Discard(end) // buffered: cannot fail
	return r.lineBase + r.csvLines + r.plainLines, text, true
}

// keepFirstLine copies the first line of the next record (the csv.Reader has consumed
// exactly the records before it), skipping the blank lines it skips too, into a reused
// buffer: the text of a record the csv.Reader cannot parse. The blank lines are skipped as
// far as the read buffer lets it see (64 KiB), not only the first 1 KiB of them.
func (r *Reader) keepFirstLine() {
	r.raw = r.raw[:0]
	limit := r.blankLimit()
	for skip := 0; ; {
		peek, _ := r.br.Peek(skip + maxRawText + 2)
		if skip >= len(peek) {
			return
		}
		rest := peek[skip:]
		line, _, found := bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSuffix(line, []byte("\r"))) == 0 && found && skip < limit {
			skip += len(line) + 1
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		r.raw = append(r.raw, line[:min(len(line), maxRawText)]...)
		return
	}
}

// blankLimit is how far into the read buffer keepFirstLine skips blank lines: where it can
// still peek a whole first line of Record.Text after them.
func (r *Reader) blankLimit() int { return r.br.Size() - maxRawText - 2 }

// validText returns a record's first line as valid UTF-8, for Record.Text.
func validText(line []byte) string {
	return strings.ToValidUTF8(string(line), "\uFFFD")
}

// Offset returns how many bytes of the file have been read, byte-order mark included:
// exact for UTF-8, ahead by at most the read buffer for a decoded encoding.
func (r *Reader) Offset() int64 {
	if r.transcode {
		return r.src.n
	}
	return r.skip + r.plainBytes + r.cr.InputOffset()
}

// Close closes the file Open opened; it does nothing for a NewReader.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

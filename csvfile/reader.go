package csvfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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

// Encodings returns the encodings ReadOptions.Encoding accepts, for help texts: a new slice
// each time.
func Encodings() []string { return slices.Clone(encodings) }

var encodings = []string{EncodingUTF8, EncodingLatin1, EncodingWindows1252, EncodingUTF16LE, EncodingUTF16BE}

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
	return "", fmt.Errorf("unknown encoding %q (use %s)", name, strings.Join(encodings, ", "))
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
	// Encoding is one of Encodings(), or "" to detect: a UTF-16 byte-order mark, else UTF-8.
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

// Reader reads a CSV file of subscribers or recipients: an optional byte-order mark, Excel's optional "sep=X" line,
// a header row, then one record per subscriber. Quoting follows RFC 4180, and a quoted
// value is read byte for byte but for its doubled quotes: a line break in it stays as
// written, CRLF, LF or a lone CR (where encoding/csv turns CRLF into LF). Outside quotes, LF
// or CRLF ends a record; blank lines are skipped.
type Reader struct {
	// Comma is the delimiter, detected or given.
	Comma rune
	// BOM reports whether the file began with a byte-order mark (UTF-8 or UTF-16).
	BOM bool
	// Encoding is the encoding the file is read in (one of Encodings()).
	Encoding string
	// SepLine reports an Excel "sep=X" first line (which set Comma unless one was given).
	SepLine bool
	// Header is the header row, as written.
	Header []string

	br        *bufio.Reader // the decoded text, after the BOM and the sep line
	closer    io.Closer
	src       *countingReader // the file's bytes, for Offset when decoding
	skip      int64           // bytes before br's text: the BOM and the sep line
	transcode bool

	// The parser's state, shared by readPlain and parse.
	line   int      // the line the last byte read is on: lines read, the sep line included
	offset int64    // bytes of br's text read
	sep    string   // Comma, encoded
	sepb   []byte   // Comma, encoded
	fields []string // the record, reused
	buf    []byte   // the record's fields unquoted, end to end
	ends   []int    // where each field ends in buf
	long   []byte   // a line longer than br's buffer
	text   []byte   // the first line of a record that spans lines

	plainLines int  // tests: lines readPlain consumed
	noFastPath bool // tests: read every record through parse
}

// Record is a data record of the file.
type Record struct {
	// Line is the line the record starts on, from 1 (the file's first line).
	Line int
	// Fields holds the record's fields; the slice is reused by the next Read.
	Fields []string
	// Err, when set, says why the record is malformed: a stray quote (an error matching
	// csv.ErrBareQuote) or a quoted field not closed where it should be (csv.ErrQuote), with
	// the lines the record spans when more than one; Fields is then nil.
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
	out.sep = string(out.Comma)
	out.sepb = []byte(out.sep)
	header, err := out.parse()
	switch {
	case errors.Is(err, io.EOF):
		return nil, ErrNoHeader
	case err != nil:
		return nil, err
	case header.bad != nil:
		return nil, fmt.Errorf("the header row is malformed: %w", header.bad)
	}
	out.Header = slices.Clone(out.fields)
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
	r.SepLine, r.line = true, 1
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
	p, err := r.parse()
	if err != nil {
		return Record{}, err
	}
	rec := Record{Line: p.start, comma: r.Comma}
	switch {
	case p.bad != nil:
		rec.Err = p.bad
		if p.end != p.start {
			rec.Err = fmt.Errorf("%w (lines %d to %d)", p.bad, p.start, p.end)
		}
		rec.Text = validText(p.text)
	default:
		rec.Fields = r.fields
		if len(rec.Fields) != len(r.Header) {
			rec.Text = validText(p.text)
		}
	}
	return rec, nil
}

// readPlain reads the next record without the parser when the read buffer already holds
// its whole line and the line is plain: no quote, and no CR but in a final CRLF. Such a
// line is its fields joined by the delimiter, as most lines of most files are; splitting it
// here spares the parser's copy. The blank lines before it are skipped as parse skips
// them. It returns the record's Line and Text, its fields in r.fields; it reports false,
// having consumed nothing, for any other line, and for a decoded file.
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
		start = end
		blanks++
	}
	if bytes.IndexByte(line, '"') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
		return 0, "", false
	}
	// One string for the record, as parse allocates.
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
	r.line += blanks + 1
	r.offset += int64(end)
	_, _ = r.br.Discard(end) // buffered: cannot fail
	return r.line, text, true
}

// parsed is what parse read of a record besides its fields.
type parsed struct {
	start, end int    // the lines the record starts and ends on
	text       []byte // its first line, without its line end, at most maxRawText bytes
	bad        error  // csv.ErrBareQuote or csv.ErrQuote when the record breaks RFC 4180
}

// parse reads the next record as RFC 4180 says, skipping the blank lines before it, into
// r.fields. A quoted field is its bytes as written, but for its doubled quotes: a line
// break in it stays CRLF, LF or a lone CR (encoding/csv turns CRLF into LF). A line end
// outside quotes, LF or CRLF, ends the record, and a CR at the very end of the text is
// dropped, as encoding/csv does. A record that breaks the quoting is reported in bad, its
// line read to its end and no further; the lines, errors and offsets are encoding/csv's
// (a test compares them). It returns io.EOF after the last record, and any read error.
func (r *Reader) parse() (parsed, error) {
	var line []byte
	for {
		l, err := r.readLine()
		if err != nil {
			return parsed{}, err
		}
		if !isLineEnd(l) {
			line = l
			break
		}
	}
	p := parsed{start: r.line}
	p.text = trimLineEnd(line)
	p.text = p.text[:min(len(p.text), maxRawText)]
	r.buf, r.ends = r.buf[:0], r.ends[:0]
	sepLen := len(r.sepb)
fields:
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.Index(line, r.sepb)
			field := line
			if i >= 0 {
				field = line[:i]
			} else {
				field = trimLineEnd(line)
			}
			if bytes.IndexByte(field, '"') >= 0 {
				p.bad = csv.ErrBareQuote
				break fields
			}
			r.buf = append(r.buf, field...)
			r.ends = append(r.ends, len(r.buf))
			if i < 0 {
				break fields
			}
			line = line[i+sepLen:]
			continue
		}
		line = line[1:]
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				r.buf = append(r.buf, line[:i]...)
				line = line[i+1:]
				switch {
				case len(line) > 0 && line[0] == '"': // a doubled quote
					r.buf = append(r.buf, '"')
					line = line[1:]
				case bytes.HasPrefix(line, r.sepb):
					r.ends = append(r.ends, len(r.buf))
					line = line[sepLen:]
					continue fields
				case isLineEnd(line):
					r.ends = append(r.ends, len(r.buf))
					break fields
				default:
					p.bad = csv.ErrQuote
					break fields
				}
			case len(line) > 0:
				// The field goes on on the next line: its line end is part of it, as written.
				r.buf = append(r.buf, line...)
				if p.start == r.line {
					r.text = append(r.text[:0], p.text...) // the next read overwrites the line
					p.text = r.text
				}
				var err error
				if line, err = r.readLine(); errors.Is(err, io.EOF) {
					line = nil
				} else if err != nil {
					return parsed{}, err
				}
			default: // the text ended in the field
				p.bad = csv.ErrQuote
				break fields
			}
		}
	}
	p.end = r.line
	if p.bad != nil {
		return p, nil
	}
	// One string for the record, as encoding/csv allocates with ReuseRecord.
	s := string(r.buf)
	fields := r.fields[:0]
	from := 0
	for _, to := range r.ends {
		fields = append(fields, s[from:to])
		from = to
	}
	r.fields = fields
	return p, nil
}

// readLine reads the next line of br's text with its line end, valid until the next read.
// At the end of the text, a last line without a line end has a final CR dropped; an empty
// one is io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	r.offset += int64(len(line))
	switch {
	case errors.Is(err, io.EOF):
		if line = bytes.TrimSuffix(line, []byte("\r")); len(line) == 0 {
			return nil, io.EOF
		}
	case err != nil:
		return nil, err
	}
	r.line++
	return line, nil
}

// isLineEnd reports whether b is a line end, CRLF or LF, or nothing.
func isLineEnd(b []byte) bool {
	switch len(b) {
	case 0:
		return true
	case 1:
		return b[0] == '\n'
	case 2:
		return b[0] == '\r' && b[1] == '\n'
	}
	return false
}

// trimLineEnd returns line without its line end, LF or CRLF.
func trimLineEnd(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n > 1 && line[n-2] == '\r' {
			line = line[:n-2]
		}
	}
	return line
}

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
	return r.skip + r.offset
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

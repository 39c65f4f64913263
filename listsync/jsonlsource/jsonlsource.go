// Package jsonlsource reads a sync's rows from a JSON Lines file: one object per line, its
// keys as column names, as `bq extract --destination_format NEWLINE_DELIMITED_JSON` or
// `SELECT row_to_json(t) …` write it. It is the source of `sendloop sync --jsonl`.
//
// The columns are every key the file's objects hold, in the order they first appear, and
// map as a CSV header's do: the address by any usual spelling of EmailAddress, the others
// by the name of the list's custom field (or its key CustomField<id>), SubscriptionStatus
// counting only the Subscribed rows; Options.Header's Columns and Ignore act as --column
// and --ignore-column. A value is its text: a string as it is, a number as written
// (1.50 stays 1.50), true and false as such, null as empty (as is a key a line leaves
// out: BigQuery omits null ones), an array or object as its compact JSON.
//
// A row is a physical line and is reported by its line number. Blank lines are skipped. A
// line that is not one JSON object (cut short, two objects, a bare value, a key given
// twice) is rejected, tolerantly, as a CSV source's malformed record is: the sync goes on,
// and the reject names the line, its text and the decoder's complaint; if the line holds a
// valid address, that member is kept (never unsubscribed for being missing) as a rejected
// CSV row's is.
//
// The file is read once for its keys, then again to plan and to apply; each reading
// refuses the file if its size or modification time changed.
package jsonlsource

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/address"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/internal/columns"
)

// Options tunes a File.
type Options struct {
	// Header maps the keys as HeaderOptions maps a CSV header's: Columns and Ignore;
	// IgnoreUnknown and KeepSpaces are refused.
	Header listsync.HeaderOptions
}

// maxLine is the longest line read: a longer one is rejected (its text is not kept).
const maxLine = 16 << 20

// File is a JSON Lines file whose rows are a sync's source. New makes one without I/O;
// Source reads the file's keys.
type File struct {
	// Path is the file's path.
	Path string

	opts Options

	mu        sync.Mutex
	info      os.FileInfo
	keys      []string
	layout    *columns.Layout
	src       listsync.Source
	lines     int
	malformed int
}

// New returns the file at path as a source-to-be. It does no I/O.
func New(path string, opts Options) *File { return &File{Path: path, opts: opts} }

// ColumnsError says why the file's keys do not map to a sync's rows: a usage error.
type ColumnsError struct {
	// Columns are the file's keys.
	Columns []string
	msg     string
}

// Error says what is wrong with the keys, and names them.
func (e *ColumnsError) Error() string {
	quoted := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("the file's keys (%s): %s", strings.Join(quoted, ", "), e.msg)
}

// Source reads the file once for its keys, maps them, and returns its rows as a
// listsync.Source. Calling it again returns the same source.
func (f *File) Source(ctx context.Context) (listsync.Source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.src != nil {
		return f.src, nil
	}
	info, err := os.Stat(f.Path)
	if err != nil {
		return nil, err
	}
	f.info = info
	var keys []string
	seen := map[string]bool{}
	lines, malformed := 0, 0
	err = f.each(ctx, func(_ int, obj *object, _ []byte, derr error) bool {
		lines++
		if derr != nil {
			malformed++
			return true
		}
		for _, k := range obj.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	layout, err := columns.Map(keys, f.opts.Header)
	if err != nil {
		return nil, &ColumnsError{Columns: keys, msg: err.Error()}
	}
	f.keys, f.layout, f.lines, f.malformed = keys, layout, lines, malformed
	f.src = listsync.RowFunc(layout.Fields, f.read)
	return f.src, nil
}

// Columns returns the file's keys, once Source has read them.
func (f *File) Columns() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}

// Layout says which key holds the address and which the fields, once Source mapped them:
// the address key's index in Columns, and for each field key its index.
func (f *File) Layout() (email int, fields []string, cols []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.layout.Parts()
}

// Lines returns the number of rows (non-blank lines) Source found, and how many of them
// are malformed.
func (f *File) Lines() (rows, malformed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lines, f.malformed
}

// each decodes the file's lines, calling fn for each non-blank one until it returns false.
func (f *File) each(ctx context.Context, fn func(line int, obj *object, text []byte, err error) bool) error {
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if info, err := fh.Stat(); err == nil && (info.Size() != f.info.Size() || !info.ModTime().Equal(f.info.ModTime())) {
		return fmt.Errorf("%s changed during the sync (its size or modification time differs); nothing more was read from it: run the sync again", f.Path)
	}
	r := bufio.NewReaderSize(fh, 64<<10)
	var obj object
	for line := 1; ; line++ {
		if line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		text, tooLong, err := readLine(r)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(text) == 0 && !tooLong && errors.Is(err, io.EOF) {
			return nil
		}
		var derr error
		switch {
		case tooLong:
			derr = fmt.Errorf("the line is longer than %d bytes", maxLine)
			text = nil
		case len(bytes.TrimSpace(text)) == 0:
			if errors.Is(err, io.EOF) {
				return nil
			}
			continue
		default:
			derr = decodeLine(text, &obj)
		}
		if !fn(line, &obj, text, derr) {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// readLine reads a line without its end (\n or \r\n); tooLong reports one past maxLine,
// whose text is dropped.
func readLine(r *bufio.Reader) (text []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLine {
			tooLong = true
			buf = buf[:0]
		} else if !tooLong {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if tooLong && errors.Is(err, io.EOF) {
			err = nil // a last line too long: report it, then the next read ends
		}
		return buf, tooLong, err
	}
}

// read yields the file's rows.
func (f *File) read(ctx context.Context) iter.Seq2[listsync.Row, error] {
	return func(yield func(listsync.Row, error) bool) {
		l := f.layout
		err := f.each(ctx, func(line int, obj *object, text []byte, derr error) bool {
			if derr != nil {
				return yield(malformedRow(line, text, derr), nil)
			}
			row := listsync.Row{Line: line, Fields: make(map[string]string, len(l.Fields))}
			row.Email = obj.get(f.keys[l.Email])
			for i, c := range l.Columns {
				row.Fields[l.Fields[i]] = obj.get(f.keys[c])
			}
			return yield(row, nil)
		})
		if err != nil {
			yield(listsync.Row{}, err)
		}
	}
}

// maxShown is how much of a malformed line its reject shows.
const maxShown = 200

// malformedRow is the reject of a line that is no JSON object. RowFunc's rows have no
// reject of their own, so the row names, as a field the source does not have, what is
// wrong: the sync rejects it with the line's number and that text. Its address, if the
// line holds a valid one, keeps its member from being unsubscribed as missing; else the
// line's text is shown as the address, which is no valid one.
func malformedRow(line int, text []byte, err error) listsync.Row {
	shown := strings.ToValidUTF8(string(text), "\uFFFD")
	if utf8.RuneCountInString(shown) > maxShown {
		shown = string([]rune(shown)[:maxShown]) + "…"
	}
	if email := salvageAddress(text); email != "" {
		return listsync.Row{Line: line, Email: email, Fields: map[string]string{"malformed JSON line: " + err.Error(): ""}}
	}
	if strings.TrimSpace(shown) == "" {
		shown = fmt.Sprintf("(line %d: malformed JSON: %v)", line, err)
	} else {
		shown = fmt.Sprintf("%s (malformed JSON: %v)", shown, err)
	}
	return listsync.Row{Line: line, Email: shown}
}

// salvageAddress returns the first valid address among the quoted strings of a line.
func salvageAddress(text []byte) string {
	parts := bytes.Split(text, []byte(`"`))
	for i := 1; i < len(parts); i += 2 {
		if s := address.Normalize(string(parts[i])); address.Valid(s) {
			return s
		}
	}
	return ""
}

// object is a decoded line: its keys in order, and their values as text.
type object struct {
	keys []string
	vals map[string]string
}

func (o *object) get(key string) string { return o.vals[key] }

// decodeLine decodes one JSON object into obj, its values as text.
func decodeLine(text []byte, obj *object) error {
	obj.keys = obj.keys[:0]
	if obj.vals == nil {
		obj.vals = map[string]string{}
	}
	clear(obj.vals)
	if !utf8.Valid(text) {
		return errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return describe(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return describe(err)
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("a key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return describe(err)
		}
		if _, dup := obj.vals[key]; dup {
			return fmt.Errorf("key %q given twice", key)
		}
		v, err := valueText(raw)
		if err != nil {
			return err
		}
		obj.keys = append(obj.keys, key)
		obj.vals[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return describe(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more after the object (one object per line)")
	}
	return nil
}

// valueText renders a JSON value as the text a CSV cell would hold.
func valueText(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", describe(err)
		}
		return s, nil
	case 'n':
		return "", nil
	case '{', '[':
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return "", describe(err)
		}
		return b.String(), nil
	}
	return string(raw), nil // a number as written, true, false
}

// describe words a decoding error without the package's prefix.
func describe(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the line ends inside the object")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

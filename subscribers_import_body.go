package sendloop

// The body of a subscriber.import call: the batch that holds the checked rows until a
// worker encodes them, the encoder that writes the body, and the reading back of the rows
// that failed.

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
	"github.com/go-sendloop/sendloop/internal/check"
)

// importEncoder writes subscriber.import bodies: ListID, then each row's
// Subscribers[n][EmailAddress] and Subscribers[n][CustomField<id>] keys, rows in order and
// fields by ascending id, written directly rather than through url.Values (which would
// sort thousands of keys). Every batch repeats the same row numbers and field IDs, so it
// keeps each escaped key it has written; it holds no row, and is used by one goroutine.
type importEncoder struct {
	rowKeys   []string // rowKeys[n]: "&Subscribers%5B<n>%5D%5B"
	fieldKeys []string // fieldKeys[id]: "CustomField<id>%5D=", for small ids
	fields    []fieldValue
}

// fieldValue is one custom field of the row being written.
type fieldValue struct {
	id    int
	value string
}

// maxCachedFieldID bounds the field IDs whose keys are kept; larger ones are written each
// time.
const maxCachedFieldID = 1 << 12

// start writes the part of a body that follows the API key.
func (e *importEncoder) start(b []byte, listID int) []byte {
	b = append(b, "&ListID="...)
	return strconv.AppendInt(b, int64(listID), 10)
}

// check reports whether r is well formed, the test of checkImportRow (which says why
// not), and keeps r's custom fields, sorted, for appendChecked: one walk of the map.
func (e *importEncoder) check(r ImportSubscriber) bool {
	e.fields = e.fields[:0]
	for id, v := range r.Fields {
		if check.ID(id) != check.IDValid {
			return false
		}
		e.fields = append(e.fields, fieldValue{id, v})
	}
	if len(e.fields) > 1 {
		slices.SortFunc(e.fields, func(a, b fieldValue) int { return a.id - b.id })
	}
	return address.Valid(r.EmailAddress)
}

// appendRow writes r as row n. r must be well formed.
func (e *importEncoder) appendRow(b []byte, n int, r ImportSubscriber) []byte {
	e.check(r)
	return e.appendChecked(b, n, r.EmailAddress)
}

// appendChecked writes row n: email, and the fields the last check kept.
func (e *importEncoder) appendChecked(b []byte, n int, email string) []byte {
	return e.appendFields(b, n, email, e.fields)
}

// appendFields writes row n: email, and fields (sorted by ID, each ID valid).
func (e *importEncoder) appendFields(b []byte, n int, email string, fields []fieldValue) []byte {
	key := e.rowKey(n)
	b = append(b, key...)
	b = append(b, "EmailAddress%5D="...)
	b = appendQueryEscape(b, email)
	for _, f := range fields {
		b = append(b, key...)
		b = e.appendFieldKey(b, f.id)
		b = appendQueryEscape(b, f.value)
	}
	return b
}

func (e *importEncoder) rowKey(n int) string {
	for len(e.rowKeys) <= n {
		e.rowKeys = append(e.rowKeys, "&Subscribers%5B"+strconv.Itoa(len(e.rowKeys))+"%5D%5B")
	}
	return e.rowKeys[n]
}

func (e *importEncoder) appendFieldKey(b []byte, id int) []byte {
	if id >= maxCachedFieldID {
		b = append(b, "CustomField"...)
		b = strconv.AppendInt(b, int64(id), 10)
		return append(b, "%5D="...)
	}
	if id >= len(e.fieldKeys) {
		e.fieldKeys = slices.Grow(e.fieldKeys, id+1-len(e.fieldKeys))[:id+1]
	}
	if e.fieldKeys[id] == "" {
		e.fieldKeys[id] = "CustomField" + strconv.Itoa(id) + "%5D="
	}
	return append(b, e.fieldKeys[id]...)
}

// queryUnreserved marks the bytes url.QueryEscape leaves as they are.
var queryUnreserved = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~'
	}
	return t
}()

// appendQueryEscape appends s escaped as url.QueryEscape does, copying runs of bytes that
// need no escape at once.
func appendQueryEscape(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for len(s) > 0 {
		i := 0
		for i < len(s) && queryUnreserved[s[i]] {
			i++
		}
		b = append(b, s[:i]...)
		if i == len(s) {
			break
		}
		if c := s[i]; c == ' ' {
			b = append(b, '+')
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
		s = s[i+1:]
	}
	return b
}

type indexedRow struct {
	index int
	row   ImportSubscriber
}

// importBatch is one subscriber.import call of ImportAll. The reader checks each row and
// keeps what the body needs (the address, the custom fields sorted by ID); the worker that
// sends the batch encodes it, so that batches are encoded in parallel. After that the
// batch keeps no reference to the rows: the few that fail are read back from the body
// (rows), so that a batch in flight holds its body and nothing of the caller's. Batches
// are reused, so that a run allocates nothing per row once its first batches exist.
type importBatch struct {
	idx    []int        // each row's index in the sequence
	set    []bool       // whether a row without custom fields had a (non-nil, empty) map
	emails []string     // each row's address, until encoded
	fields []fieldValue // the rows' custom fields, until encoded
	fEnd   []int        // where each row's fields end in fields

	body []byte
	head int   // the length of the part before the rows: key and list
	ends []int // where each row's part of body ends
}

// add appends a checked row with its custom fields, sorted.
func (b *importBatch) add(index int, row ImportSubscriber, fields []fieldValue) {
	b.idx = append(b.idx, index)
	b.set = append(b.set, row.Fields != nil)
	b.emails = append(b.emails, row.EmailAddress)
	b.fields = append(b.fields, fields...)
	b.fEnd = append(b.fEnd, len(b.fields))
}

// n is the number of rows in the batch.
func (b *importBatch) n() int { return len(b.idx) }

// rows reads the batch's rows back from its body.
func (b *importBatch) rows() []indexedRow {
	out := make([]indexedRow, b.n())
	start := b.head
	for k := range out {
		row := decodeImportRow(string(b.body[start:b.ends[k]]))
		if row.Fields == nil && b.set[k] {
			row.Fields = CustomFields{}
		}
		out[k] = indexedRow{b.idx[k], row}
		start = b.ends[k]
	}
	return out
}

// decodeImportRow reads a row that importEncoder wrote back: an exact inverse, since what
// it writes is escaped as url.QueryEscape does.
func decodeImportRow(part string) ImportSubscriber {
	var row ImportSubscriber
	for _, pair := range strings.Split(part, "&")[1:] { // every pair opens with '&'
		key, value, _ := strings.Cut(pair, "=")
		v, _ := url.QueryUnescape(value)
		name := strings.TrimSuffix(key[strings.LastIndex(key, "%5B")+3:], "%5D")
		if name == "EmailAddress" {
			row.EmailAddress = v
			continue
		}
		id, _ := strconv.Atoi(strings.TrimPrefix(name, "CustomField"))
		if row.Fields == nil {
			row.Fields = CustomFields{}
		}
		row.Fields[id] = v
	}
	return row
}

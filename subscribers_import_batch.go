package sendloop

import (
	"net/url"
	"strconv"
	"strings"
)

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

package sendlooptest

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"iter"
	"net/url"
	"slices"
	"strings"
)

// subscriberImport subscribes Subscribers[<n>][EmailAddress] rows at once (no opt-in
// email), in ascending n, counting addresses already in the list, or twice in the batch,
// as duplicates and refused rows as failures. The rows come from parseParams, read in the
// one pass over the body, and are applied under the one lock the request holds.
func subscriberImport(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	rows := c.importRows()
	defer rows.release()
	if len(rows.entries) == 0 {
		return nil, &apiError{code: 105, message: "Required parameter(s) missing", fields: []string{"Subscribers"}}
	}
	var imported, duplicate, failed int
	// Scratch kept between imports: the handler runs under the server's lock.
	seen := c.st.importSeen
	if seen == nil {
		seen = map[string]bool{}
		c.st.importSeen = seen
	}
	defer clear(seen)
	buf := c.st.importBuf
	for row := range rows.all() {
		var email string
		var packed fieldSet
		var bad bool
		buf, email, packed, bad = row.read(buf[:0])
		if bad {
			failed++
			continue
		}
		key := emailKey(email)
		if email != "" && seen[key] {
			duplicate++
			continue
		}
		switch _, f := c.st.join(l, email, c.ip, nil, packed, c.now, true); f {
		case ok:
			seen[key] = true
			imported++
		case failEmailExists:
			seen[key] = true
			duplicate++
		default:
			failed++
		}
	}
	c.st.importBuf = buf
	return object{{"TotalImported", imported}, {"TotalDuplicate", duplicate}, {"TotalFailed", failed}}, nil
}

// importRows returns the rows of an import: the body's, then those of the query string
// (which the form holds) for keys the body lacks.
func (c *call) importRows() *importParams {
	rows := c.rows
	if rows == nil {
		rows = importParamsPool.Get().(*importParams)
	}
	for key, v := range c.form {
		if strings.HasPrefix(key, "Subscribers[") {
			rows.add(key, url.QueryEscape(v[0]))
		}
	}
	if !rows.sorted {
		slices.SortStableFunc(rows.entries, func(a, b importEntry) int { return cmp.Compare(a.row, b.row) })
		rows.sorted = true
	}
	return rows
}

// importRow is the parameters of one import row.
type importRow struct {
	text    []byte
	entries []importEntry
}

// all yields the rows, each as the run of entries that share a row number, in order.
func (p *importParams) all() iter.Seq[importRow] {
	return func(yield func(importRow) bool) {
		entries := p.entries
		for len(entries) > 0 {
			n := 1
			for n < len(entries) && entries[n].row == entries[0].row {
				n++
			}
			if !yield(importRow{p.text, entries[:n]}) {
				return
			}
			entries = entries[n:]
		}
	}
}

// raw returns an entry's escaped value.
func (r importRow) raw(i int) []byte {
	e := r.entries[i]
	return r.text[e.off : e.off+int(e.n)]
}

// read unescapes the row into one string, the trimmed address followed by the packed
// fields (by ascending ID; the first value of a key repeated counts), using buf as scratch.
// bad reports a key that is neither EmailAddress nor CustomField<id>.
func (r importRow) read(buf []byte) (_ []byte, email string, fields fieldSet, bad bool) {
	var idsArray [4]int
	ids := idsArray[:0]
	emailAt := -1
	for i, e := range r.entries {
		switch {
		case e.field == fieldUnknown:
			return buf, "", "", true
		case e.field == fieldEmail:
			if emailAt < 0 {
				emailAt = i
			}
		case !slices.ContainsFunc(ids, func(j int) bool { return r.entries[j].field == e.field }):
			ids = append(ids, i)
		}
	}
	if emailAt >= 0 {
		buf = appendUnescaped(buf, r.raw(emailAt))
	}
	emailLen := len(buf)
	slices.SortFunc(ids, func(a, b int) int { return cmp.Compare(r.entries[a].field, r.entries[b].field) })
	for _, i := range ids {
		raw := r.raw(i)
		buf = binary.AppendUvarint(buf, uint64(r.entries[i].field))
		buf = binary.AppendUvarint(buf, uint64(len(raw)-2*bytes.Count(raw, []byte("%"))))
		buf = appendUnescaped(buf, raw)
	}
	data := string(buf)
	trimmed := strings.TrimSpace(data[:emailLen])
	return buf, trimmed, fieldSet(data[emailLen:]), false
}

// appendUnescaped appends s, an escape formUnescape accepts, unescaped.
func appendUnescaped(b []byte, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b = append(b, ' ')
		case '%':
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return b
}

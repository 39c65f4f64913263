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
// one pass over the body, and decoded by prepareImport before the server's lock is taken
// (serveHTTP): under the lock only the list changes.
func subscriberImport(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	prepared := c.imports
	if prepared == nil {
		rows := importRows(c.form, c.rows)
		defer rows.release()
		prepared = prepareImport(rows)
	}
	if len(prepared.rows) == 0 {
		return nil, &apiError{code: 105, message: "Required parameter(s) missing", fields: []string{"Subscribers"}}
	}
	var imported, duplicate, failed int
	// taken[i]: row i's address is in the list through this batch (added, already there, or
	// a duplicate of such a row), so a later row of the same address is a duplicate.
	taken := make([]bool, len(prepared.rows))
	for i, row := range prepared.rows {
		if row.bad {
			failed++
			continue
		}
		if row.email != "" && row.prev >= 0 && taken[row.prev] {
			taken[i] = true
			duplicate++
			continue
		}
		switch _, f := c.st.joinChecked(l, row.email, row.key, row.valid, c.ip, nil, row.fields, c.now, true); f {
		case ok:
			taken[i] = true
			imported++
		case failEmailExists:
			taken[i] = true
			duplicate++
		default:
			failed++
		}
	}
	return object{{"TotalImported", imported}, {"TotalDuplicate", duplicate}, {"TotalFailed", failed}}, nil
}

// preparedImport is an import's rows decoded, in ascending row order.
type preparedImport struct {
	rows []preparedRow
}

// preparedRow is one import row decoded: what does not depend on the account.
type preparedRow struct {
	email  string   // the trimmed address
	key    string   // its emailKey
	fields fieldSet // the packed custom fields
	valid  bool     // the address passes validEmail
	bad    bool     // a key that is neither EmailAddress nor CustomField<id>: a failure
	prev   int      // the nearest earlier row (not bad) of the same key, or -1
}

// prepareImport decodes the rows of an import (importRows) without the server's lock: it
// reads the request only.
func prepareImport(all *importParams) *preparedImport {
	out := &preparedImport{rows: make([]preparedRow, 0, len(all.entries))}
	last := map[string]int{}
	var buf []byte
	for row := range all.all() {
		var r preparedRow
		buf, r.email, r.fields, r.bad = row.read(buf[:0])
		r.prev = -1
		if !r.bad {
			r.key = emailKey(r.email)
			r.valid = validEmail(r.email)
			if j, found := last[r.key]; found {
				r.prev = j
			}
			last[r.key] = len(out.rows)
		}
		out.rows = append(out.rows, r)
	}
	return out
}

// importRows returns the rows of an import: the body's, then those of the query string
// (which the form holds) for keys the body lacks.
func importRows(form url.Values, rows *importParams) *importParams {
	if rows == nil {
		rows = importParamsPool.Get().(*importParams)
	}
	for key, v := range form {
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

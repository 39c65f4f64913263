package listsync

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// slicePass is a pass over rows held in memory that ends with end (io.EOF, or an error).
// Like csvPass, its scratchRow reuses one array of Values for every row.
type slicePass struct {
	rows    []MappedRow
	end     error
	i       int
	scratch []string
	closed  atomic.Bool
}

func (p *slicePass) next() (int, error) {
	if p.i == len(p.rows) {
		return 0, p.end
	}
	p.i++
	return p.rows[p.i-1].Line, nil
}

func (p *slicePass) row() MappedRow {
	r := p.rows[p.i-1]
	r.Values = append([]string(nil), r.Values...)
	return r
}

func (p *slicePass) scratchRow() MappedRow {
	r := p.rows[p.i-1]
	if r.Values != nil {
		p.scratch = append(p.scratch[:0], r.Values...)
		r.Values = p.scratch
	}
	return r
}

func (p *slicePass) offset() int64 { return int64(p.i) }
func (p *slicePass) close()        { p.closed.Store(true) }

// passRows returns n rows with two values each; every fifth is rejected, without values.
func passRows(n int) []MappedRow {
	rows := make([]MappedRow, n)
	for i := range rows {
		rows[i] = MappedRow{Line: 2*i + 2, Email: emailN(i), Key: emailN(i), Raw: emailN(i),
			Values: []string{"User " + strconv.Itoa(i), strconv.Itoa(i % 3)}}
		if i%5 == 4 {
			rows[i] = MappedRow{Line: 2*i + 2, Raw: "bad" + strconv.Itoa(i), Reject: "no address"}
		}
	}
	return rows
}

// A pass read ahead yields what its inner pass yields, in order: each row, through row and
// scratchRow, and the inner pass's end or error after the last, again at every call.
func TestPrefetchPassYieldsTheInnerPass(t *testing.T) {
	t.Parallel()
	failure := errors.New("the source broke")
	many := prefetchRows*prefetchBatches*2 + 3
	tests := []struct {
		name string
		n    int
		end  error
	}{
		{"empty", 0, io.EOF},
		{"one row", 1, io.EOF},
		{"a batch less one", prefetchRows - 1, io.EOF},
		{"a batch", prefetchRows, io.EOF},
		{"more batches than it keeps", many, io.EOF},
		{"an error at once", 0, failure},
		{"an error after rows", many, failure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows := passRows(tt.n)
			inner := &slicePass{rows: rows, end: tt.end}
			p := prefetch(inner)
			for i, want := range rows {
				line, err := p.next()
				require.NoError(t, err, "row %d", i)
				require.Equal(t, want.Line, line)
				scratch := p.scratchRow()
				assert.Equal(t, want, scratch, "scratchRow %d", i)
				owned := p.row()
				assert.Equal(t, want, owned, "row %d", i)
				if len(owned.Values) > 0 {
					owned.Values[0] = "changed"
					assert.Equal(t, want.Values[0], p.scratchRow().Values[0], "row's Values are its own")
				}
				assert.LessOrEqual(t, int64(i+1), p.offset(), "the offset covers the rows read")
			}
			for range 2 {
				_, err := p.next()
				require.ErrorIs(t, err, tt.end)
			}
			p.close()
			assert.True(t, inner.closed.Load(), "the inner pass is closed")
			p.close() // a second close does nothing
		})
	}
}

// Closed before the end, a pass read ahead stops its goroutine (close returns), closes the
// inner pass, and yields an error after.
func TestPrefetchPassClosedEarly(t *testing.T) {
	t.Parallel()
	inner := &slicePass{rows: passRows(prefetchRows * prefetchBatches * 4), end: io.EOF}
	p := prefetch(inner)
	_, err := p.next()
	require.NoError(t, err)
	p.close()
	assert.True(t, inner.closed.Load())
	_, err = p.next()
	assert.ErrorIs(t, err, errPassClosed)
}

// importRow fills one map for every row: a field empty in a row is absent from its map,
// whatever the rows before it held.
func TestImportRowSharesOneMap(t *testing.T) {
	t.Parallel()
	m, err := mapHeader([]string{"EmailAddress", "First name", "Plan"}, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}})
	require.NoError(t, err)
	tests := []struct {
		values []string
		want   sendloop.CustomFields
	}{
		{[]string{"", ""}, nil},
		{[]string{"Ann", "pro"}, sendloop.CustomFields{1: "Ann", 2: "pro"}},
		{[]string{"", "free"}, sendloop.CustomFields{2: "free"}},
		{[]string{"", ""}, nil},
		{[]string{"Bob", ""}, sendloop.CustomFields{1: "Bob"}},
	}
	var fields sendloop.CustomFields
	for i, tt := range tests {
		sub := importRow(m, MappedRow{Email: "a@example.com", Values: tt.values}, &fields)
		assert.Equal(t, "a@example.com", sub.EmailAddress)
		assert.Equal(t, tt.want, sub.Fields, "row %d", i)
	}
}

// Apply keeps Options.Concurrency imports in flight while it reads the additions ahead:
// the service holds each import until that many have arrived, which they do only if they
// are sent at once.
func TestApplyKeepsImportsInFlight(t *testing.T) {
	t.Parallel()
	const concurrency, batch = 4, 5
	ctx := testContext(t)
	var armed atomic.Bool // demoList's own import goes by
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	hook := func(r sendlooptest.Request) {
		if r.Command != commands.SubscriberImport || !armed.Load() {
			return
		}
		mu.Lock()
		if arrived++; arrived == concurrency {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
	_, c := demoList(t, sendlooptest.WithRequestHook(hook))
	armed.Store(true)
	var rows []Row
	for i := range concurrency * batch * 3 {
		rows = append(rows, Row{Email: fmt.Sprintf("new%03d@example.com", i), Fields: map[string]string{"Plan": "pro"}})
	}
	pl := planRows(t, c, Rows(rows), Options{Concurrency: concurrency})
	require.Equal(t, len(rows), pl.Adds)
	res, err := pl.Apply(ctx, ApplyOptions{BatchSize: batch})
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "the imports waited for each other until the test's deadline")
	assert.Equal(t, len(rows), res.Added)
}

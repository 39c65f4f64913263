package listsync

import (
	"errors"
	"slices"
)

// prefetchRows is how many rows a batch of a read-ahead holds, and prefetchBatches how many
// batches it has: filled ahead, being read, and free.
const (
	prefetchRows    = 256
	prefetchBatches = 4
)

// errPassClosed is what next returns once a read-ahead pass is closed.
var errPassClosed = errors.New("listsync: read of a source after close")

// prefetchPass reads a pass ahead on a goroutine of its own: Apply's additions are parsed
// and mapped there while they are checked against the plan and batched for
// subscriber.import, the two on a core each, so that the first batches are ready sooner
// and a call that ends waits less for the next. It holds at most prefetchBatches ×
// prefetchRows rows, whatever the size of the source.
type prefetchPass struct {
	inner  pass
	filled chan *rowBatch // batches read, in order; closed when the reading goroutine ends
	free   chan *rowBatch // batches to fill again
	stop   chan struct{}
	cur    *rowBatch // the batch being read, at pos
	pos    int
	closed bool
}

// rowBatch is a batch of rows read ahead.
type rowBatch struct {
	lines  []int
	rows   []MappedRow // each row's Values lie in values
	values []string
	starts []int // where each row's Values start in values; -1 for nil Values
	offset int64 // the inner pass's offset after the last row
	err    error // what the inner pass returned after the last row: io.EOF at the end
}

// prefetch starts reading inner ahead; close the pass returned, not inner.
func prefetch(inner pass) pass {
	p := &prefetchPass{inner: inner, filled: make(chan *rowBatch, prefetchBatches),
		free: make(chan *rowBatch, prefetchBatches), stop: make(chan struct{})}
	for range prefetchBatches {
		p.free <- &rowBatch{}
	}
	go p.fill()
	return p
}

// fill reads the inner pass into batches until its end, an error, or close.
func (p *prefetchPass) fill() {
	defer close(p.filled)
	for {
		var b *rowBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.lines, b.rows, b.values, b.starts, b.err = b.lines[:0], b.rows[:0], b.values[:0], b.starts[:0], nil
		for len(b.rows) < prefetchRows {
			line, err := p.inner.next()
			if err != nil {
				b.err = err
				break
			}
			row := p.inner.scratchRow()
			start := -1
			if row.Values != nil {
				start = len(b.values)
				b.values = append(b.values, row.Values...)
			}
			b.lines, b.rows, b.starts = append(b.lines, line), append(b.rows, row), append(b.starts, start)
		}
		// The values are copied: scratchRow's are the inner pass's until its next record.
		// They are pointed at once the batch is full, when values no longer moves.
		for i, start := range b.starts {
			if start >= 0 {
				n := len(b.rows[i].Values)
				b.rows[i].Values = b.values[start : start+n : start+n]
			}
		}
		b.offset = p.inner.offset()
		select {
		case p.filled <- b:
		case <-p.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

func (p *prefetchPass) next() (int, error) {
	if p.cur != nil && p.pos < len(p.cur.rows) {
		p.pos++
	}
	for p.cur == nil || p.pos == len(p.cur.rows) {
		if p.cur != nil && p.cur.err != nil {
			return 0, p.cur.err // the end, or the error, again
		}
		if p.cur != nil {
			p.free <- p.cur // never blocks: there are as many batches as places
			p.cur = nil
		}
		b, ok := <-p.filled
		if !ok { // closed, or stopped before the end
			p.cur = &rowBatch{err: errPassClosed}
			continue
		}
		p.cur, p.pos = b, 0
	}
	return p.cur.lines[p.pos], nil
}

// row returns the current row, its Values its own.
func (p *prefetchPass) row() MappedRow {
	r := p.cur.rows[p.pos]
	r.Values = slices.Clone(r.Values)
	return r
}

// scratchRow returns the current row, its Values valid until the next call to next.
func (p *prefetchPass) scratchRow() MappedRow { return p.cur.rows[p.pos] }

func (p *prefetchPass) offset() int64 {
	if p.cur == nil {
		return 0
	}
	return p.cur.offset
}

// close stops the reading ahead, waits until it has stopped, and closes the inner pass.
func (p *prefetchPass) close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	for range p.filled {
	}
	p.inner.close()
	p.cur = &rowBatch{err: errPassClosed}
}

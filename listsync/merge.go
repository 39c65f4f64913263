package listsync

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
)

// mergeBuffer is the read buffer of each run while runs are merged.
const mergeBuffer = 8 << 10

// all yields every record in order; it may be called any number of times.
func (s *sorter) all() iter.Seq2[rec, error] {
	return func(yield func(rec, error) bool) {
		c, err := s.cursor()
		if err != nil {
			yield(rec{}, err)
			return
		}
		for {
			r, ok, err := c.next()
			if err != nil {
				yield(rec{}, err)
				return
			}
			if !ok || !yield(r, nil) {
				return
			}
		}
	}
}

// cursor returns a reader of every record in order, for a caller that reads two sorters
// side by side (iter.Pull would switch goroutines at every record); it may be called any
// number of times.
func (s *sorter) cursor() (*cursor, error) {
	if err := s.finish(); err != nil {
		return nil, err
	}
	if s.f == nil {
		return &cursor{held: s.buf}, nil
	}
	m := &merger{byLine: s.byLine}
	start := int64(0)
	for _, end := range s.runs {
		rd := &runReader{src: io.NewSectionReader(s.f, start, end-start), buf: make([]byte, 0, mergeBuffer/recSize*recSize)}
		start = end
		var head rec
		ok, err := rd.next(&head)
		if err != nil {
			return nil, err
		}
		if ok {
			m.runs = append(m.runs, rd)
			m.heads = append(m.heads, head)
		}
	}
	m.init()
	return &cursor{merge: m}, nil
}

// cursor reads a sorter's records in order: those it holds, or its runs merged.
type cursor struct {
	held  []rec
	merge *merger
}

// next returns the next record; false after the last.
func (c *cursor) next() (rec, bool, error) {
	if c.merge == nil {
		if len(c.held) == 0 {
			return rec{}, false, nil
		}
		r := c.held[0]
		c.held = c.held[1:]
		return r, true, nil
	}
	m := c.merge
	if len(m.runs) == 0 {
		return rec{}, false, nil
	}
	w := m.tree[0]
	if m.ended[w] {
		return rec{}, false, nil // the winner has ended: every run has
	}
	r := m.heads[w]
	ok, err := m.runs[w].next(&m.heads[w])
	if err != nil {
		return rec{}, false, err
	}
	m.ended[w] = !ok
	m.replay(w)
	return r, true, nil
}

// aheadBatch is how many records a cursor's read-ahead hands over at a time.
const aheadBatch = 1024

// ahead reads a cursor whose runs are merged on a goroutine of its own, a few batches
// ahead: join merges the members and the rows, each from dozens of runs, and the two
// merges then take a core each instead of taking turns on one. A cursor over records held
// in memory is read as it is.
type ahead struct {
	cur     *cursor
	batches chan aheadResult // filled batches, in order
	free    chan []rec       // batches read, to fill again
	stop    chan struct{}
	batch   []rec // the batch being read, from pos
	pos     int
	err     error
	done    bool
}

type aheadResult struct {
	recs []rec
	err  error // after recs; io.EOF at the end
}

// readAhead starts reading c ahead; close must be called once the records are read, or
// the reading ends early.
func readAhead(c *cursor) *ahead {
	a := &ahead{cur: c}
	if c.merge == nil {
		return a
	}
	const inFlight = 3
	a.batches, a.free, a.stop = make(chan aheadResult, inFlight), make(chan []rec, inFlight), make(chan struct{})
	for range inFlight {
		a.free <- make([]rec, 0, aheadBatch)
	}
	go a.fill()
	return a
}

func (a *ahead) fill() {
	defer close(a.batches)
	for {
		var buf []rec
		select {
		case buf = <-a.free:
		case <-a.stop:
			return
		}
		buf = buf[:0]
		var end error
		for len(buf) < aheadBatch {
			r, ok, err := a.cur.next()
			if err != nil || !ok {
				end = cmp.Or(err, io.EOF)
				break
			}
			buf = append(buf, r)
		}
		select {
		case a.batches <- aheadResult{buf, end}:
		case <-a.stop:
			return
		}
		if end != nil {
			return
		}
	}
}

// next returns the next record; false after the last.
func (a *ahead) next() (rec, bool, error) {
	if a.batches == nil {
		return a.cur.next()
	}
	for a.pos == len(a.batch) {
		if a.done {
			if a.err == io.EOF {
				return rec{}, false, nil
			}
			return rec{}, false, a.err
		}
		if a.batch != nil {
			a.free <- a.batch // never blocks: there are as many batches as places
			a.batch = nil
		}
		res, ok := <-a.batches
		if !ok { // not reached: the last batch carries io.EOF or an error
			a.done, a.err = true, io.EOF
			continue
		}
		a.batch, a.pos = res.recs, 0
		if res.err != nil {
			a.done, a.err = true, res.err
		}
	}
	r := a.batch[a.pos]
	a.pos++
	return r, true, nil
}

// close stops the reading ahead and waits until it has stopped.
func (a *ahead) close() {
	if a.batches == nil || a.err == errReadAfterClose {
		return
	}
	close(a.stop)
	for range a.batches {
	}
	// A read after this is an error, not the merge resumed where fill left it.
	a.batch, a.pos, a.done, a.err = nil, 0, true, errReadAfterClose
}

var errReadAfterClose = errors.New("listsync: read ahead after close")

// runReader reads the records of a run, a buffer at a time.
type runReader struct {
	src *io.SectionReader
	buf []byte // the bytes read and not yet decoded are buf[pos:]
	pos int
}

// next decodes the next record into r; false after the last.
func (rr *runReader) next(r *rec) (bool, error) {
	if len(rr.buf)-rr.pos < recSize {
		left := copy(rr.buf[:cap(rr.buf)], rr.buf[rr.pos:])
		n, err := io.ReadAtLeast(rr.src, rr.buf[left:cap(rr.buf)], recSize-left)
		rr.buf, rr.pos = rr.buf[:left+n], 0
		switch {
		case errors.Is(err, io.EOF) && left == 0:
			return false, nil
		case err != nil:
			return false, fmt.Errorf("reading the plan's temporary file: %w", err)
		}
	}
	r.get(rr.buf[rr.pos:])
	rr.pos += recSize
	return true, nil
}

// merger merges runs through a tree of losers: each inner node keeps the run that lost the
// match played there, and the root (tree[0]) the winner, the run with the smallest head. A
// new head plays only the matches on its way to the root, one comparison a level, where a
// heap makes two; the heads lie side by side rather than behind a pointer a run. Equal heads
// come out in run order. A run that has ended loses every match.
type merger struct {
	byLine bool
	runs   []*runReader
	heads  []rec  // each run's next record
	ended  []bool // whether each run has ended
	tree   []int  // tree[0]: the winner; tree[n], n ≥ 1: the loser of the match at node n
}

// less reports whether run a's head comes before run b's.
func (m *merger) less(a, b int) bool {
	switch {
	case m.ended[a]:
		return false
	case m.ended[b]:
		return true
	}
	ha, hb := &m.heads[a], &m.heads[b]
	switch { // byKey or bySeq, spelt out: this runs a few times per record
	case m.byLine:
	case ha.k1 != hb.k1:
		return ha.k1 < hb.k1
	case ha.k2 != hb.k2:
		return ha.k2 < hb.k2
	}
	if ha.seq != hb.seq {
		return ha.seq < hb.seq
	}
	return a < b
}

// init plays every match, leaves first: run i is leaf k+i, node n's players are 2n, 2n+1.
func (m *merger) init() {
	k := len(m.runs)
	m.ended = make([]bool, k)
	m.tree = make([]int, k)
	if k == 0 {
		return
	}
	winners := make([]int, 2*k)
	for i := range k {
		winners[k+i] = i
	}
	for n := k - 1; n >= 1; n-- {
		a, b := winners[2*n], winners[2*n+1]
		if m.less(b, a) {
			a, b = b, a
		}
		winners[n], m.tree[n] = a, b
	}
	m.tree[0] = winners[1]
	if k == 1 {
		m.tree[0] = 0
	}
}

// replay plays the matches of run w, whose head changed, up to the root.
func (m *merger) replay(w int) {
	for n := (w + len(m.runs)) / 2; n >= 1; n /= 2 {
		if m.less(m.tree[n], w) {
			m.tree[n], w = w, m.tree[n]
		}
	}
	m.tree[0] = w
}

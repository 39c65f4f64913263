package listsync

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"sync"
)

// recSize is the size of a rec on disk.
const recSize = 48

// runRecords is how many records a sorter holds in memory before it writes them out, sorted,
// as a run: 16,384 records are 768 KiB.
const runRecords = 16 << 10

// smallRun is how many records a sorter holds in a buffer of its first size; past it, it
// takes a buffer of runRecords.
const smallRun = 1024

// mergeBuffer is the read buffer of each run while runs are merged.
const mergeBuffer = 8 << 10

// rec is the fixed-size record the plan sorts: a member of the list, a suppressed address,
// a row of the file, or a decision about a row. What each field holds depends on the kind.
type rec struct {
	k1, k2 uint64 // fingerprint of the lower-cased address
	vals   uint64 // fingerprint of the mapped fields' values
	off    uint64 // member: offset of its address and values in the member file
	id     uint32 // member: subscriber ID; duplicate decision: the first row's line
	seq    uint32 // member: browse order; row and decision: line
	kind   uint32
	n      uint32 // member: length of its text in the member file
}

func (r *rec) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:], r.k1)
	binary.LittleEndian.PutUint64(b[8:], r.k2)
	binary.LittleEndian.PutUint64(b[16:], r.vals)
	binary.LittleEndian.PutUint64(b[24:], r.off)
	binary.LittleEndian.PutUint32(b[32:], r.id)
	binary.LittleEndian.PutUint32(b[36:], r.seq)
	binary.LittleEndian.PutUint32(b[40:], r.kind)
	binary.LittleEndian.PutUint32(b[44:], r.n)
}

func (r *rec) get(b []byte) {
	r.k1 = binary.LittleEndian.Uint64(b[0:])
	r.k2 = binary.LittleEndian.Uint64(b[8:])
	r.vals = binary.LittleEndian.Uint64(b[16:])
	r.off = binary.LittleEndian.Uint64(b[24:])
	r.id = binary.LittleEndian.Uint32(b[32:])
	r.seq = binary.LittleEndian.Uint32(b[36:])
	r.kind = binary.LittleEndian.Uint32(b[40:])
	r.n = binary.LittleEndian.Uint32(b[44:])
}

// byKey orders records by address fingerprint, then by seq.
func byKey(a, b rec) int {
	switch {
	case a.k1 != b.k1:
		return cmpU64(a.k1, b.k1)
	case a.k2 != b.k2:
		return cmpU64(a.k2, b.k2)
	}
	return cmpU64(uint64(a.seq), uint64(b.seq))
}

// bySeq orders records by seq alone.
func bySeq(a, b rec) int { return cmpU64(uint64(a.seq), uint64(b.seq)) }

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sorter sorts any number of records in bounded memory: it keeps up to runRecords of them,
// and writes each full batch, sorted, as a run of a temporary file, on a goroutine of its
// own while the next batch fills (so up to two batches and the sort's scratch are held);
// reading merges the runs.
type sorter struct {
	cmp    func(a, b rec) int
	byLine bool // cmp is bySeq: the leading key is seq, not k1
	dir    string
	buf    []rec
	tmp    []rec // the radix sort's other half
	f      *os.File
	w      *bufio.Writer
	runs   []int64 // end offset of each run in f
	size   int64
	done   bool
	n      int

	// A full buffer is sorted and written by a goroutine of its own while the caller fills
	// another: the run's sort and write take a second core instead of stalling the reading.
	spilling chan error // the run being written, nil when none is
	writing  []rec      // its records, which become spare once it is written
	spare    []rec      // an emptied buffer, to fill next

	bufs *runBuffers // shared with the plan's other sorters; nil: its own
}

// runBuffers keeps the run buffers of a plan's sorters once they are done with them, for
// the next sorter to fill: the rows' buffers are free when the source is read, and the
// decisions fill theirs during the join. A fresh buffer costs a page fault per 4 KiB on
// first touch (192 for a run, about 2.5 ms on a virtual machine), and a sorter takes three.
type runBuffers struct {
	mu      sync.Mutex
	free    [][]rec
	dropped bool
}

// get returns an empty buffer of runRecords, a free one if any.
func (b *runBuffers) get() []rec {
	if buf := b.take(); buf != nil {
		return buf
	}
	return make([]rec, 0, runRecords)
}

// take returns a free buffer, or nil when there is none.
func (b *runBuffers) take() []rec {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.free)
	if n == 0 {
		return nil
	}
	buf := b.free[n-1]
	b.free[n-1] = nil
	b.free = b.free[:n-1]
	return buf[:0]
}

// put gives back buffers a sorter no longer uses; those not of a run's size are left to
// the garbage collector.
func (b *runBuffers) put(bufs ...[]rec) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, buf := range bufs {
		if cap(buf) == runRecords && !b.dropped {
			b.free = append(b.free, buf[:0])
		}
	}
}

// drop lets the free buffers go, and those given back later: no sorter will want them.
func (b *runBuffers) drop() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.free, b.dropped = nil, true
}

// newSorter returns a sorter by key (byKey: the address fingerprint, then seq) or, with
// byLine, by seq alone.
func newSorter(dir string, byLine bool) *sorter {
	s := &sorter{cmp: byKey, dir: dir, byLine: byLine}
	if byLine {
		s.cmp = bySeq
	}
	return s
}

// add adds a record; it may not be called after all.
func (s *sorter) add(r rec) error {
	if s.done {
		return errors.New("listsync: sorter: add after read")
	}
	switch {
	case s.buf == nil:
		if s.buf = s.bufs.take(); s.buf == nil {
			s.buf = make([]rec, 0, smallRun)
		}
	case len(s.buf) == smallRun && cap(s.buf) == smallRun:
		// Past a small list's worth, a run's buffer at once rather than grown by doubling:
		// each step would copy the records and fault in fresh memory.
		s.buf = append(s.bufs.get(), s.buf...)
	}
	s.n++
	s.buf = append(s.buf, r)
	if len(s.buf) == runRecords {
		return s.spillBehind()
	}
	return nil
}

// spillBehind starts writing the full buffer as a run, and takes an empty one to fill.
func (s *sorter) spillBehind() error {
	if err := s.waitSpill(); err != nil {
		return err
	}
	full := s.buf
	if s.spare == nil {
		s.spare = s.bufs.get()
	}
	s.buf, s.spare = s.spare[:0], nil
	done := make(chan error, 1)
	s.spilling, s.writing = done, full
	go func() { done <- s.writeRun(full) }()
	return nil
}

// waitSpill waits for the run being written, if any, and returns its error.
func (s *sorter) waitSpill() error {
	if s.spilling == nil {
		return nil
	}
	err := <-s.spilling
	s.spilling, s.spare, s.writing = nil, s.writing[:0], nil
	return err
}

// sortBuf sorts the records held: by radix on the leading bytes of the leading key (8 bits
// at a time, stable), then by cmp within the short stretches that share them. The address
// fingerprints are uniform, so their top 24 bits leave stretches of about one record at a
// run's size: three passes instead of eight. A third of the CPU of a comparison sort at a
// million records.
func (s *sorter) sortBuf() { s.sortRecs(s.buf) }

// sortRecs sorts buf as sortBuf does, using s.tmp.
func (s *sorter) sortRecs(buf []rec) {
	lead, first, passes := func(r *rec) uint64 { return r.k1 }, 5, 3
	if s.byLine {
		lead, first, passes = func(r *rec) uint64 { return uint64(r.seq) }, 0, 4
	}
	if len(buf) < 256 {
		slices.SortStableFunc(buf, s.cmp)
		return
	}
	if cap(s.tmp) < len(buf) {
		if s.tmp = s.bufs.take(); cap(s.tmp) < len(buf) {
			s.tmp = make([]rec, len(buf))
		}
	}
	src, dst := buf, s.tmp[:len(buf)]
	for pass := first; pass < first+passes; pass++ {
		shift := uint(pass * 8)
		var count [257]int
		for i := range src {
			count[int(byte(lead(&src[i])>>shift))+1]++
		}
		if count[int(byte(lead(&src[0])>>shift))+1] == len(src) {
			continue // every record has this byte
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for i := range src {
			b := byte(lead(&src[i]) >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &buf[0] {
		copy(buf, src)
	}
	shift := uint(first * 8)
	for i := 0; i < len(buf); {
		j := i + 1
		for j < len(buf) && lead(&buf[j])>>shift == lead(&buf[i])>>shift {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(buf[i:j], s.cmp)
		}
		i = j
	}
}

// spill writes the records held as a sorted run.
func (s *sorter) spill() error {
	if err := s.writeRun(s.buf); err != nil {
		return err
	}
	s.buf = s.buf[:0]
	return nil
}

// writeRun sorts buf and writes it as a run.
func (s *sorter) writeRun(buf []rec) error {
	s.sortRecs(buf)
	if s.f == nil {
		f, err := createTemp(s.dir, "sendloop-sync-run-*")
		if err != nil {
			return err
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	var b [recSize]byte
	for i := range buf {
		buf[i].put(b[:])
		if _, err := s.w.Write(b[:]); err != nil {
			return err
		}
	}
	s.size += int64(len(buf)) * recSize
	s.runs = append(s.runs, s.size)
	return nil
}

// finish sorts what is held, writing it out if earlier records were.
func (s *sorter) finish() error {
	if s.done {
		return nil
	}
	s.done = true
	if err := s.waitSpill(); err != nil {
		return err
	}
	if s.f == nil {
		s.sortBuf()
		s.bufs.put(s.tmp, s.spare)
		s.tmp, s.spare = nil, nil
		return nil
	}
	if len(s.buf) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.bufs.put(s.buf, s.tmp, s.spare)
	s.buf, s.tmp, s.spare = nil, nil, nil
	return s.w.Flush()
}

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

// close closes the temporary file.
func (s *sorter) close() {
	s.waitSpill() // its error is of no interest once the records are not wanted
	if s.f != nil {
		closeTemp(s.f)
		s.f = nil
	}
}

// createTemp creates a temporary file in dir ("" means os.TempDir()) and removes its name
// at once: the plan uses the open file only, so nothing is left behind when the process
// dies by a signal it cannot catch (SIGKILL, the OOM killer, SIGPIPE from `| head`).
func createTemp(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("the plan's temporary file: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// closeTemp closes a file of createTemp and removes it, where an open file could not be
// removed (Windows).
func closeTemp(f *os.File) {
	name := f.Name()
	f.Close()
	os.Remove(name)
}

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

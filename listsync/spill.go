package listsync

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
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
	spilling chan spilled // the run being written, nil when none is
	spare    []rec        // an emptied buffer, to fill next

	bufs *runBuffers // shared with the plan's other sorters; nil: its own
}

// spilled is a run written behind: its buffer, emptied, and the write's error.
type spilled struct {
	buf []rec
	err error
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
	done := make(chan spilled, 1)
	s.spilling = done
	go func() { done <- spilled{full[:0], s.writeRun(full)} }()
	return nil
}

// waitSpill waits for the run being written, if any, and returns its error.
func (s *sorter) waitSpill() error {
	if s.spilling == nil {
		return nil
	}
	run := <-s.spilling
	s.spilling, s.spare = nil, run.buf
	return run.err
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

package listsync

import (
	"math/rand/v2"
	"testing"
)

// The read-ahead of a merge hands on a failure to read a run after the records before it,
// and stops when closed before the end, its goroutine included.
func TestReadAheadFailureAndClose(t *testing.T) {
	t.Parallel()
	newSpilled := func(t *testing.T) *sorter {
		s := newSorter(t.TempDir(), false)
		t.Cleanup(s.close)
		rng := rand.New(rand.NewPCG(7, 8))
		for i := range 3 * runRecords {
			if err := s.add(rec{k1: rng.Uint64(), seq: uint32(i)}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	t.Run("failure", func(t *testing.T) {
		t.Parallel()
		s := newSpilled(t)
		c, err := s.cursor()
		if err != nil {
			t.Fatal(err)
		}
		// Cut the file inside the last run: its reader fails once its buffered records are read.
		if err := s.f.Truncate(s.size - recSize*runRecords/2 - 1); err != nil {
			t.Fatal(err)
		}
		a := readAhead(c)
		defer a.close()
		n := 0
		for {
			_, ok, err := a.next()
			if err != nil {
				break
			}
			if !ok {
				t.Fatalf("the end after %d records, want an error", n)
			}
			n++
		}
		if n == 0 || n >= 3*runRecords {
			t.Errorf("%d records before the error", n)
		}
		if _, ok, err := a.next(); ok || err == nil {
			t.Errorf("after the error: %t, %v; want the error again", ok, err)
		}
	})
	t.Run("close early", func(t *testing.T) {
		t.Parallel()
		s := newSpilled(t)
		c, err := s.cursor()
		if err != nil {
			t.Fatal(err)
		}
		a := readAhead(c)
		if _, ok, err := a.next(); !ok || err != nil {
			t.Fatal(ok, err)
		}
		a.close() // returns once the goroutine has stopped: it would block forever otherwise
		a.close()
		if _, ok, err := a.next(); ok || err == nil {
			t.Errorf("a read after close: %t, %v; want an error", ok, err)
		}
	})
}

// heapMerge is the merge as it was, the baseline of BenchmarkMergeRuns: a binary heap of
// run indexes by head, two comparisons a level.
type heapMerge struct {
	m    *merger
	heap []int
}

func newHeapMerge(m *merger) *heapMerge {
	h := &heapMerge{m: m}
	for i := range m.runs {
		h.heap = append(h.heap, i)
	}
	for i := len(h.heap)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

func (h *heapMerge) less(a, b int) bool {
	if h.m.byLine {
		return h.m.heads[a].seq < h.m.heads[b].seq
	}
	return byKey(h.m.heads[a], h.m.heads[b]) < 0
}

func (h *heapMerge) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.heap) {
			return
		}
		j := l
		if r := l + 1; r < len(h.heap) && h.less(h.heap[r], h.heap[l]) {
			j = r
		}
		if !h.less(h.heap[j], h.heap[i]) {
			return
		}
		h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
		i = j
	}
}

func (h *heapMerge) next() (rec, bool, error) {
	if len(h.heap) == 0 {
		return rec{}, false, nil
	}
	top := h.heap[0]
	r := h.m.heads[top]
	ok, err := h.m.runs[top].next(&h.m.heads[top])
	if err != nil {
		return rec{}, false, err
	}
	if !ok {
		h.heap[0] = h.heap[len(h.heap)-1]
		h.heap = h.heap[:len(h.heap)-1]
	}
	h.down(0)
	return r, true, nil
}

// BenchmarkMergeRuns reads back a sorter of 32 runs (half a million records, as a list of
// that size leaves them): the cost of the merge per record, through the tree of losers and
// through the heap it replaced (the baseline).
func BenchmarkMergeRuns(b *testing.B) {
	const n = 32 * runRecords
	s := newSorter(b.TempDir(), false)
	defer s.close()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range n {
		if err := s.add(rec{k1: rng.Uint64(), k2: rng.Uint64(), seq: uint32(i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name string
		next func(c *cursor) func() (rec, bool, error)
	}{
		{"loser-tree", func(c *cursor) func() (rec, bool, error) { return c.next }},
		{"baseline=heap", func(c *cursor) func() (rec, bool, error) { return newHeapMerge(c.merge).next }},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				c, err := s.cursor()
				if err != nil {
					b.Fatal(err)
				}
				next := tt.next(c)
				got := 0
				for {
					_, ok, err := next()
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						break
					}
					got++
				}
				if got != n {
					b.Fatalf("%d records of %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
		})
	}
}

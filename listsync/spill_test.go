package listsync

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkSorter adds recs to a sorter and checks that it yields them all, in order, twice.
func checkSorter(t *testing.T, recs []rec, byLine bool) {
	t.Helper()
	s := newSorter(t.TempDir(), byLine)
	cmp := s.cmp
	defer s.close()
	for _, r := range recs {
		if err := s.add(r); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(recs)
	slices.SortStableFunc(want, cmp)
	for pass := range 2 {
		var got []rec
		for r, err := range s.all() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r)
		}
		if len(got) != len(want) {
			t.Fatalf("pass %d: %d records, want %d", pass, len(got), len(want))
		}
		for i := range got {
			if cmp(got[i], want[i]) != 0 {
				t.Fatalf("pass %d: record %d is %+v, want %+v", pass, i, got[i], want[i])
			}
		}
	}
	c, err := s.cursor()
	if err != nil {
		t.Fatal(err)
	}
	a := readAhead(c)
	defer a.close()
	for i := 0; ; i++ {
		r, ok, err := a.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if i != len(want) {
				t.Fatalf("read ahead: %d records, want %d", i, len(want))
			}
			break
		}
		if cmp(r, want[i]) != 0 {
			t.Fatalf("read ahead: record %d is %+v, want %+v", i, r, want[i])
		}
	}
	if err := s.add(rec{}); err == nil {
		t.Error("add after reading succeeded")
	}
}

func TestSorter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 100, runRecords - 1, runRecords, runRecords + 1, 3*runRecords + 17}
	if raceEnabled {
		// The sorter runs on its caller's goroutine alone: the race detector has nothing to
		// find in it, and every size took 17 s under it. The run without -race checks them
		// all; this one keeps a spill.
		sizes = []int{0, 1, 100, runRecords + 1}
	}
	for _, n := range sizes {
		recs := make([]rec, n)
		for i := range recs {
			// Few distinct keys, so that equal keys are ordered by seq.
			recs[i] = rec{k1: rng.Uint64N(50), k2: rng.Uint64N(3), vals: rng.Uint64(), off: rng.Uint64(),
				id: rng.Uint32(), seq: uint32(i), kind: rng.Uint32N(8), n: rng.Uint32()}
		}
		checkSorter(t, recs, false)
		// By seq, with repeated and unordered seqs.
		for i := range recs {
			recs[i].seq = rng.Uint32N(uint32(n/2 + 1))
		}
		checkSorter(t, recs, true)
		// Keys that differ above the low bytes only, and wide seqs.
		for i := range recs {
			recs[i].k1 = rng.Uint64N(4) << 56
			recs[i].seq = rng.Uint32()
		}
		checkSorter(t, recs, false)
		checkSorter(t, recs, true)
		// Keys that differ below the bytes sorted by radix only, and uniform keys (the
		// fingerprints), some repeated.
		for i := range recs {
			recs[i].k1 = rng.Uint64N(1 << 40)
		}
		checkSorter(t, recs, false)
		for i := range recs {
			recs[i].k1 = rng.Uint64()
			if i%7 == 3 {
				recs[i].k1 = recs[i/2].k1
			}
		}
		checkSorter(t, recs, false)
	}
}

// sortedRecs reads every record of a sorter.
func sortedRecs(t *testing.T, s *sorter) []rec {
	t.Helper()
	var got []rec
	for r, err := range s.all() {
		require.NoError(t, err)
		got = append(got, r)
	}
	return got
}

// The sorters of a plan share their run buffers: a sorter that has written its last run
// gives back its three (the one filled, the one written behind it, the radix sort's), the
// next takes them instead of fresh memory, and both sort as they would alone. Once the
// buffers are dropped, nothing given back is kept.
func TestSortersShareRunBuffers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	recs := make([]rec, 2*runRecords+5)
	for i := range recs {
		recs[i] = rec{k1: rng.Uint64(), k2: rng.Uint64N(3), seq: rng.Uint32N(uint32(len(recs)))}
	}
	pool := new(runBuffers)
	dir := t.TempDir()
	for _, tt := range []struct {
		byLine   bool
		freeLeft int
	}{
		{byLine: false, freeLeft: 3}, // the first sorter finds no buffer and gives back three
		{byLine: true, freeLeft: 3},  // the second takes those three and gives them back
	} {
		s := newSorter(dir, tt.byLine)
		s.bufs = pool
		for _, r := range recs {
			require.NoError(t, s.add(r))
		}
		if tt.byLine {
			require.Empty(t, pool.free, "the second sorter took fresh buffers while free ones were kept")
		}
		got := sortedRecs(t, s)
		require.Len(t, pool.free, tt.freeLeft)
		want := slices.Clone(recs)
		slices.SortStableFunc(want, s.cmp)
		require.Equal(t, want, got)
		s.close()
	}
	pool.drop()
	require.Empty(t, pool.free)
	s := newSorter(dir, false)
	s.bufs = pool
	for _, r := range recs {
		require.NoError(t, s.add(r))
	}
	require.NoError(t, s.finish())
	require.Empty(t, pool.free, "buffers given back after the drop were kept")
	s.close()
}

// A run that cannot be written fails the sorter: its goroutine's error comes back from a
// later add or from finish, not lost.
func TestSorterSpillFailure(t *testing.T) {
	t.Parallel()
	s := newSorter(filepath.Join(t.TempDir(), "missing"), false)
	defer s.close()
	var err error
	for i := 0; i < 2*runRecords+1 && err == nil; i++ {
		err = s.add(rec{k1: uint64(i)})
	}
	if err == nil {
		err = s.finish()
	}
	require.ErrorContains(t, err, "temporary file")
}

// FuzzRec: a record survives its encoding, and any 48 bytes decode to one that encodes back
// to them.
func FuzzRec(f *testing.F) {
	f.Add(make([]byte, recSize))
	seed := make([]byte, recSize)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < recSize {
			return
		}
		var r rec
		r.get(b[:recSize])
		out := make([]byte, recSize)
		r.put(out)
		if string(out) != string(b[:recSize]) {
			t.Fatalf("%x decoded and encoded again is %x", b[:recSize], out)
		}
	})
}

// FuzzSorter sorts records made from the fuzzer's bytes, spilling when there are many.
func FuzzSorter(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint16(3))
	f.Add(make([]byte, 64), uint16(runRecords+5))
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		if len(b) < 8 {
			return
		}
		recs := make([]rec, int(n)%(2*runRecords+3))
		x := binary.LittleEndian.Uint64(b)
		for i := range recs {
			k := uint64(b[i%len(b)]) ^ x>>(i%64)
			recs[i] = rec{k1: k % 97, k2: k % 5, seq: uint32(i), id: uint32(k)}
		}
		checkSorter(t, recs, false)
		checkSorter(t, recs, true)
	})
}

// BenchmarkSortRun sorts a run of random records as a sorter does before writing it out,
// against slices.SortFunc, the baseline.
func BenchmarkSortRun(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]rec, runRecords)
	for i := range recs {
		recs[i] = rec{k1: rng.Uint64(), k2: rng.Uint64(), seq: uint32(i)}
	}
	b.Run("radix", func(b *testing.B) {
		b.ReportAllocs()
		s := newSorter(b.TempDir(), false)
		for range b.N {
			s.buf = append(s.buf[:0], recs...)
			s.sortBuf()
		}
	})
	b.Run("baseline=slices.SortFunc", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]rec, 0, len(recs))
		for range b.N {
			buf = append(buf[:0], recs...)
			slices.SortFunc(buf, byKey)
		}
	})
}

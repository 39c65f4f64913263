package listsync

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A compaction merges a sorter's runs into one that reads as they did; stopped before it
// starts or part way, it leaves the runs as they were, which read as before. A sorter of
// one run, or held in memory, is left alone.
func TestSorterCompact(t *testing.T) {
	t.Parallel()
	never := func() bool { return false }
	calls := func(n int) func() bool { // false for the first n calls, then true
		return func() bool { n--; return n < 0 }
	}
	tests := []struct {
		name     string
		n        int
		stop     func() bool
		wantRuns int
	}{
		{"runs merged", 3*runRecords + 17, never, 1},
		{"stopped before it starts", 3*runRecords + 17, calls(0), 4},
		{"stopped part way", 3*runRecords + 17, calls(2), 4},
		{"one run", runRecords, never, 1},
		{"held in memory", 100, never, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(5, 6))
			s := newSorter(t.TempDir(), false)
			defer s.close()
			recs := make([]rec, tt.n)
			for i := range recs {
				recs[i] = rec{k1: rng.Uint64N(1000), k2: rng.Uint64(), seq: uint32(i), id: rng.Uint32()}
				require.NoError(t, s.add(recs[i]))
			}
			require.NoError(t, s.compact(tt.stop))
			assert.Len(t, s.runs, tt.wantRuns)
			want := slices.Clone(recs)
			slices.SortStableFunc(want, byKey)
			var got []rec
			for r, err := range s.all() {
				require.NoError(t, err)
				got = append(got, r)
			}
			assert.Equal(t, want, got)
		})
	}

}

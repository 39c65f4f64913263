package smtp

import (
	"math/rand/v2"
	"testing"
)

// TestTable64 checks the table against Go maps, with keys that collide on purpose (few
// distinct hashes, and 0).
func TestTable64(t *testing.T) {
	t.Parallel()
	for _, keys := range []uint64{1, 7, 1000, 1 << 62} {
		rng := rand.New(rand.NewPCG(keys, 64))
		var tbl, set table64
		want := map[uint64]uint64{}
		wantSet := map[[2]uint64]bool{}
		for i := range 4000 {
			k, v := rng.Uint64N(keys), rng.Uint64N(50)
			if keys == 1<<62 && i%100 == 0 {
				k = 0
			}
			tbl.put(k, v)
			want[max(k, 1)] = v
			if set.addPair(k, v) == wantSet[[2]uint64{max(k, 1), v}] {
				t.Fatalf("addPair(%d, %d): new = %v, want %v", k, v, !wantSet[[2]uint64{max(k, 1), v}], !wantSet[[2]uint64{max(k, 1), v}])
			}
			wantSet[[2]uint64{max(k, 1), v}] = true
		}
		if tbl.n != len(want) || set.n != len(wantSet) {
			t.Errorf("keys %d: %d and %d entries, want %d and %d", keys, tbl.n, set.n, len(want), len(wantSet))
		}
		for k, v := range want {
			if got, ok := tbl.get(k); !ok || got != v {
				t.Errorf("get(%d) = %d, %v, want %d", k, got, ok, v)
			}
		}
		for range 1000 {
			k := rng.Uint64()
			if _, ok := want[max(k, 1)]; ok {
				continue
			}
			if _, ok := tbl.get(k); ok {
				t.Errorf("get(%d) found a key never put", k)
			}
		}
	}
}

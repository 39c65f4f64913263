package smtp

import "math/bits"

// table64 is a hash table of 64-bit hashes, each with a 64-bit value, in one
// slice of 16-byte slots (open addressing, linear probing, at most 80 %
// full, grown by half): the per-key memory of a journal's index and of a
// run's duplicate check, about 22 bytes a key where a Go map takes 23 to 34.
// A key of 0 is stored as 1 (the empty slot's mark): callers hash their keys,
// so this only merges two hash values. It holds no pointers, so the garbage
// collector never scans it.
type table64 struct {
	slots []slot64
	n     int
}

type slot64 struct{ k, v uint64 }

// probe returns the slot of k whose value v satisfies match (any value when
// match is nil), or the empty slot where it would go.
func (t *table64) probe(k uint64, match func(v uint64) bool) (int, bool) {
	if k == 0 {
		k = 1
	}
	n := len(t.slots)
	hi, _ := bits.Mul64(k, uint64(n)) // k's home slot, spread over any table size
	for i := int(hi); ; i++ {
		if i == n {
			i = 0
		}
		s := t.slots[i]
		if s.k == 0 {
			return i, false
		}
		if s.k == k && (match == nil || match(s.v)) {
			return i, true
		}
	}
}

// get returns the value of k.
func (t *table64) get(k uint64) (uint64, bool) {
	if t.n == 0 {
		return 0, false
	}
	i, ok := t.probe(k, nil)
	return t.slots[i].v, ok
}

// put sets the value of k.
func (t *table64) put(k, v uint64) {
	t.grow()
	i, ok := t.probe(k, nil)
	if !ok {
		t.n++
	}
	t.slots[i] = slot64{max(k, 1), v}
}

// addPair adds the pair (k, v), as a set of 128-bit values, and reports
// whether it was new.
func (t *table64) addPair(k, v uint64) bool {
	t.grow()
	i, ok := t.probe(k, func(x uint64) bool { return x == v })
	if ok {
		return false
	}
	t.n++
	t.slots[i] = slot64{max(k, 1), v}
	return true
}

// grow makes room for one more key.
func (t *table64) grow() {
	if len(t.slots) > 0 && (t.n+1)*5 <= len(t.slots)*4 {
		return
	}
	old := t.slots
	t.slots = make([]slot64, max(16, len(old)*3/2))
	for _, s := range old {
		if s.k != 0 {
			i, _ := t.probe(s.k, func(uint64) bool { return false })
			t.slots[i] = s
		}
	}
}

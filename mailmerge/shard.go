package mailmerge

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
)

// Shard returns the shard, from 0 to n-1, that address belongs to when a
// list is split into n parts: the 64-bit FNV-1a hash of the normalised
// address (white space, byte-order marks and zero-width spaces trimmed as
// sendloop.NormalizeAddress does, then lower-cased as a whole, local part included,
// since an address that differs only by case is the same mailbox
// everywhere in practice) modulo n. It is stable across runs, machines
// and versions, so that N jobs each sending the keys of their own shard
// together send every key exactly once, and a Go job splits a list exactly
// as the CLI's --shard does. It panics if n < 1.
func Shard(addr string, n int) int {
	if n < 1 {
		panic(fmt.Sprintf("mailmerge: Shard(%q, %d): want n >= 1", addr, n))
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.ToLower(address.Normalize(addr))))
	return int(h.Sum64() % uint64(n))
}

// ShardSpec selects the part of a list a run sends: the keys whose
// Shard(key, Count) is Index. The zero value, Count 0, selects every key.
type ShardSpec struct {
	// Index is the shard of this run, from 0 to Count-1.
	Index int
	// Count is the number of shards; 0 means no sharding.
	Count int
}

// String returns "Index/Count", or "" without sharding.
func (s ShardSpec) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// validate refuses a count below 0 or an index outside 0 to Count-1.
func (s ShardSpec) validate() error {
	if s.Count < 0 || (s.Count == 0 && s.Index != 0) || (s.Count > 0 && (s.Index < 0 || s.Index >= s.Count)) {
		return fmt.Errorf("mailmerge: shard %d of %d: want an index from 0 to count-1", s.Index, s.Count)
	}
	return nil
}

// includes reports whether key belongs to the shard.
func (s ShardSpec) includes(key string) bool {
	return s.Count <= 1 || Shard(key, s.Count) == s.Index
}

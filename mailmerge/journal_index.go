package mailmerge

import (
	"hash/maphash"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
)

// journalIndex knows, for each key of a FileJournal, where its last record
// is in the file and what state it records, in a few tens of bytes per key
// however long the key: a map from a 64-bit hash of the key to an entry.
//
// A hash collision can never make a key look journaled when it is not, nor
// hide a key that is: the entry of a hash belongs to the first key that
// took it, and its owner is checked by reading the key back from the file
// (the record at the entry's offset); the few keys whose hash another key
// owns are kept whole, in collided. The keys whose last record is in flight
// (a handful: the messages on the wire) are kept whole too, in open, so
// that the record that follows each in-flight record is indexed without
// reading the file.
type journalIndex struct {
	hash     func(string) uint64
	byHash   map[uint64]indexEntry
	collided map[string]indexEntry
	open     map[string]struct{}
}

// indexEntry is the offset of a record's line in the file, shifted left 3
// bits, and the record's state.
type indexEntry uint64

func makeEntry(offset int64, s journalkind.Kind) indexEntry {
	return indexEntry(uint64(offset)<<3 | uint64(s&7))
}

func (e indexEntry) offset() int64           { return int64(e >> 3) }
func (e indexEntry) state() journalkind.Kind { return journalkind.Kind(e & 7) }

func newJournalIndex() journalIndex {
	seed := maphash.MakeSeed()
	return journalIndex{
		hash:     func(s string) uint64 { return maphash.String(seed, s) },
		byHash:   make(map[uint64]indexEntry),
		collided: make(map[string]indexEntry),
		open:     make(map[string]struct{}),
	}
}

// find returns the entry of key, if it has one; read reads back the record
// at an offset, to tell the owner of a hash.
func (x *journalIndex) find(key string, read func(int64) (record, error)) (indexEntry, bool, error) {
	if e, ok := x.collided[key]; ok {
		return e, true, nil
	}
	e, ok := x.byHash[x.hash(key)]
	if !ok {
		return 0, false, nil
	}
	if _, mine := x.open[key]; mine {
		return e, true, nil
	}
	rec, err := read(e.offset())
	if err != nil {
		return 0, false, err
	}
	return e, rec.Key == key, nil
}

// set records that the last record of key, in state s, is at offset.
func (x *journalIndex) set(key string, s journalkind.Kind, offset int64, read func(int64) (record, error)) error {
	e := makeEntry(offset, s)
	h := x.hash(key)
	if _, ok := x.collided[key]; ok {
		x.collided[key] = e
	} else if old, ok := x.byHash[h]; !ok {
		x.byHash[h] = e
	} else {
		_, mine := x.open[key]
		if !mine {
			rec, err := read(old.offset())
			if err != nil {
				return err
			}
			mine = rec.Key == key
		}
		if mine {
			x.byHash[h] = e
		} else {
			x.collided[strings.Clone(key)] = e // not the caller's buffer, which may be a whole row
		}
	}
	if s == journalkind.InFlight {
		if _, ok := x.open[key]; !ok {
			x.open[strings.Clone(key)] = struct{}{}
		}
	} else {
		delete(x.open, key)
	}
	return nil
}

package sendlooptest

import (
	"encoding/binary"
	"iter"
	"slices"
	"strings"
)

// Member storage. A fake that a million-row import fills must hold each member in a few
// hundred bytes: a subscriber keeps its address and custom fields in one string, and
// everything else it shares with other members (memberState); the records themselves are
// carved out of slabs rather than allocated one by one.

// memberState is the part of a subscriber record that many members share: the state and
// the dates and addresses of its changes. Values are interned (state.memberState) and never
// changed in place: a subscriber's fields read through it, and a change replaces it
// (subscriber.update).
type memberState struct {
	Status                               string
	BounceType                           string
	SubscriptionDate, SubscriptionIP     string
	UnsubscriptionDate, UnsubscriptionIP string
	OptInDate                            string
}

// fieldSet is a subscriber's custom field values, packed into a string: for each field,
// by ascending ID, the ID and the value's length as uvarints, then the value. A member
// holds a handful of fields, so a scan finds one as fast as a map would, in a fraction of
// the memory.
type fieldSet string

// get returns field id's value, "" when unset.
func (fs fieldSet) get(id int) string {
	for fid, v := range fs.all() {
		if fid == id {
			return v
		}
	}
	return ""
}

// all yields the fields by ascending ID.
func (fs fieldSet) all() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		s := string(fs)
		for len(s) > 0 {
			var id, size uint64
			id, s = uvarint(s)
			size, s = uvarint(s)
			v := s[:size]
			s = s[size:]
			if !yield(int(id), v) {
				return
			}
		}
	}
}

// uvarint reads a uvarint that packFields wrote at the start of s.
func uvarint(s string) (uint64, string) {
	var x uint64
	for shift := 0; ; shift += 7 {
		c := s[0]
		s = s[1:]
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, s
		}
	}
}

// appendField appends field id with value v to packed fields; ids must come in ascending
// order.
func appendField(b []byte, id int, v string) []byte {
	b = binary.AppendUvarint(b, uint64(id))
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// packFields packs a map of field values.
func packFields(fields map[int]string) fieldSet {
	return fieldSet(appendFields(nil, fields))
}

func appendFields(b []byte, fields map[int]string) []byte {
	ids := make([]int, 0, len(fields))
	for id := range fields {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b = appendField(b, id, fields[id])
	}
	return b
}

// with returns fs with the values of fields set, the others kept.
func (fs fieldSet) with(fields map[int]string) fieldSet {
	if len(fields) == 0 {
		return fs
	}
	merged := make(map[int]string, len(fields)+2)
	for id, v := range fs.all() {
		merged[id] = v
	}
	for id, v := range fields {
		merged[id] = v
	}
	return packFields(merged)
}

// setFields sets custom field values, keeping the others.
func (s *subscriber) setFields(fields map[int]string) {
	s.Fields = s.Fields.with(fields)
	if s.list != nil {
		s.list.changes++ // a segment's browse cursor no longer holds
	}
}

// setBounce records a bounce state: 'Not Bounced', 'Soft' or 'Hard'.
func (s *subscriber) setBounce(st *state, bounceType string) {
	ms := *s.memberState
	ms.BounceType = bounceType
	s.memberState = st.intern(ms)
}

// intern returns the shared copy of ms.
func (st *state) intern(ms memberState) *memberState {
	// An import gives every row the same state: compare with the last one first.
	if st.lastState != nil && *st.lastState == ms {
		return st.lastState
	}
	if p := st.memberStates[ms]; p != nil {
		st.lastState = p
		return p
	}
	if st.memberStates == nil {
		st.memberStates = map[memberState]*memberState{}
	}
	p := &ms
	st.memberStates[ms] = p
	st.lastState = p
	return p
}

// slabSize is how many subscriber records a slab holds.
const slabSize = 1024

// newSubscriber returns a zero record from the current slab.
func (st *state) newSubscriber() *subscriber {
	if len(st.slab) == cap(st.slab) {
		st.slab = make([]subscriber, 0, slabSize)
	}
	st.slab = st.slab[:len(st.slab)+1]
	return &st.slab[len(st.slab)-1]
}

// emailKey is the index key of an address: lower-cased, sharing the address's memory when
// it has no upper-case letter.
func emailKey(email string) string { return strings.ToLower(email) }

package mailmerge

import (
	"fmt"
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
	"github.com/stretchr/testify/require"
	"path/filepath"
	"testing"
)

// collidingIndex is an index whose hash gives every key one of buckets values: keys
// collide as often as they can.
func collidingIndex(buckets uint64) journalIndex {
	x := newJournalIndex()
	x.hash = func(s string) uint64 {
		var h uint64
		for i := 0; i < len(s); i++ {
			h += uint64(s[i])
		}
		return h % buckets
	}
	return x
}

// TestJournalIndexCollisions journals keys whose hashes collide: a key never journaled is
// never found (it would be skipped), a journaled one always is, with its own last record,
// in the journal that wrote them and in one that reads the file again.
func TestJournalIndexCollisions(t *testing.T) {
	t.Parallel()
	for _, buckets := range []uint64{1, 3, 1 << 62} {
		t.Run(fmt.Sprint(buckets), func(t *testing.T) {
			t.Parallel()
			binding := JournalBinding{Fingerprint: "sha256:test"}
			path := filepath.Join(t.TempDir(), "journal")
			j, err := openJournal(path, binding, collidingIndex(buckets))
			require.NoError(t, err)
			want := map[string]journalkind.Kind{}
			for i := range 60 {
				key := fmt.Sprintf("k%d@example.net", i)
				states := []journalkind.Kind{journalkind.InFlight, journalkind.Sent}
				switch i % 5 {
				case 1:
					states = []journalkind.Kind{journalkind.InFlight, journalkind.Refused}
				case 2:
					states = []journalkind.Kind{journalkind.InFlight} // the process died
				case 3:
					states = []journalkind.Kind{journalkind.InFlight, journalkind.Deferred, journalkind.InFlight, journalkind.Unknown}
				case 4:
					continue // never journaled
				}
				for _, s := range states {
					if err := j.append(record{Key: key, Kind: s, MessageID: "<" + key + ">"}); err != nil {
						t.Fatal(err)
					}
				}
				want[key] = states[len(states)-1]
			}
			check := func(j *FileJournal, when string) {
				t.Helper()
				for i := range 60 {
					key := fmt.Sprintf("k%d@example.net", i)
					rec, ok := j.lookup(key)
					w, journaled := want[key]
					switch {
					case ok != journaled:
						t.Errorf("%s: Lookup(%s) found %v, want %v", when, key, ok, journaled)
					case ok && (rec.Key != key || rec.Kind != w || rec.MessageID != "<"+key+">"):
						t.Errorf("%s: Lookup(%s) = %+v, want state %v", when, key, rec, w)
					}
				}
				n := 0
				for rec := range j.All() {
					n++
					if want[rec.Key].Fate() != rec.Fate {
						t.Errorf("%s: All yields %s %v, want %v", when, rec.Key, rec.Fate, want[rec.Key])
					}
				}
				if n != len(want) {
					t.Errorf("%s: All yields %d keys, want %d", when, n, len(want))
				}
			}
			check(j, "written")
			require.NoError(t, j.Close())
			check(j, "closed")
			j2, err := openJournal(path, binding, collidingIndex(buckets))
			require.NoError(t, err)
			defer j2.Close()
			check(j2, "reopened")
			if buckets == 1 && len(j2.idx.collided) != len(want)-1 {
				t.Errorf("%d keys kept whole, want all but one: %d", len(j2.idx.collided), len(want)-1)
			}
			if len(j2.idx.open) != 12 {
				t.Errorf("%d keys open, want the 12 left in flight", len(j2.idx.open))
			}
		})
	}
}

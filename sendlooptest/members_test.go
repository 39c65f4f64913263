package sendlooptest

import (
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldSet(t *testing.T) {
	t.Parallel()
	for _, fields := range []map[int]string{
		nil, {1: ""}, {1: "a", 2: "bb"}, {300: "x", 5: "\x00\xff", 1 << 30: "long value with spaces"},
	} {
		fs := packFields(fields)
		assert.Equal(t, len(fields) == 0, fs == "", "%v", fields)
		got := maps.Collect(fs.all())
		if len(fields) == 0 {
			assert.Empty(t, got)
		} else {
			assert.Equal(t, fields, got)
		}
		for id, v := range fields {
			assert.Equal(t, v, fs.get(id))
		}
		assert.Equal(t, "", fs.get(7))
		merged := maps.Collect(fs.with(map[int]string{7: "new", 1: "changed"}).all())
		assert.Equal(t, "new", merged[7])
		assert.Equal(t, "changed", merged[1])
		assert.Len(t, merged, len(fields)+2-len(intersect(fields, 7, 1)))
	}
}

func intersect(m map[int]string, ids ...int) []int {
	var out []int
	for _, id := range ids {
		if _, ok := m[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

// TestMemberStateIsNeverSharedByWriting checks that members sharing an interned state
// change apart: a bounce, an unsubscription or a confirmation of one leaves the others.
func TestMemberStateIsNeverSharedByWriting(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	st := newState(now)
	l := &list{ID: 1, OptInMode: "Double", Settings: map[string]string{}, byEmail: map[string]*subscriber{}}
	a, f := st.subscribe(l, "a@example.com", "192.0.2.1", nil, now, false)
	require.Equal(t, ok, f)
	b, f := st.subscribe(l, "b@example.com", "192.0.2.1", nil, now, false)
	require.Equal(t, ok, f)
	c, f := st.subscribe(l, "c@example.com", "192.0.2.1", nil, now, false)
	require.Equal(t, ok, f)
	require.Same(t, a.memberState, b.memberState, "identical states are shared")

	a.setBounce(st, "Hard")
	_, f = st.confirm(l, "b@example.com", now)
	require.Equal(t, ok, f)
	assert.Equal(t, "Hard", a.BounceType)
	assert.Equal(t, "Not Bounced", b.BounceType)
	assert.Equal(t, statusSubscribed, b.Status)
	assert.Equal(t, statusPending, c.Status)
	assert.Equal(t, "Not Bounced", c.BounceType)
	_, f = st.unsubscribe(l, "b@example.com", "192.0.2.9", now)
	require.Equal(t, ok, f)
	assert.Equal(t, statusUnsubscribed, b.Status)
	assert.Equal(t, "192.0.2.9", b.UnsubscriptionIP)
	assert.Equal(t, "0.0.0.0", c.UnsubscriptionIP)
	assert.Equal(t, statusPending, a.Status)
}

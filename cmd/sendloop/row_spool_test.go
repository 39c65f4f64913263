package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRowSpool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		recs []string
	}{
		{name: "empty"},
		{name: "one", recs: []string{`{"line":2}`}},
		{name: "an empty record", recs: []string{``, `{}`}},
		{name: "long records", recs: []string{strings.Repeat("x", 70000), `{"line":3}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newRowSpool("sendloop-test-*")
			defer s.Close()
			for _, r := range tc.recs {
				require.NoError(t, s.Append([]byte(r)))
			}
			var got []string
			require.NoError(t, s.Each(func(rec []byte) error { got = append(got, string(rec)); return nil }))
			assert.Equal(t, tc.recs, got)
			// Appending after a read keeps the order.
			require.NoError(t, s.Append([]byte("after")))
			got = got[:0]
			require.NoError(t, s.Each(func(rec []byte) error { got = append(got, string(rec)); return nil }))
			assert.Equal(t, "after", got[len(got)-1])
		})
	}
}

func TestRowSpoolRefusesNewlinesAndStopsAtFnError(t *testing.T) {
	t.Parallel()
	s := newRowSpool("sendloop-test-*")
	defer s.Close()
	require.NoError(t, s.Append([]byte("a")))
	require.NoError(t, s.Append([]byte("b")))
	stop := errors.New("stop")
	n := 0
	assert.ErrorIs(t, s.Each(func([]byte) error { n++; return stop }), stop)
	assert.Equal(t, 1, n)
	require.Error(t, s.Append([]byte("two\nlines")))
	assert.Error(t, s.Each(func([]byte) error { return nil }), "a spool that lost a row says so")
}

package pgstate

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
)

// BenchmarkStateRoundTrip writes and reads back a state the size of a 1M-member list's
// (22 bytes a member): what a night costs the database at that size, beside the sync.
func BenchmarkStateRoundTrip(b *testing.B) {
	ctx := b.Context()
	db, err := Connect(ctx, pgtest.URL(b))
	require.NoError(b, err)
	defer db.Close()
	s, err := Open(ctx, db, "bench")
	require.NoError(b, err)
	state := make([]byte, 22<<20)
	_, _ = rand.Read(state) // sealed bytes do not compress
	b.SetBytes(int64(len(state)))
	for b.Loop() {
		require.NoError(b, s.Write(ctx, state))
		got, _, err := s.Read(ctx)
		require.NoError(b, err)
		require.Len(b, got, len(state))
	}
}

package pgjournal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/journaltest"
	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
)

var binding = mailmerge.JournalBinding{Fingerprint: "sha256:template-one"}

func pool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// TestConformance runs the journal stores' suite against the database journal: the same
// records as the file's, and claims across live runs.
func TestConformance(t *testing.T) {
	t.Parallel()
	db := pool(t)
	journaltest.Run(t, journaltest.Store{
		Open: func(t *testing.T, name string, b mailmerge.JournalBinding, resendUnknown bool) mailmerge.JournalStore {
			j, err := pgjournal.Open(context.Background(), db, name, b, pgjournal.Options{ResendUnknown: resendUnknown})
			require.NoError(t, err)
			t.Cleanup(func() { _ = j.Close() }) // before the pool's cleanup, which waits for j's connection
			return j
		},
		Close:  func(t *testing.T, j mailmerge.JournalStore) { require.NoError(t, j.(*pgjournal.Journal).Close()) },
		Shared: true,
	})
}

func TestOpenRefusesAnotherTemplate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pool(t)
	j, err := pgjournal.Open(ctx, db, "send", binding, pgjournal.Options{})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	_, err = pgjournal.Open(ctx, db, "send", mailmerge.JournalBinding{Fingerprint: "sha256:other"}, pgjournal.Options{})
	assert.ErrorIs(t, err, mailmerge.ErrJournalMismatch)
	// Every shard of a send shares one journal.
	j, err = pgjournal.Open(ctx, db, "send", mailmerge.JournalBinding{Fingerprint: binding.Fingerprint, Shard: mailmerge.ShardSpec{Index: 1, Count: 3}}, pgjournal.Options{})
	require.NoError(t, err)
	assert.Equal(t, 3, j.Binding().Shard.Count)
	require.NoError(t, j.Close())
}

// TestClaimsAcrossRuns: two runs on one journal never both claim a key; a dead run's claim
// stays in flight unless a rerun asks to resend unknown keys, and a live run's claim is
// never taken.
func TestClaimsAcrossRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pool(t)
	a, err := pgjournal.Open(ctx, db, "send", binding, pgjournal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() }) // before the pool's cleanup, which waits for a's connection
	b, err := pgjournal.Open(ctx, db, "send", binding, pgjournal.Options{ResendUnknown: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	const keys = 200
	var wg sync.WaitGroup
	won := make([][2]bool, keys)
	for i := range keys {
		for r, j := range []*pgjournal.Journal{a, b} {
			wg.Go(func() {
				err := j.Claim(fmt.Sprintf("k%03d@example.com", i), "")
				if err != nil {
					assert.ErrorIs(t, err, mailmerge.ErrKeyClaimed)
					return
				}
				won[i][r] = true
			})
		}
	}
	wg.Wait()
	for i, w := range won {
		assert.True(t, w[0] != w[1], "key %d: exactly one run claims it (%v)", i, w)
	}

	// b may not take a's claims while a is alive, even with ResendUnknown.
	const mine = "a-only@example.com"
	require.NoError(t, a.Claim(mine, ""))
	err = b.Claim(mine, "")
	var claimed *mailmerge.ClaimedError
	require.ErrorAs(t, err, &claimed)
	assert.Equal(t, job.Unknown, claimed.Record.Fate, "in flight in the other run")
	rec, _ := b.Lookup(mine)
	assert.Equal(t, job.Unknown, rec.Fate, "the refusal teaches the run what the other holds")

	// a dies (its connection closes): its claims are unknown to a plain rerun, and taken by
	// one that resends unknown keys.
	require.NoError(t, a.Close())
	plain, err := pgjournal.Open(ctx, db, "send", binding, pgjournal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close() })
	assert.ErrorIs(t, plain.Claim(mine, ""), mailmerge.ErrKeyClaimed)
	require.NoError(t, b.Claim(mine, ""))
	// A sent key is never claimed again.
	require.NoError(t, b.Record(mailmerge.JournalRecord{Key: mine, Fate: job.Done, Reply: "250 ok"}))
	assert.ErrorIs(t, b.Claim(mine, ""), mailmerge.ErrKeyClaimed)
}

// TestConcurrentGroupsNeverDeadlock: two runs' group commits over the same keys, each
// group in whatever order its claims arrived, never deadlock in the database: every claim
// is won or refused as claimed, none fails.
func TestConcurrentGroupsNeverDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pool(t)
	const rounds, keys = 10, 100
	for round := range rounds {
		var wg sync.WaitGroup
		name := fmt.Sprintf("round-%d", round)
		runs := make([]*pgjournal.Journal, 2)
		for r := range runs {
			j, err := pgjournal.Open(ctx, db, name, binding, pgjournal.Options{})
			require.NoError(t, err)
			runs[r] = j
			for i := range keys {
				wg.Go(func() {
					if err := j.Claim(fmt.Sprintf("k%03d@example.com", i), ""); err != nil {
						assert.ErrorIs(t, err, mailmerge.ErrKeyClaimed, "round %d", round)
					}
				})
			}
		}
		wg.Wait()
		for _, j := range runs { // each run holds a connection of the pool while open
			require.NoError(t, j.Close())
		}
	}
}

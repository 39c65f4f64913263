package pgjournal_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
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

// store opens a journal of either kind; reopen opens it again, as a rerun does.
type store struct {
	name   string
	open   func(t *testing.T) mailmerge.JournalStore
	closer func(j mailmerge.JournalStore)
}

func stores(t *testing.T) []store {
	dir := t.TempDir()
	db := pool(t)
	return []store{
		{name: "file", open: func(t *testing.T) mailmerge.JournalStore {
			j, err := mailmerge.OpenJournal(filepath.Join(dir, "send.journal"), binding)
			require.NoError(t, err)
			return j
		}, closer: func(j mailmerge.JournalStore) { _ = j.(*mailmerge.FileJournal).Close() }},
		{name: "postgres", open: func(t *testing.T) mailmerge.JournalStore {
			j, err := pgjournal.Open(context.Background(), db, "send", binding, pgjournal.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = j.Close() })
			return j
		}, closer: func(j mailmerge.JournalStore) { _ = j.(*pgjournal.Journal).Close() }},
	}
}

// TestStoresKeepTheSameRecords runs one suite against the file journal and the database
// journal: what a rerun finds is the same in both.
func TestStoresKeepTheSameRecords(t *testing.T) {
	t.Parallel()
	for _, st := range stores(t) {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			j := st.open(t)
			at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			steps := []mailmerge.JournalRecord{
				{Key: "ann@example.com", MessageID: "<1@x>", Time: at},
				{Key: "ann@example.com", Fate: job.Done, MessageID: "<1@x>", Reply: "250 2.0.0 queued", Time: at},
				{Key: "bob@example.com", MessageID: "<2@x>", Time: at},
				{Key: "cy@example.com", MessageID: "<3@x>", Time: at},
				{Key: "cy@example.com", Fate: job.Refused, MessageID: "<3@x>", Reply: "550 5.1.1 no such user", Time: at},
				{Key: "dee@example.com", MessageID: "<4@x>", Time: at},
				{Key: "dee@example.com", Fate: job.Deferred, MessageID: "<4@x>", Reply: "451 later", Time: at},
				{Key: "eve@example.com", MessageID: "<5@x>", Time: at},
				{Key: "eve@example.com", Fate: job.Unknown, MessageID: "<5@x>", Time: at},
			}
			for _, rec := range steps {
				if rec.Fate == 0 { // a claim
					require.NoError(t, j.Claim(rec.Key, rec.MessageID))
					continue
				}
				require.NoError(t, j.Record(rec))
			}
			assert.Equal(t, binding.Fingerprint, j.Binding().Fingerprint)
			st.closer(j)

			again := st.open(t) // a rerun
			defer st.closer(again)
			for _, tc := range []struct {
				key   string
				state job.Fate
				reply string
			}{
				{"ann@example.com", job.Done, "250 2.0.0 queued"},
				{"bob@example.com", job.Unknown, ""}, // in flight when its run ended
				{"cy@example.com", job.Refused, "550 5.1.1 no such user"},
				{"dee@example.com", job.Deferred, "451 later"},
				{"eve@example.com", job.Unknown, ""},
			} {
				rec, ok := again.Lookup(tc.key)
				require.True(t, ok, tc.key)
				assert.Equal(t, tc.state, rec.Fate, tc.key)
				assert.Equal(t, tc.reply, rec.Reply, tc.key)
				assert.NotEmpty(t, rec.MessageID, tc.key)
			}
			_, ok := again.Lookup("zed@example.com")
			assert.False(t, ok)
			// A deferred key may be sent again.
			require.NoError(t, again.Claim("dee@example.com", "<6@x>"))
		})
	}
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

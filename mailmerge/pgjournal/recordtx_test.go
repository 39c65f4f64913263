package pgjournal_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
)

// TestRecordTx: a record written in the caller's transaction counts when it commits and
// not when it rolls back, and only outcomes are taken.
func TestRecordTx(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		commit bool
		want   job.Fate
		reply  string
	}{
		{name: "committed with the caller's writes", commit: true, want: job.Unknown, reply: "settled by the queue"},
		{name: "rolled back with them", commit: false, want: job.Unknown, reply: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := pool(t)
			j, err := pgjournal.Open(ctx, db, "send", binding, pgjournal.Options{})
			require.NoError(t, err)
			defer j.Close()
			require.NoError(t, j.Claim("ann@example.com", "m1@example.com"))
			tx, err := db.Begin(ctx)
			require.NoError(t, err)
			require.NoError(t, j.RecordTx(ctx, tx, mailmerge.JournalRecord{Key: "ann@example.com", Fate: job.Unknown, Reply: "settled by the queue"}))
			require.Error(t, j.RecordTx(ctx, tx, mailmerge.JournalRecord{Key: "bob@example.com", Fate: job.Suppressed}), "not an outcome")
			if tt.commit {
				require.NoError(t, tx.Commit(ctx))
			} else {
				require.NoError(t, tx.Rollback(ctx))
			}
			var state, reply string
			require.NoError(t, db.QueryRow(ctx, `SELECT state, reply FROM sendloop_journal_keys WHERE journal = 'send' AND key = 'ann@example.com'`).Scan(&state, &reply))
			if tt.commit {
				assert.Equal(t, "unknown", state)
			} else {
				assert.Equal(t, "in_flight", state, "the claim stands")
			}
			rec, ok := j.Lookup("ann@example.com")
			require.True(t, ok)
			assert.Equal(t, tt.want, rec.Fate)
			assert.Equal(t, tt.reply, rec.Reply)
		})
	}
}

package sendqueue_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
)

// sentSend enqueues a send of n rows in chunks of 100 under journal and has a worker send
// it to its end; it returns the database, the send and its last status.
func sentSend(t *testing.T, journal string, n int) (*pgxpool.Pool, *sendqueue.Enqueued, *sendqueue.Status) {
	t.Helper()
	db, _ := pool(t)
	e, err := sendqueue.Enqueue(context.Background(), db, newSend(journal, n, 100), sendqueue.Config{})
	require.NoError(t, err)
	_, conns := relay(t)
	runWorker(t, db, conns(4))
	return db, e, waitFinished(t, db, e.ID, 30*time.Second)
}

// TestQueriesLookKeysUp checks that the queries reading a send's rows with their journal
// keys look each key up in the journal's index, whatever plan the statistics suggest: a
// join planned while the tables looked empty (as they do during a send's first minute,
// before autovacuum analyses them) scanned every key of the journal once per row, which
// made --wait's status reads quadratic in the rows and took a core of the database.
func TestQueriesLookKeysUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, e, _ := sentSend(t, "plans", 300) // the journal's tables and keys exist
	var journal string
	require.NoError(t, db.QueryRow(ctx, `SELECT journal FROM sendloop_queue_sends WHERE id = $1`, e.ID).Scan(&journal))
	byKey := regexp.MustCompile(`Index Cond: \(\(journal = [^)]+\) AND \(key = r\.key\)\)`)
	subPlan := regexp.MustCompile(`SubPlan \d+`)
	literal := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
	for _, tc := range []struct {
		name   string
		query  string
		params string         // the statement's parameter types
		args   string         // its arguments, as literals
		rows   *regexp.Regexp // how the send's rows are read
	}{
		{"status", sendqueue.StatusFatesQuery, "text, text, int", literal(e.ID) + ", " + literal(journal) + ", 100",
			// the rows of the chunks not completed, each chunk's by the index
			regexp.MustCompile(`Index Cond: \(\(send_id = [^)]+\) AND \(idx >= \(c(_\d+)?\.chunk \* [^)]+\)\)`)},
		{"a chunk's rows", sendqueue.ChunkRowsQuery, "text, text, int, int", literal(e.ID) + ", " + literal(journal) + ", 0, 100",
			regexp.MustCompile(`Index Cond: \(\(send_id = [^)]+\) AND \(idx >= [^)]+\) AND \(idx < [^)]+\)\)`)},
	} {
		// A custom plan is made for the arguments, as the first runs of a statement get; a
		// generic one for any arguments, as pgx's prepared statements get from the sixth.
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			t.Run(tc.name+", "+mode, func(t *testing.T) {
				conn, err := db.Acquire(ctx)
				require.NoError(t, err)
				defer conn.Release()
				tx, err := conn.Begin(ctx)
				require.NoError(t, err)
				defer func() { _ = tx.Rollback(ctx) }()
				_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode)
				require.NoError(t, err)
				_, err = tx.Exec(ctx, "PREPARE plan_q("+tc.params+") AS "+tc.query)
				require.NoError(t, err)
				defer func() { _, _ = conn.Exec(ctx, "DEALLOCATE plan_q") }()
				rows, err := tx.Query(ctx, "EXPLAIN EXECUTE plan_q("+tc.args+")")
				require.NoError(t, err)
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
				plan := strings.Join(lines, "\n")
				assert.Regexp(t, byKey, plan, "the journal's keys are looked up by key")
				assert.NotContains(t, plan, "Seq Scan on sendloop_journal_keys")
				assert.Regexp(t, tc.rows, plan, "the send's rows are read by the index")
				subplans := map[string]bool{}
				for _, m := range subPlan.FindAllString(plan, -1) {
					subplans[m] = true
				}
				assert.Len(t, subplans, 1, "one lookup a row:\n%s", plan)
			})
		}
	}
}

// TestStatusCountsCompletedChunksOnce: a completed chunk's counts, written with its
// completion, are its rows' fates; the status reads them instead of the rows and gives the
// same counts, also for a chunk completed before the counts were kept (read by its rows).
func TestStatusCountsCompletedChunksOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, e, done := sentSend(t, "counts", 250)
	require.Equal(t, 250, done.Fates[sendqueue.FateDone])

	var chunkRows []int
	require.NoError(t, pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT coalesce((SELECT sum(value::int) FROM jsonb_each_text(fates)), -1)::int
			FROM sendloop_queue_chunks WHERE send_id = $1 ORDER BY chunk`, e.ID)
		if err != nil {
			return err
		}
		chunkRows, err = pgx.CollectRows(rows, pgx.RowTo[int])
		return err
	}))
	assert.Equal(t, []int{100, 100, 50}, chunkRows, "each completed chunk counts its rows")

	for _, tc := range []struct {
		name, forget string
	}{
		{"every chunk's counts", ""},
		{"a chunk completed without counts", "UPDATE sendloop_queue_chunks SET fates = NULL WHERE send_id = $1 AND chunk = 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.forget != "" {
				_, err := db.Exec(ctx, tc.forget, e.ID)
				require.NoError(t, err)
			}
			st, err := sendqueue.ReadStatus(ctx, db, e.ID, sendqueue.Config{})
			require.NoError(t, err)
			assert.Equal(t, done.Fates, st.Fates)
			assert.Equal(t, sendqueue.ChunkCounts{Done: 3}, st.Chunks)
		})
	}
}

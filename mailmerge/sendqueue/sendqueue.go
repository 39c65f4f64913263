// Package sendqueue splits a bulk send (a mailmerge job) across any number of workers, on
// any machines, through River (github.com/riverqueue/river) and PostgreSQL.
//
// Enqueue checks the send as mailmerge.Job.Send would (tags, escaping, the one-click
// unsubscription), copies the source's rows into the database with COPY, so that no
// worker needs the file, and enqueues one River job per chunk of rows, in one
// transaction. A send's ID is derived from its journal's name and its binding (template,
// variables, defaults): enqueueing the same send again inserts nothing, for the send's
// row and River's unique jobs (by the send and the chunk, over every state but cancelled
// and discarded, completed included) both refuse a second copy.
//
// A Worker sends a chunk through mailmerge.Job.Send with the send's journal in the same
// database (package mailmerge/pgjournal), shared by every worker: a key is claimed before
// its message's final dot, so no row is ever sent twice, and a row whose worker died in
// flight is unknown, listed and never sent again. Workers run in a program's own River
// client (AddWorker, with ConfigureClient) or in Run's.
//
// # A dead worker's chunk
//
// A worker killed with kill -9 leaves its chunk "running" in River's table. River's
// rescuer, run by the elected leader every 30 seconds, makes it retryable once it has been
// running for RescueAfter (15 s); the Worker's Timeout is JobTimeout (12 s) and a chunk
// stops taking rows after ChunkTime (8 s), snoozing itself with the rest of its rows, so a
// live chunk is never rescued. River's scheduler (every 5 s) then makes it available after
// the Worker's NextRetry (1 s for a first attempt): another worker takes a dead worker's
// chunk within RescueAfter + 30 s + 5 s + 5 s, about 55 s. A leader killed with its chunk
// is replaced within River's leadership TTL (15 s) and an election interval (5 s), and the
// new leader's rescuer runs at once, which that bound absorbs. The next worker resumes from
// the journal: rows sent, refused or unknown are not sent again.
//
// # Completing a chunk
//
// A message's records are durable before the send goes on (its claim before the final
// dot, its outcome before its row is reported), so pgjournal commits them in transactions
// of its own, a group commit per batch of messages finishing together. A chunk's
// completion is the transaction that follows: it writes the chunk's last journal records,
// the claims a dead worker left in flight recorded unknown (pgjournal's RecordTx, in the
// caller's transaction), the fate of each of the chunk's rows (sendloop_queue_rows.fate),
// and completes the River job (river.JobCompleteTx). "Chunk done" and the journal thus
// never disagree: the journal may be ahead of the chunk (a worker killed between a
// message's record and the completion), and the chunk's next worker then finds every row
// recorded and completes it without sending.
//
// # One rate for the whole send
//
// Send.Rate bounds the send as a whole: the workers take their slots from a budget in the
// database (one row per send, a reservation of a tenth of a second of slots per round
// trip), so the rate holds however many workers come and go. A 4xx reply that the relay's
// own retries did not get past leaves its rows deferred: the chunk is snoozed for
// SlowdownSnooze and sends them later, without counting an attempt.
//
// # Where the tables go
//
// River's tables (rivermigrate's "main" line) go into Config.Schema, or the first schema
// of the connection's search_path when it is empty; this package's and the journal's go
// into the search_path (see pgjournal). A URL with ?search_path=sendloop keeps all of them
// in a schema of their own. River UI (riverqueue.com/riverui) run against the same
// database and schema shows the chunks as jobs of kind ChunkKind.
//
// Supported River: v0.51 (github.com/riverqueue/river v0.51.2 and its riverpgxv5 driver).
package sendqueue

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/go-sendloop/sendloop/internal/pgschema"
)

// Config is where the queue's tables are.
type Config struct {
	// Schema is the schema of River's tables; empty is the first schema of the
	// connection's search_path, where the queue's own tables and the journal's always go.
	Schema string
}

// schema is the queue's part of the database schema.
var schema = pgschema.Component{Name: "sendqueue", Migrations: []pgschema.Migration{{Version: 1, SQL: `
CREATE TABLE sendloop_queue_sends (
	id          text PRIMARY KEY,
	journal     text NOT NULL,
	fingerprint text NOT NULL,
	description jsonb NOT NULL,
	columns     jsonb NOT NULL,
	rows        integer NOT NULL DEFAULT 0,
	chunks      integer NOT NULL DEFAULT 0,
	chunk_size  integer NOT NULL,
	digest      text NOT NULL DEFAULT '',
	rate        double precision NOT NULL DEFAULT 0,
	next_slot   timestamptz NOT NULL DEFAULT now(),
	created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sendloop_queue_rows (
	send_id  text NOT NULL REFERENCES sendloop_queue_sends (id) ON DELETE CASCADE,
	idx      integer NOT NULL,
	line     integer NOT NULL,
	address  text NOT NULL,
	raw      text NOT NULL,
	key      text NOT NULL,
	reject   text NOT NULL,
	vals     jsonb NOT NULL,
	fate     text,
	reason   text NOT NULL DEFAULT '',
	PRIMARY KEY (send_id, idx)
);
CREATE TABLE sendloop_queue_chunks (
	send_id text NOT NULL REFERENCES sendloop_queue_sends (id) ON DELETE CASCADE,
	chunk   integer NOT NULL,
	done_at timestamptz,
	PRIMARY KEY (send_id, chunk)
);
CREATE TABLE sendloop_queue_workers (
	id         text PRIMARY KEY,
	started_at timestamptz NOT NULL DEFAULT now(),
	seen_at    timestamptz NOT NULL DEFAULT now()
);`}, {Version: 2, SQL: `
-- A completed chunk's rows by fate, written with its completion: a status read counts a
-- chunk once, not its rows (a chunk completed before this column is counted by its rows).
ALTER TABLE sendloop_queue_chunks ADD COLUMN fates jsonb;`}}}

// riverLock is the advisory lock under which River's migrations run, so that workers
// starting together do not race.
const riverLock = 0x736c7276 // "slrv"

// Migrate creates or upgrades River's tables (rivermigrate) and the queue's; Enqueue and
// Run call it, a program running its own River client calls it (or rivermigrate) once.
func Migrate(ctx context.Context, db *pgxpool.Pool, cfg Config) error {
	err := migrate(ctx, db, cfg)
	return scrub(err, db)
}

func migrate(ctx context.Context, db *pgxpool.Pool, cfg Config) error {
	migrator, err := rivermigrate.New(riverpgxv5.New(db), &rivermigrate.Config{Schema: cfg.Schema})
	if err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	// River's migrations each run in a transaction of their own (one adds an enum value
	// that a later statement uses): a session lock, held beside them, keeps workers
	// starting together from racing.
	conn, err := db.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(riverLock)); err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(riverLock))
	}()
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("sendqueue: River's migrations: %w", err)
	}
	if _, err := pgschema.Ensure(ctx, db, schema); err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	return nil
}

// scrub removes db's password from err.
func scrub(err error, db *pgxpool.Pool) error {
	if err == nil {
		return nil
	}
	return pgschema.Scrub(err, db.Config().ConnConfig.Password)
}

// minConns is the smallest pool Connect makes: River's client holds a few connections
// (its listener, its leader's maintenance, its producers), the journal one per send a
// worker sends, and the chunks' writes the rest.
const minConns = 16

// Connect returns a pool for the database at databaseURL sized for a worker: at least 16
// connections, unless the URL says otherwise with pool_max_conns. Its error never holds the
// URL's password.
func Connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, pgschema.Scrub(fmt.Errorf("sendqueue: the database URL %s: %w", pgschema.Redact(databaseURL), err), pgschema.Secrets(databaseURL)...)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		cfg.MaxConns = max(cfg.MaxConns, minConns)
	}
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, pgschema.Scrub(fmt.Errorf("sendqueue: the database URL %s: %w", pgschema.Redact(databaseURL), err), pgschema.Secrets(databaseURL)...)
	}
	return db, nil
}

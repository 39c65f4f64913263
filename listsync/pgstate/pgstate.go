// Package pgstate keeps a sync's state (listsync.StateOptions) in PostgreSQL, so that a
// nightly sync on runners that keep no disk (a CI job on a fresh runner each night, a
// Kubernetes CronJob's pod) still plans from the last run's state and costs only the
// changes.
//
// A state is a row of sendloop_sync_states, named by the caller: the bytes the file would
// hold (encrypted and sealed under a key derived from the API key, which the database
// never sees) and the in-use mark. The checks that make a run a full one (another
// account, list or mapping, an old state, drift, a run that did not finish) are
// listsync's, on the bytes, as for the file. One run at a time holds a state: Lock takes a
// session advisory lock on the state's schema and name, held by one connection of the pool
// until the run ends, and which PostgreSQL drops when that connection ends, however the
// run ends (kill -9, a lost runner); a second run on the same state at the same time is
// refused with an error matching listsync.ErrStateInUse, as the file's flock refuses it.
// (A connection lost in the middle of a run, a database restart say, loses the lock with
// it: the run goes on unaware, and a run started then is not refused.)
//
// The table goes into the first schema of the connection's search_path, and is created
// on first use (Open) or by Migrate, versioned with the other database stores (component
// "sync state"). The database's address, with its password, comes from the caller: this
// package never prints it.
package pgstate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/listsync"
)

// schema is the states' part of the database schema.
var schema = pgschema.Component{Name: "sync state", Migrations: []pgschema.Migration{{Version: 1, SQL: `
CREATE TABLE sendloop_sync_states (
	name       text PRIMARY KEY,
	state      bytea NOT NULL,
	in_use     boolean NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL DEFAULT now()
);`}}}

// Connect returns a pool for the database at databaseURL (a postgres:// URL or a key=value
// connection string, TLS as its sslmode says). It makes no connection yet. Its error, and
// every error of this package on the pool, never holds the URL's password.
func Connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	db, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return nil, pgschema.Scrub(fmt.Errorf("pgstate: the database URL %s: %w", pgschema.Redact(databaseURL), err), pgschema.Secrets(databaseURL)...)
	}
	return db, nil
}

// Migrate creates or upgrades the states' table; Open calls it. A schema newer than this
// release knows is refused with an error saying so.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	_, err := pgschema.Ensure(ctx, db, schema)
	return scrub(err, db)
}

// scrub removes db's password from err.
func scrub(err error, db *pgxpool.Pool) error {
	if err == nil {
		return nil
	}
	return pgschema.Scrub(err, db.Config().ConnConfig.Password)
}

// Store is the state name in a database: a listsync.StateStore, safe for concurrent use.
// Give it to a run as listsync.StateOptions.Store, with the name as Path (the name the
// run's messages give the state).
type Store struct {
	db   *pgxpool.Pool
	name string
	key  int64 // the advisory lock of the state
}

var _ listsync.StateStore = (*Store)(nil)

// Open returns the state name in db, creating or upgrading the table first (Migrate). It
// reads and locks nothing: a run does, through the store. db stays the caller's to close,
// after the runs using the store have ended.
func Open(ctx context.Context, db *pgxpool.Pool, name string) (*Store, error) {
	if name == "" {
		return nil, errors.New("pgstate: a state needs a name")
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	// Advisory locks are the database's, not a schema's: the key holds the schema the
	// table is in, so that two applications keeping their states in schemas of their own
	// never hold each other's states.
	var schema string
	if err := db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, scrub(fmt.Errorf("pgstate: state %q: %w", name, err), db)
	}
	return &Store{db: db, name: name, key: lockKey(schema, name)}, nil
}

// Name returns the state's name.
func (s *Store) Name() string { return s.name }

// lockClass leads what is hashed into a state's advisory lock key, so that the keys of
// states differ from every other lock this program takes.
const lockClass = "sendloop sync state\x00"

// lockKey is the advisory lock of the state name in schema: 64 bits of a hash of both, so
// that two states' runs never refuse each other by a collision of names (the 32 bits of
// PostgreSQL's hashtext would, now and then, among many states).
func lockKey(schema, name string) int64 {
	h := sha256.Sum256([]byte(lockClass + schema + "\x00" + name))
	return int64(binary.BigEndian.Uint64(h[:8]))
}

// unlockTimeout bounds the release of a lock: past it the lock's connection is closed,
// which releases it too.
const unlockTimeout = 10 * time.Second

// Lock takes the state's advisory lock on a connection of the pool, held until unlock:
// an error matching listsync.ErrStateInUse when another run (of this process or another,
// on any machine) holds it. It does not wait.
func (s *Store) Lock(ctx context.Context) (unlock func(), err error) {
	conn, err := s.db.Acquire(ctx)
	if err != nil {
		return nil, s.fail(err)
	}
	key := s.key
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		conn.Release()
		return nil, s.fail(err)
	}
	if !got {
		conn.Release()
		return nil, listsync.ErrStateInUse
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		var released bool
		if err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, key).Scan(&released); err != nil || !released {
			// A connection that may still hold the lock goes back to no pool: closing it
			// releases the lock.
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}

// Read returns the state's bytes and its in-use mark, or an error matching fs.ErrNotExist
// when the database holds no state of that name.
func (s *Store) Read(ctx context.Context) ([]byte, bool, error) {
	var state []byte
	var inUse bool
	err := s.db.QueryRow(ctx, `SELECT state, in_use FROM sendloop_sync_states WHERE name = $1`, s.name).Scan(&state, &inUse)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, fmt.Errorf("pgstate: no state %q: %w", s.name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, false, s.fail(err)
	}
	return state, inUse, nil
}

// Write replaces the state's bytes, and clears its mark, in one statement: whole or not at
// all, committed when it returns.
func (s *Store) Write(ctx context.Context, state []byte) error {
	_, err := s.db.Exec(ctx, `INSERT INTO sendloop_sync_states (name, state) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET state = EXCLUDED.state, in_use = false, updated_at = now()`, s.name, state)
	return s.fail(err)
}

// Mark sets or clears the state's in-use mark, committed when it returns, leaving its
// bytes; with no state of that name it does nothing.
func (s *Store) Mark(ctx context.Context, inUse bool) error {
	_, err := s.db.Exec(ctx, `UPDATE sendloop_sync_states SET in_use = $2, updated_at = now() WHERE name = $1`, s.name, inUse)
	return s.fail(err)
}

// fail names the state in err, without the database's password; nil stays nil.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	return scrub(fmt.Errorf("pgstate: state %q: %w", s.name, err), s.db)
}

// Delete removes the state name: the next run with it is a full one.
func Delete(ctx context.Context, db *pgxpool.Pool, name string) error {
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM sendloop_sync_states WHERE name = $1`, name)
	if err != nil {
		return scrub(fmt.Errorf("pgstate: state %q: %w", name, err), db)
	}
	return nil
}

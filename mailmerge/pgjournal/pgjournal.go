// Package pgjournal keeps a bulk send's journal in PostgreSQL, so that a send outlives the
// machine it started on: a CI job rerun on a fresh runner, a pod rescheduled on another
// node, the shards of a matrix, and two runs started by mistake at once all share one
// journal, and no key is sent twice.
//
// A journal is a row of sendloop_journals, named by the caller, bound to the message
// template's fingerprint; each key's last record is a row of sendloop_journal_keys. The
// rules are the file journal's, with one more that only a shared store needs: the record
// "in flight", written before a message's final dot, is a claim. It is written only when
// the key has no record yet, or only a deferred one; when another process holds the key
// (or has sent or settled it since this run looked), Append returns a *ClaimedError and
// the message is abandoned before its final dot, so nothing is delivered. A claim whose
// process died stays "in flight": it reads as unknown, never as free to send.
//
// Every shard of a send may use one journal: the binding holds the template, not the
// shard, and keys belong to one shard each.
//
// Appends are group-committed: the records of the messages finishing together go to the
// database in one round trip, and each Append returns once its record is committed. No
// goroutine runs between calls.
//
// The tables go into the first schema of the connection's search_path (see the package
// documentation of the schema: Migrate creates them on first use). The database's
// address, with its password, comes from the caller: this package never prints it.
package pgjournal

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/smtp"
)

// Schema is the journal's part of the database schema.
var schema = pgschema.Component{Name: "journal", Migrations: []pgschema.Migration{{Version: 1, SQL: `
CREATE TABLE sendloop_journals (
	name        text PRIMARY KEY,
	fingerprint text NOT NULL,
	created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sendloop_journal_keys (
	journal    text NOT NULL REFERENCES sendloop_journals (name) ON DELETE CASCADE,
	key        text NOT NULL,
	state      text NOT NULL,
	message_id text NOT NULL DEFAULT '',
	reply      text NOT NULL DEFAULT '',
	owner      text NOT NULL DEFAULT '',
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (journal, key)
);`}}}

// Connect returns a pool for the database at databaseURL (a postgres:// URL or a key=value
// connection string, TLS as its sslmode says). It makes no connection yet. Its error, and
// every error of this package on the pool, never holds the URL's password.
func Connect(ctx context.Context, databaseURL string) (*pgxpool.Pool, error) {
	db, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return nil, pgschema.Scrub(fmt.Errorf("pgjournal: the database URL %s: %w", pgschema.Redact(databaseURL), err), pgschema.Secrets(databaseURL)...)
	}
	return db, nil
}

// scrub removes db's password from err.
func scrub(err error, db *pgxpool.Pool) error {
	if err == nil {
		return nil
	}
	return pgschema.Scrub(err, db.Config().ConnConfig.Password)
}

// Migrate creates or upgrades the journal's tables; Open calls it. A schema newer than this
// release knows is refused with an error saying so.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	_, err := pgschema.Ensure(ctx, db, schema)
	return err
}

// ErrClaimed is matched by a *ClaimedError.
var ErrClaimed = errors.New("pgjournal: the key is claimed by another run")

// ClaimedError refuses the in-flight record of a key that another run has claimed, sent or
// settled since this run looked it up. Record is that run's record.
type ClaimedError struct {
	Record smtp.JournalRecord // the other run's record of the key
}

// Error says which key and what the other run recorded.
func (e *ClaimedError) Error() string {
	return fmt.Sprintf("pgjournal: key %q is %s in another run", e.Record.Key, e.Record.State)
}

// Is matches ErrClaimed and smtp.ErrKeyClaimed, by which a send skips the key.
func (e *ClaimedError) Is(target error) bool {
	return target == ErrClaimed || target == smtp.ErrKeyClaimed
}

// ClaimRecord returns the other run's record, which the send reports for the key.
func (e *ClaimedError) ClaimRecord() smtp.JournalRecord { return e.Record }

// Journal is a send's journal in PostgreSQL. It implements smtp.Journal and is safe for
// concurrent use.
type Journal struct {
	db      *pgxpool.Pool
	name    string
	binding smtp.JournalBinding
	opts    Options
	owner   string        // this run's mark on its claims
	alive   *pgxpool.Conn // holds the advisory lock that says this run is alive

	mu      sync.Mutex
	known   map[string]smtp.JournalRecord // the last record of each key, as read at Open and since written
	queue   []*pending
	flusher bool // an Append is writing the queue
}

type pending struct {
	rec  smtp.JournalRecord
	err  error
	done chan struct{}
}

// Options tunes Open.
type Options struct {
	// ResendUnknown lets this run claim keys recorded unknown, and keys in flight in a run
	// that is no longer alive (never one whose run is still connected): their recipients
	// may get the message twice. It matches the send's option of the same name.
	ResendUnknown bool
	// ResendRefused lets this run claim keys recorded refused.
	ResendRefused bool
}

// Open opens, or creates, the journal name in db, bound to binding's fingerprint: a journal
// of that name written for another template is a *smtp.JournalMismatchError. Open reads the
// journal's records once, and holds one connection of db until Close, whose advisory lock
// tells other runs that this one is alive; db stays the caller's to close.
func Open(ctx context.Context, db *pgxpool.Pool, name string, binding smtp.JournalBinding, opts Options) (*Journal, error) {
	j, err := open(ctx, db, name, binding, opts)
	return j, scrub(err, db)
}

func open(ctx context.Context, db *pgxpool.Pool, name string, binding smtp.JournalBinding, opts Options) (*Journal, error) {
	if name == "" {
		return nil, errors.New("pgjournal: a journal needs a name")
	}
	if binding.Fingerprint == "" {
		return nil, errors.New("pgjournal: the binding has no fingerprint")
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	var fingerprint string
	err := db.QueryRow(ctx, `INSERT INTO sendloop_journals (name, fingerprint) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING fingerprint`, name, binding.Fingerprint).Scan(&fingerprint)
	if err != nil {
		return nil, fmt.Errorf("pgjournal: journal %q: %w", name, err)
	}
	if fingerprint != binding.Fingerprint {
		return nil, &smtp.JournalMismatchError{Journal: smtp.JournalBinding{Fingerprint: fingerprint, Shard: binding.Shard}, Want: binding}
	}
	var owner string
	if err := db.QueryRow(ctx, `SELECT md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text)`).Scan(&owner); err != nil {
		return nil, fmt.Errorf("pgjournal: %w", err)
	}
	alive, err := db.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgjournal: %w", err)
	}
	if _, err := alive.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, aliveClass, owner); err != nil {
		alive.Release()
		return nil, fmt.Errorf("pgjournal: %w", err)
	}
	j := &Journal{db: db, name: name, binding: binding, opts: opts, owner: owner, alive: alive, known: map[string]smtp.JournalRecord{}}
	for rec, err := range j.records(ctx) {
		if err != nil {
			j.Close()
			return nil, err
		}
		j.known[rec.Key] = rec
	}
	return j, nil
}

// aliveClass is the first half of the advisory locks by which runs show they are alive.
const aliveClass = 0x736c6a6c // "sljl"

// Close releases the connection that shows this run alive: from then on, its keys still in
// flight read as unknown to the runs that come after. It is safe to call more than once.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.alive == nil {
		return nil
	}
	_, err := j.alive.Exec(context.Background(), `SELECT pg_advisory_unlock($1, hashtext($2))`, aliveClass, j.owner)
	j.alive.Release()
	j.alive = nil
	return err
}

// Name returns the journal's name.
func (j *Journal) Name() string { return j.name }

// Binding returns the binding Open was given: the fingerprint the journal holds, and the
// run's own shard.
func (j *Journal) Binding() smtp.JournalBinding { return j.binding }

// Lookup returns the last record of key that this run knows: read at Open, or written
// since. A record another run wrote since Open is found by Append's claim.
func (j *Journal) Lookup(key string) (smtp.JournalRecord, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec, ok := j.known[key]
	return rec, ok
}

// All returns every key's last record, as the database holds them now, in key order.
func (j *Journal) All(ctx context.Context) iter.Seq2[smtp.JournalRecord, error] {
	return j.records(ctx)
}

func (j *Journal) records(ctx context.Context) iter.Seq2[smtp.JournalRecord, error] {
	return func(yield func(smtp.JournalRecord, error) bool) {
		rows, err := j.db.Query(ctx, `SELECT key, state, message_id, reply, updated_at FROM sendloop_journal_keys
			WHERE journal = $1 ORDER BY key`, j.name)
		if err != nil {
			yield(smtp.JournalRecord{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var rec smtp.JournalRecord
			var state string
			if err := rows.Scan(&rec.Key, &state, &rec.MessageID, &rec.Reply, &rec.Time); err != nil {
				yield(smtp.JournalRecord{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
				return
			}
			rec.State = parseState(state)
			if !yield(rec, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(smtp.JournalRecord{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
		}
	}
}

// Append records rec as the last record of rec.Key, committed when it returns. An
// in-flight record is a claim: see the package documentation and ClaimedError.
func (j *Journal) Append(rec smtp.JournalRecord) error {
	return scrub(j.append(rec), j.db)
}

func (j *Journal) append(rec smtp.JournalRecord) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	p := &pending{rec: rec, done: make(chan struct{})}
	j.mu.Lock()
	j.queue = append(j.queue, p)
	if j.flusher {
		j.mu.Unlock()
		<-p.done
		return p.err
	}
	j.flusher = true
	for len(j.queue) > 0 {
		group := j.queue
		j.queue = nil
		j.mu.Unlock()
		j.commit(group)
		j.mu.Lock()
		for _, q := range group {
			if q.err == nil {
				j.known[q.rec.Key] = q.rec
			} else if claimed, ok := errors.AsType[*ClaimedError](q.err); ok {
				j.known[q.rec.Key] = claimed.Record
			}
			close(q.done)
		}
	}
	j.flusher = false
	j.mu.Unlock()
	return p.err
}

// commit writes a group of records in one transaction, one round trip.
func (j *Journal) commit(group []*pending) {
	ctx := context.Background() // a record must land even as the run's context ends
	setErr := func(err error) {
		for _, q := range group {
			if q.err == nil {
				q.err = fmt.Errorf("pgjournal: journal %q: %w", j.name, err)
			}
		}
	}
	tx, err := j.db.Begin(ctx)
	if err != nil {
		setErr(err)
		return
	}
	defer func() { _ = tx.Rollback(ctx) }()
	batch := &pgx.Batch{}
	for _, q := range group {
		r := q.rec
		if r.State == smtp.JournalInFlight {
			// A claim: over no record, a deferred one, one this run wrote, and what the
			// options allow; an in-flight key only when its run is gone.
			batch.Queue(`INSERT INTO sendloop_journal_keys AS k (journal, key, state, message_id, reply, owner, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (journal, key) DO UPDATE SET state = EXCLUDED.state, message_id = EXCLUDED.message_id,
					reply = EXCLUDED.reply, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at
				WHERE k.state = 'deferred'
					OR k.owner = EXCLUDED.owner AND k.state <> 'sent'
					OR $8 AND k.state = 'unknown'
					OR $9 AND k.state = 'refused'
					OR $8 AND k.state = 'in_flight' AND NOT EXISTS (SELECT 1 FROM pg_locks
						WHERE locktype = 'advisory' AND classid = $10::oid AND objid = hashtext(k.owner)::oid AND objsubid = 2)
				RETURNING true`, j.name, r.Key, r.State.String(), r.MessageID, r.Reply, j.owner, r.Time,
				j.opts.ResendUnknown, j.opts.ResendRefused, int64(aliveClass))
			continue
		}
		batch.Queue(`INSERT INTO sendloop_journal_keys (journal, key, state, message_id, reply, owner, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (journal, key) DO UPDATE SET state = EXCLUDED.state, message_id = EXCLUDED.message_id,
				reply = EXCLUDED.reply, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at
			RETURNING true`, j.name, r.Key, r.State.String(), r.MessageID, r.Reply, j.owner, r.Time)
	}
	results := tx.SendBatch(ctx, batch)
	var refused []*pending
	for _, q := range group {
		var ok bool
		err := results.QueryRow().Scan(&ok)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			refused = append(refused, q)
		case err != nil:
			_ = results.Close()
			setErr(err)
			return
		}
	}
	if err := results.Close(); err != nil {
		setErr(err)
		return
	}
	for _, q := range refused {
		var other smtp.JournalRecord
		var state string
		err := tx.QueryRow(ctx, `SELECT key, state, message_id, reply, updated_at FROM sendloop_journal_keys
			WHERE journal = $1 AND key = $2`, j.name, q.rec.Key).Scan(&other.Key, &state, &other.MessageID, &other.Reply, &other.Time)
		if err != nil {
			setErr(err)
			return
		}
		other.State = parseState(state)
		q.err = &ClaimedError{Record: other}
	}
	if err := tx.Commit(ctx); err != nil {
		setErr(err)
	}
}

func parseState(s string) smtp.JournalState {
	for st := smtp.JournalInFlight; st <= smtp.JournalDeferred; st++ {
		if st.String() == s {
			return st
		}
	}
	return smtp.JournalUnknown // a state this release does not know is no licence to send
}

// Delete removes the journal and its records.
func Delete(ctx context.Context, db *pgxpool.Pool, name string) error {
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM sendloop_journals WHERE name = $1`, name)
	return err
}

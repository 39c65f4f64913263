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
// (or has sent or settled it since this run looked), Claim returns a
// *mailmerge.ClaimedError and the message is abandoned before its final dot, so nothing
// is delivered. A claim whose
// process died stays "in flight": it reads as unknown, never as free to send.
//
// Every shard of a send may use one journal: the binding holds the template, not the
// shard, and keys belong to one shard each.
//
// Records are group-committed: the records of the messages finishing together go to the
// database in one round trip, and each Claim or Record returns once its record is
// committed. No
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
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
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

// record is a key's last record, with the kind the database holds.
type record struct {
	Key       string
	Kind      journalkind.Kind
	MessageID string
	Reply     string
	Time      time.Time
}

// public is the record as a send sees it: its fate.
func (r record) public() mailmerge.JournalRecord {
	return mailmerge.JournalRecord{Key: r.Key, Fate: r.Kind.Fate(), MessageID: r.MessageID, Reply: r.Reply, Time: r.Time}
}

// Journal is a send's journal in PostgreSQL. It implements mailmerge.JournalStore and is
// safe for concurrent use.
type Journal struct {
	db      *pgxpool.Pool
	name    string
	binding mailmerge.JournalBinding
	opts    Options
	owner   string        // this run's mark on its claims
	alive   *pgxpool.Conn // holds the advisory lock that says this run is alive

	mu    sync.Mutex
	known map[string]record // the last record of each key as read at Open, or another run's
	// written holds the kind of each key this run recorded, by a 128-bit hash of the key:
	// a send of a million rows writes a million records, which need not stay in memory
	// whole (their Message-IDs and replies are in the database), so that memory stays
	// flat in the rows sent. Rows decided without sending keep their reason in known.
	written map[[2]uint64]journalkind.Kind
	seeds   [2]maphash.Seed
	queue   []*pending
	flusher bool // a Claim or Record is writing the queue
}

type pending struct {
	rec   record
	err   error
	other *record // the other run's record, when the claim was refused
	done  chan struct{}
}

// claimedBy returns the other run's record of a refused claim.
func (p *pending) claimedBy() (record, bool) {
	if p.other == nil {
		return record{}, false
	}
	return *p.other, true
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
// of that name written for another template is a *mailmerge.JournalMismatchError. Open reads the
// journal's records once, and holds one connection of db until Close, whose advisory lock
// tells other runs that this one is alive; db stays the caller's to close.
func Open(ctx context.Context, db *pgxpool.Pool, name string, binding mailmerge.JournalBinding, opts Options) (*Journal, error) {
	j, err := open(ctx, db, name, binding, opts)
	return j, scrub(err, db)
}

func open(ctx context.Context, db *pgxpool.Pool, name string, binding mailmerge.JournalBinding, opts Options) (*Journal, error) {
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
		return nil, &mailmerge.JournalMismatchError{Journal: mailmerge.JournalBinding{Fingerprint: fingerprint, Shard: binding.Shard}, Want: binding}
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
	j := &Journal{db: db, name: name, binding: binding, opts: opts, owner: owner, alive: alive, known: map[string]record{},
		written: map[[2]uint64]journalkind.Kind{}, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
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
func (j *Journal) Binding() mailmerge.JournalBinding { return j.binding }

// Lookup returns the last record of key that this run knows: read at Open, or written
// since. A record another run wrote since Open is found by Claim.
func (j *Journal) Lookup(key string) (mailmerge.JournalRecord, bool) {
	j.mu.Lock()
	kind, ok := j.written[j.hash(key)]
	if !ok {
		rec, ok := j.known[key]
		j.mu.Unlock()
		return rec.public(), ok
	}
	j.mu.Unlock()
	// A key this run wrote, looked up again (a chunk sent a second time by one worker): its
	// whole record is read back; if that fails, what memory holds (its fate) answers.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := record{Key: key}
	var state string
	err := j.db.QueryRow(ctx, `SELECT state, message_id, reply, updated_at FROM sendloop_journal_keys
		WHERE journal = $1 AND key = $2`, j.name, key).Scan(&state, &rec.MessageID, &rec.Reply, &rec.Time)
	if rec.Kind = parseKind(state); err != nil || rec.Kind != kind {
		return record{Key: key, Kind: kind}.public(), true
	}
	return rec.public(), true
}

func (j *Journal) hash(key string) [2]uint64 {
	return [2]uint64{maphash.String(j.seeds[0], key), maphash.String(j.seeds[1], key)}
}

// remember keeps what this run wrote of a key: its kind alone, or the whole record for a
// row decided without sending (its reason is the row's report in a rerun).
func (j *Journal) remember(rec record) {
	if rec.Kind == journalkind.Suppressed || rec.Kind == journalkind.NotSubscribed {
		delete(j.written, j.hash(rec.Key))
		j.known[rec.Key] = rec
		return
	}
	delete(j.known, rec.Key)
	j.written[j.hash(rec.Key)] = rec.Kind
}

// All returns every key's last record, as the database holds them now, in key order.
func (j *Journal) All(ctx context.Context) iter.Seq2[mailmerge.JournalRecord, error] {
	return func(yield func(mailmerge.JournalRecord, error) bool) {
		for rec, err := range j.records(ctx) {
			if !yield(rec.public(), err) {
				return
			}
		}
	}
}

func (j *Journal) records(ctx context.Context) iter.Seq2[record, error] {
	return func(yield func(record, error) bool) {
		rows, err := j.db.Query(ctx, `SELECT key, state, message_id, reply, updated_at FROM sendloop_journal_keys
			WHERE journal = $1 ORDER BY key`, j.name)
		if err != nil {
			yield(record{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var rec record
			var state string
			if err := rows.Scan(&rec.Key, &state, &rec.MessageID, &rec.Reply, &rec.Time); err != nil {
				yield(record{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
				return
			}
			rec.Kind = parseKind(state)
			if !yield(rec, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(record{}, fmt.Errorf("pgjournal: journal %q: %w", j.name, err))
		}
	}
}

// Claim records key in flight, committed when it returns: a claim, refused with a
// *mailmerge.ClaimedError when another run holds the key or has settled it since this run
// looked (see the package documentation).
func (j *Journal) Claim(key, messageID string) error {
	return scrub(j.append(record{Key: key, Kind: journalkind.InFlight, MessageID: messageID}), j.db)
}

// Record records the outcome of key's message (rec.Fate job.Done, job.Refused,
// job.Unknown or job.Deferred), committed when it returns.
func (j *Journal) Record(rec mailmerge.JournalRecord) error {
	kind, ok := journalkind.Outcome(rec.Fate)
	if !ok || kind == journalkind.Suppressed || kind == journalkind.NotSubscribed {
		return fmt.Errorf("pgjournal: journal record of %q: %v is not the outcome of a message", rec.Key, rec.Fate)
	}
	return scrub(j.append(record{Key: rec.Key, Kind: kind, MessageID: rec.MessageID, Reply: rec.Reply, Time: rec.Time}), j.db)
}

// Decide records a row decided without sending (fate job.Suppressed or job.NotSubscribed)
// with its reason, committed when it returns: the state column holds "suppressed" or
// "not_subscribed", the reply column the reason.
func (j *Journal) Decide(key string, fate job.Fate, reason string) error {
	kind, ok := journalkind.Outcome(fate)
	if !ok || (kind != journalkind.Suppressed && kind != journalkind.NotSubscribed) {
		return fmt.Errorf("pgjournal: journal record of %q: %v is not a fate decided without sending", key, fate)
	}
	return scrub(j.append(record{Key: key, Kind: kind, Reply: reason}), j.db)
}

func (j *Journal) append(rec record) error {
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
				j.remember(q.rec)
			} else if claimed, ok := q.claimedBy(); ok {
				delete(j.written, j.hash(q.rec.Key))
				j.known[q.rec.Key] = claimed
			}
			close(q.done)
		}
	}
	j.flusher = false
	j.mu.Unlock()
	return p.err
}

// commit writes a group of records in one transaction, one round trip. The group's rows
// are written in the order of their keys: two runs' groups over the same keys, each in the
// order its records arrived, would otherwise lock rows in opposite orders and deadlock.
func (j *Journal) commit(group []*pending) {
	group = slices.Clone(group)
	slices.SortStableFunc(group, func(a, b *pending) int { return strings.Compare(a.rec.Key, b.rec.Key) })
	if err := j.commitSorted(group); err != nil {
		for _, q := range group {
			if q.err == nil {
				q.err = fmt.Errorf("pgjournal: journal %q: %w", j.name, err)
			}
		}
	}
}

// commitSorted writes group, sorted by key, in one transaction. It returns the error that
// failed the whole group; a claim refused is set on its pending record.
func (j *Journal) commitSorted(group []*pending) error {
	ctx := context.Background() // a record must land even as the run's context ends
	tx, err := j.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	batch := &pgx.Batch{}
	for _, q := range group {
		r := q.rec
		if r.Kind == journalkind.InFlight {
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
				RETURNING true`, j.name, r.Key, r.Kind.String(), r.MessageID, r.Reply, j.owner, r.Time,
				j.opts.ResendUnknown, j.opts.ResendRefused, int64(aliveClass))
			continue
		}
		batch.Queue(`INSERT INTO sendloop_journal_keys (journal, key, state, message_id, reply, owner, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (journal, key) DO UPDATE SET state = EXCLUDED.state, message_id = EXCLUDED.message_id,
				reply = EXCLUDED.reply, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at
			RETURNING true`, j.name, r.Key, r.Kind.String(), r.MessageID, r.Reply, j.owner, r.Time)
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
			return err
		}
	}
	if err := results.Close(); err != nil {
		return err
	}
	for _, q := range refused {
		var other record
		var state string
		err := tx.QueryRow(ctx, `SELECT key, state, message_id, reply, updated_at FROM sendloop_journal_keys
			WHERE journal = $1 AND key = $2`, j.name, q.rec.Key).Scan(&other.Key, &state, &other.MessageID, &other.Reply, &other.Time)
		if err != nil {
			return err
		}
		other.Kind = parseKind(state)
		q.other = &other
		q.err = &mailmerge.ClaimedError{Record: other.public()}
	}
	return tx.Commit(ctx)
}

// parseKind reads a state column; a state this release does not know is no licence to
// send: it reads as unknown.
func parseKind(s string) journalkind.Kind {
	if k, ok := journalkind.Parse(s); ok {
		return k
	}
	return journalkind.Unknown
}

// Delete removes the journal and its records.
func Delete(ctx context.Context, db *pgxpool.Pool, name string) error {
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM sendloop_journals WHERE name = $1`, name)
	return err
}

// RecordTx writes rec (an outcome, as Record takes) in tx, the caller's transaction,
// instead of in a group commit of the journal's own: so that a queue completes a job in
// the same transaction that writes its last records (package mailmerge/sendqueue settles a
// rescued chunk's claims so). The record counts once tx commits; this Journal's Lookup
// reads it then from the database.
func (j *Journal) RecordTx(ctx context.Context, tx pgx.Tx, rec mailmerge.JournalRecord) error {
	kind, ok := journalkind.Outcome(rec.Fate)
	if !ok || kind == journalkind.Suppressed || kind == journalkind.NotSubscribed {
		return fmt.Errorf("pgjournal: journal record of %q: %v is not the outcome of a message", rec.Key, rec.Fate)
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	_, err := tx.Exec(ctx, `INSERT INTO sendloop_journal_keys (journal, key, state, message_id, reply, owner, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (journal, key) DO UPDATE SET state = EXCLUDED.state, message_id = EXCLUDED.message_id,
			reply = EXCLUDED.reply, owner = EXCLUDED.owner, updated_at = EXCLUDED.updated_at`,
		j.name, rec.Key, kind.String(), rec.MessageID, rec.Reply, j.owner, rec.Time)
	if err != nil {
		return scrub(fmt.Errorf("pgjournal: journal %q: %w", j.name, err), j.db)
	}
	j.mu.Lock()
	// Read back from the database by Lookup: the transaction may yet roll back.
	j.written[j.hash(rec.Key)] = kind
	delete(j.known, rec.Key)
	j.mu.Unlock()
	return nil
}

// Fingerprint returns the template fingerprint the journal name is bound to, and writes
// nothing: what a dry run checks a journal against, as Open would, without binding a new
// one. A name no journal has is an error matching ErrNoJournal.
func Fingerprint(ctx context.Context, db *pgxpool.Pool, name string) (string, error) {
	if err := Migrate(ctx, db); err != nil {
		return "", scrub(err, db)
	}
	var fp string
	err := db.QueryRow(ctx, `SELECT fingerprint FROM sendloop_journals WHERE name = $1`, name).Scan(&fp)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", fmt.Errorf("%w: %q", ErrNoJournal, name)
	case err != nil:
		return "", scrub(fmt.Errorf("pgjournal: journal %q: %w", name, err), db)
	}
	return fp, nil
}

// ErrNoJournal is matched by the error of Records and Fingerprint for a name no journal
// has.
var ErrNoJournal = errors.New("pgjournal: no journal of that name")

// Records yields the records of the journal name, whatever message it is bound to, and
// writes nothing: what a send continuing from an earlier journal reads
// (mailmerge.SendOptions.ContinueFromRecords), such as a corrected message continuing from
// the journal of the one it replaces. A name no journal has yields an error matching
// ErrNoJournal.
func Records(ctx context.Context, db *pgxpool.Pool, name string) iter.Seq2[mailmerge.JournalRecord, error] {
	return func(yield func(mailmerge.JournalRecord, error) bool) {
		if err := Migrate(ctx, db); err != nil {
			yield(mailmerge.JournalRecord{}, scrub(err, db))
			return
		}
		var exists bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sendloop_journals WHERE name = $1)`, name).Scan(&exists); err != nil {
			yield(mailmerge.JournalRecord{}, scrub(fmt.Errorf("pgjournal: journal %q: %w", name, err), db))
			return
		}
		if !exists {
			yield(mailmerge.JournalRecord{}, fmt.Errorf("%w: %q", ErrNoJournal, name))
			return
		}
		j := &Journal{db: db, name: name}
		for rec, err := range j.records(ctx) {
			if !yield(rec.public(), scrub(err, db)) || err != nil {
				return
			}
		}
	}
}

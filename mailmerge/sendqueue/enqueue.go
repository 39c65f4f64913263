package sendqueue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"iter"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// Send describes a bulk send to enqueue: what mailmerge.New and Job.Send are given.
type Send struct {
	// Journal names the send's journal in the database (pgjournal): every worker shares
	// it. With the binding it names the send.
	Journal string
	// Template is the message, as mailmerge.New takes it.
	Template *smtp.Message
	// Options are mailmerge.New's; a shard is refused (the queue is how a send is split).
	Options mailmerge.Options
	// Source gives the rows, read as Job.Send and Job.Check read them to check (the tags'
	// escaping, who may be mailed), then once more to copy them.
	Source mailmerge.Source
	// ChunkSize is the rows of one River job; 0 is DefaultChunkSize. A chunk stops taking
	// rows after ChunkTime and snoozes itself with the rest, so a size too large for the
	// rate only costs a few more jobs' starts.
	ChunkSize int
	// Rate bounds the messages a second of the whole send, over every worker; 0 is none.
	Rate float64
}

// DefaultChunkSize is the rows of a chunk when Send.ChunkSize is 0: with four connections
// to a relay answering in about 20 ms a message, a chunk takes about half a second. Small
// chunks spread a send evenly over the workers (its last round holds one chunk, not a
// worker's large share), and a chunk's start (its rows read, who may be mailed checked)
// costs a few tens of milliseconds: at 200 rows, four workers on a 5,000-row send spent a
// seventh of their time in a last round that only one of them worked.
const DefaultChunkSize = 100

// Enqueued is what Enqueue did.
type Enqueued struct {
	// ID names the send: Status takes it.
	ID string
	// Rows and Chunks are the send's.
	Rows, Chunks int
	// Inserted is the River jobs inserted by this call: 0 when the send was enqueued
	// before.
	Inserted int
}

// ErrOtherRows is matched by Enqueue's refusal of a send enqueued before with other rows.
var ErrOtherRows = errors.New("sendqueue: the send was enqueued before with other rows")

// description is what a worker needs to build the send's mailmerge job, as stored.
type description struct {
	Template      *smtp.Message     `json:"template"`
	Vars          map[string]string `json:"vars,omitempty"`
	Defaults      map[string]string `json:"defaults,omitempty"`
	AllowEmpty    []string          `json:"allow_empty,omitempty"`
	AllowTags     []string          `json:"allow_tags,omitempty"`
	KeepEscaping  []string          `json:"keep_escaping,omitempty"`
	NoUnsubscribe bool              `json:"no_unsubscribe,omitempty"`
	// ListID and IncludeNotSubscribed: with a list, each chunk reads its rows' state in it
	// before its first message, for chunks may run hours after the enqueue.
	ListID               int  `json:"list_id,omitempty"`
	IncludeNotSubscribed bool `json:"include_not_subscribed,omitempty"`
}

// options are the job's options in a worker, who may be mailed read through api.
func (d description) options(api *sendloop.Client) mailmerge.Options {
	return mailmerge.Options{Vars: d.Vars, Defaults: d.Defaults, AllowEmpty: d.AllowEmpty, AllowTags: d.AllowTags,
		KeepEscaping: d.KeepEscaping, NoUnsubscribe: d.NoUnsubscribe, API: api, ListID: d.ListID,
		IncludeNotSubscribed: d.IncludeNotSubscribed}
}

// SendID returns the ID of the send whose journal is journal and whose job is j: the same
// for the same journal, template, variables and defaults.
func SendID(journal string, j *mailmerge.Job) string {
	sum := sha256.Sum256([]byte(journal + "\x00" + j.Binding().Fingerprint))
	return "snd_" + hex.EncodeToString(sum[:10])
}

// Enqueue checks the send, copies its rows into the database and enqueues its chunks, in
// one transaction; a send enqueued before (the same ID) is left as it is, and its rows
// are compared with the source's (ErrOtherRows). It fails before writing anything for
// what Job.Send would refuse: a *mailmerge.CheckError, *mailmerge.EscapeError or
// *mailmerge.UnsubscribeError.
func Enqueue(ctx context.Context, db *pgxpool.Pool, s Send, cfg Config) (*Enqueued, error) {
	e, err := enqueue(ctx, db, s, cfg)
	return e, scrub(err, db)
}

func enqueue(ctx context.Context, db *pgxpool.Pool, s Send, cfg Config) (*Enqueued, error) {
	switch {
	case s.Journal == "":
		return nil, errors.New("sendqueue: a send needs a journal name")
	case s.Options.Shard.Count > 1:
		return nil, errors.New("sendqueue: a queued send is not sharded: its chunks split it")
	case s.Rate < 0 || s.ChunkSize < 0:
		return nil, errors.New("sendqueue: a negative rate or chunk size")
	}
	j, err := mailmerge.New(s.Source, s.Template, s.Options)
	if err != nil {
		return nil, err
	}
	if err := j.CheckEscaping(ctx); err != nil {
		return nil, err
	}
	if err := j.CheckUnsubscribe(ctx); err != nil {
		return nil, err
	}
	// Who may be mailed, as Job.Send reads it: a bulk send without the API is refused
	// here, before anything is stored. The workers read it again before each chunk.
	check, err := j.Check(ctx, mailmerge.CheckOptions{})
	if err != nil {
		return nil, err
	}
	if check.AudienceUnread {
		return nil, mailmerge.ErrNoAPI
	}
	if err := migrate(ctx, db, cfg); err != nil {
		return nil, err
	}
	size := s.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	o := s.Options
	desc, err := json.Marshal(description{Template: s.Template, Vars: o.Vars, Defaults: o.Defaults, AllowEmpty: o.AllowEmpty,
		AllowTags: o.AllowTags, KeepEscaping: o.KeepEscaping, NoUnsubscribe: o.NoUnsubscribe,
		ListID: j.ListID(), IncludeNotSubscribed: o.IncludeNotSubscribed})
	if err != nil {
		return nil, fmt.Errorf("sendqueue: the template: %w", err)
	}
	columns, _ := json.Marshal(s.Source.Columns())
	id := SendID(s.Journal, j)
	res := &Enqueued{ID: id}

	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	tag, err := tx.Exec(ctx, `INSERT INTO sendloop_queue_sends (id, journal, fingerprint, description, columns, chunk_size, rate)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		id, s.Journal, j.Binding().Fingerprint, desc, columns, size, s.Rate)
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return again(ctx, tx, s.Source, res)
	}
	rows := &copyRows{sendID: id, digest: sha256.New(), seen: map[string]int{}}
	next, stop := iter.Pull2(s.Source.Rows(ctx))
	rows.next = next
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"sendloop_queue_rows"},
		[]string{"send_id", "idx", "line", "address", "raw", "key", "reject", "vals"}, rows)
	stop()
	if err == nil {
		err = rows.err
	}
	if err != nil {
		return nil, fmt.Errorf("sendqueue: copying the rows: %w", err)
	}
	res.Rows = rows.n
	res.Chunks = (rows.n + size - 1) / size
	if _, err := tx.Exec(ctx, `UPDATE sendloop_queue_sends SET rows = $2, chunks = $3, digest = $4 WHERE id = $1`,
		id, res.Rows, res.Chunks, hex.EncodeToString(rows.digest.Sum(nil))); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO sendloop_queue_chunks (send_id, chunk) SELECT $1, generate_series(0, $2 - 1)`,
		id, res.Chunks); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	client, err := river.NewClient(riverpgxv5.New(db), &river.Config{Schema: cfg.Schema})
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	params := make([]river.InsertManyParams, res.Chunks)
	for c := range params {
		params[c] = river.InsertManyParams{Args: ChunkArgs{Send: id, Chunk: c}}
	}
	if len(params) > 0 {
		inserted, err := client.InsertManyTx(ctx, tx, params)
		if err != nil {
			return nil, fmt.Errorf("sendqueue: enqueueing the chunks: %w", err)
		}
		for _, r := range inserted {
			if !r.UniqueSkippedAsDuplicate {
				res.Inserted++
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	return res, nil
}

// again answers an Enqueue of a send enqueued before: its counts, once the source's rows
// are found to be the same.
func again(ctx context.Context, tx pgx.Tx, src mailmerge.Source, res *Enqueued) (*Enqueued, error) {
	var digest string
	if err := tx.QueryRow(ctx, `SELECT rows, chunks, digest FROM sendloop_queue_sends WHERE id = $1`, res.ID).
		Scan(&res.Rows, &res.Chunks, &digest); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	h := sha256.New()
	for row, err := range src.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		hashRow(h, row)
	}
	if hex.EncodeToString(h.Sum(nil)) != digest {
		return nil, fmt.Errorf("%w: send %s; give the new rows another journal name", ErrOtherRows, res.ID)
	}
	return res, nil
}

// hashRow adds a row to the digest that tells a send's rows from others.
func hashRow(h hash.Hash, row mailmerge.Row) {
	b, _ := json.Marshal(row)
	h.Write(b)
	h.Write([]byte{'\n'})
}

// rowKey is the journal key of a row's address, as mailmerge.Job.Send makes it.
func rowKey(address string) string { return strings.ToLower(strings.TrimSpace(address)) }

// copyRows feeds the source's rows to COPY, numbering them and marking the duplicates of
// an address rejected, as Job.Send does within one pass: here the pass is the whole
// send, over every chunk.
type copyRows struct {
	sendID string
	next   func() (mailmerge.Row, error, bool)
	n      int
	row    []any
	err    error
	digest hash.Hash
	seen   map[string]int // the first row of each key: its line, or -(index+1)
}

func (c *copyRows) Next() bool {
	row, err, ok := c.next()
	if !ok {
		return false
	}
	if err != nil {
		c.err = err
		return false
	}
	hashRow(c.digest, row)
	idx := c.n
	c.n++
	raw := row.Raw
	if raw == "" {
		raw = row.Address
	}
	key := ""
	reject := row.Reject
	if reject == "" {
		key = rowKey(row.Address)
		pos := row.Line
		if pos == 0 {
			pos = -(idx + 1)
		}
		if first, dup := c.seen[key]; dup {
			key = ""
			if first < 0 {
				reject = fmt.Sprintf("duplicate of row %d", -first)
			} else {
				reject = fmt.Sprintf("duplicate of line %d", first)
			}
		} else {
			c.seen[key] = pos
		}
	}
	vals, err := json.Marshal(row.Values)
	if err != nil {
		c.err = err
		return false
	}
	c.row = []any{c.sendID, idx, row.Line, row.Address, raw, key, reject, json.RawMessage(vals)}
	return true
}

func (c *copyRows) Values() ([]any, error) { return c.row, nil }
func (c *copyRows) Err() error             { return c.err }

// uniqueStates are the states in which a chunk's job blocks a second insert: every one but
// cancelled and discarded, completed included, so that enqueueing a send again, even
// after it finished, inserts nothing.
var uniqueStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateCompleted, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

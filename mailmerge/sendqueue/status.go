package sendqueue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
)

// The fates Status counts. A row's fate is final once its chunk's run wrote it; before, it
// is read from the journal (in flight: a worker is sending it, or died doing so) or is
// waiting.
const (
	FateDone       = "done"       // the relay accepted the message, in this run or an earlier one
	FateRefused    = "refused"    // the relay refused it for good (5xx)
	FateUnknown    = "unknown"    // it may or may not have been delivered: listed, never sent again
	FateRejected   = "rejected"   // not sent: no address, a duplicate, an empty value
	FateSuppressed = "suppressed" // not sent: the address is suppressed (read before its chunk)
	// FateNotSubscribed: not sent: not a Subscribed member of the send's list.
	FateNotSubscribed = "not_subscribed"
	FateInFlight      = "in_flight"     // its message is going out now, or its worker died sending it
	FateDeferred      = "deferred"      // the relay answered 4xx: its chunk sends it again
	FateWaiting       = "waiting"       // not yet reached
	FateNotAttempted  = "not_attempted" // its chunk's run stopped before it; the chunk sends it again
)

// Fates lists the fates Status counts, in the order reports show them.
func Fates() []string {
	return []string{FateDone, FateRefused, FateUnknown, FateRejected, FateSuppressed, FateNotSubscribed, FateInFlight, FateDeferred, FateNotAttempted, FateWaiting}
}

// rowFateAt is a row's final fate, by its index in the send.
type rowFateAt struct {
	idx          int
	fate, reason string
	// claim is the journal key of a row a dead run left in flight: the chunk's completion
	// records it unknown in the journal, in the same transaction.
	claim string
}

// rowFate maps a row's result to the final fate a chunk records; ok is false for a row its
// chunk sends again (deferred, not attempted).
func rowFate(r mailmerge.RowResult) (fate, reason string, ok bool) {
	switch r.Fate {
	case sljob.Done:
		return FateDone, r.MessageID, true
	case sljob.Refused:
		return FateRefused, r.Reason, true
	case sljob.Unknown:
		return FateUnknown, r.Reason, true
	case sljob.Rejected:
		return FateRejected, r.Reason, true
	case sljob.Suppressed:
		return FateSuppressed, r.Reason, true
	case sljob.NotSubscribed:
		return FateNotSubscribed, r.Reason, true
	case sljob.Skipped:
		switch r.Skip {
		case mailmerge.SkipAlreadySent:
			return FateDone, "sent by another run", true
		case mailmerge.SkipRefused:
			return FateRefused, r.Reason, true
		default:
			return FateUnknown, r.Reason, true
		}
	}
	return "", "", false
}

// Status is a queued send's progress, read in one snapshot: its Fates add up to Rows and
// its Chunks to the send's chunks.
type Status struct {
	// ID names the send, Journal its journal.
	ID      string
	Journal string // the journal's name
	// Rows is the send's rows; Fates counts them by fate (each of Fates() present), adding
	// up to Rows.
	Rows  int
	Fates map[string]int // by fate
	// Chunks counts the send's chunks by where they stand.
	Chunks ChunkCounts
	// Workers counts the River clients seen in the last 30 seconds (Run's beat every
	// 10 s, and each chunk's start), for any send.
	Workers int
	// Rate is the send's bound in messages a second, shared by every worker (0: none).
	Rate float64
}

// ChunkCounts splits a send's chunks: completed, being worked, and left (waiting, snoozed
// or to retry).
type ChunkCounts struct {
	Done     int // completed
	InFlight int // running in a worker (or in a dead one, until rescued)
	Left     int // available, snoozed or waiting to be retried
}

// Finished reports whether every chunk is done.
func (s *Status) Finished() bool { return s.Chunks.InFlight == 0 && s.Chunks.Left == 0 }

// ErrNoSend is matched by Status's error for an ID the database does not hold.
var ErrNoSend = errors.New("sendqueue: no such send")

// rowFateSQL is a row's fate in SQL, for a row r of the send whose journal is $2: its own
// (written when its chunk's run settled it) or, before that, its key's state in the
// journal, looked up in the journal's index one row at a time (a scalar subquery, which
// the planner cannot turn into a join, written once so that it runs once a row). A join
// planned while the statistics still saw an empty journal scanned the journal's keys once
// per row, a status read quadratic in the send's rows (TestQueriesLookKeysUp).
const rowFateSQL = `coalesce(r.fate, CASE WHEN r.reject <> '' THEN 'rejected' ELSE
		CASE CASE WHEN r.key <> '' THEN ` + keyStateSQL + ` END
			WHEN 'sent' THEN 'done' WHEN 'refused' THEN 'refused' WHEN 'unknown' THEN 'unknown'
			WHEN 'in_flight' THEN 'in_flight' WHEN 'deferred' THEN 'deferred' ELSE 'waiting' END END)`

// keyStateSQL is the state of row r's key in the journal $2 (NULL when it has none),
// looked up in the journal's index.
const keyStateSQL = `(SELECT k.state FROM sendloop_journal_keys k WHERE k.journal = $2 AND k.key = r.key)`

// rowFateNoJournal is rowFateSQL before the journal's tables exist (no worker has run yet).
const rowFateNoJournal = `coalesce(r.fate, CASE WHEN r.reject <> '' THEN 'rejected' ELSE 'waiting' END)`

// statusFates counts a send's rows by fate ($1 the send, $2 its journal, $3 its chunk
// size), with fate rowFateSQL or rowFateNoJournal: a completed chunk's counts as its
// completion wrote them, and the rows of the other chunks one by one, each chunk's read
// by the index on its rows (the subquery fenced with OFFSET 0, whatever the statistics
// say). So a read near the end of a send of millions costs its last chunks' rows, not
// all of them; the counts come from one snapshot, for a chunk's counts and its rows'
// fates are written in one transaction. "$2::text IS NOT NULL" is always true: it names
// $2 and its type for rowFateNoJournal, which does not use it, so that both forms take
// the same arguments.
func statusFates(fate string) string {
	return `SELECT e.key, sum(e.value::bigint)
	FROM sendloop_queue_chunks c, jsonb_each_text(c.fates) AS e
	WHERE c.send_id = $1 AND c.fates IS NOT NULL GROUP BY 1
	UNION ALL
	SELECT ` + fate + `, count(*)
	FROM sendloop_queue_chunks c
	CROSS JOIN LATERAL (SELECT r.fate, r.reject, r.key FROM sendloop_queue_rows r
		WHERE r.send_id = $1 AND r.idx >= c.chunk * $3 AND r.idx < (c.chunk + 1) * $3 OFFSET 0) AS r
	WHERE c.send_id = $1 AND c.fates IS NULL AND $2::text IS NOT NULL
	GROUP BY 1`
}

// statusFatesQuery is the status's count with the journal's tables there.
var statusFatesQuery = statusFates(rowFateSQL)

// ReadStatus reads the progress of the send id.
func ReadStatus(ctx context.Context, db *pgxpool.Pool, id string, cfg Config) (*Status, error) {
	st, err := readStatus(ctx, db, id, cfg)
	return st, scrub(err, db)
}

func readStatus(ctx context.Context, db *pgxpool.Pool, id string, cfg Config) (*Status, error) {
	// A read takes no lock and creates nothing: --wait reads four times a second, beside
	// the workers. Tables not there yet mean no such send, no worker yet, or no River.
	jobs := "river_job"
	if cfg.Schema != "" {
		jobs = pgx.Identifier{cfg.Schema, "river_job"}.Sanitize()
	}
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var hasSends, hasJournal, hasJobs bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('sendloop_queue_sends') IS NOT NULL,
		to_regclass('sendloop_journal_keys') IS NOT NULL, to_regclass($1) IS NOT NULL`, jobs).
		Scan(&hasSends, &hasJournal, &hasJobs); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	if !hasSends {
		return nil, fmt.Errorf("%w: %s", ErrNoSend, id)
	}
	st := &Status{ID: id, Fates: map[string]int{}}
	var chunks, chunkSize int
	err = tx.QueryRow(ctx, `SELECT journal, rows, chunks, chunk_size, rate FROM sendloop_queue_sends WHERE id = $1`, id).
		Scan(&st.Journal, &st.Rows, &chunks, &chunkSize, &st.Rate)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNoSend, id)
	}
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	for _, f := range Fates() {
		st.Fates[f] = 0
	}
	fatesQuery := statusFates(rowFateNoJournal)
	if hasJournal {
		fatesQuery = statusFatesQuery
	}
	rows, err := tx.Query(ctx, fatesQuery, id, st.Journal, chunkSize)
	if err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	for rows.Next() {
		var f string
		var n int
		if err := rows.Scan(&f, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sendqueue: %w", err)
		}
		st.Fates[f] += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE done_at IS NOT NULL) FROM sendloop_queue_chunks WHERE send_id = $1`, id).
		Scan(&st.Chunks.Done); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	if hasJobs {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+jobs+` WHERE kind = $1 AND state = 'running' AND args->>'send' = $2`,
			ChunkKind, id).Scan(&st.Chunks.InFlight); err != nil {
			return nil, fmt.Errorf("sendqueue: %w", err)
		}
	}
	st.Chunks.InFlight = min(st.Chunks.InFlight, chunks-st.Chunks.Done)
	st.Chunks.Left = chunks - st.Chunks.Done - st.Chunks.InFlight
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM sendloop_queue_workers WHERE seen_at > now() - interval '30 seconds'`).
		Scan(&st.Workers); err != nil {
		return nil, fmt.Errorf("sendqueue: %w", err)
	}
	return st, nil
}

// Row is a row of a queued send, as Rows lists it.
type Row struct {
	Index   int    // in the send, from 0
	Line    int    // in the file, 0 for a source without lines
	Address string // as written
	Fate    string // one of Fates()
	Reason  string // why, or the Message-ID of a done row
}

// Rows lists the rows of the send id whose final fate is one of fates (FateUnknown,
// FateRefused, FateRejected...), in the send's order.
func Rows(ctx context.Context, db *pgxpool.Pool, id string, fates ...string) ([]Row, error) {
	rows, err := db.Query(ctx, `SELECT idx, line, raw, fate, reason FROM sendloop_queue_rows
		WHERE send_id = $1 AND fate = ANY($2) ORDER BY idx`, id, fates)
	if err != nil {
		return nil, scrub(fmt.Errorf("sendqueue: %w", err), db)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Row, error) {
		var x Row
		err := r.Scan(&x.Index, &x.Line, &x.Address, &x.Fate, &x.Reason)
		return x, err
	})
	return out, scrub(err, db)
}

// Verdict judges a finished send's rows against the budgets as Job.Send judges a run's:
// the rows refused or rejected against maxRejects, those of unknown outcome against
// maxUnknown, each over its budget a *job.BudgetError (Budget "MaxRejects" or
// "MaxUnknown"), joined; nil within both. Suppressed and not subscribed rows are no
// rejects.
func (s *Status) Verdict(maxRejects, maxUnknown sljob.Budget) error {
	return errors.Join(
		sljob.Judge("MaxRejects", "rejected or refused", maxRejects, s.Fates[FateRefused]+s.Fates[FateRejected], s.Rows),
		sljob.Judge("MaxUnknown", "of unknown outcome", maxUnknown, s.Fates[FateUnknown], s.Rows))
}

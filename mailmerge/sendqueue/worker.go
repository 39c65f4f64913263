package sendqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/go-sendloop/sendloop"
	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
	"github.com/go-sendloop/sendloop/smtp"
)

// ChunkKind is the River job kind of a chunk.
const ChunkKind = "sendloop_send_chunk"

// Queue is the River queue the chunks go to.
const Queue = "sendloop_send"

// The timing that bounds a dead worker's chunk to about 55 s (see the package documentation).
const (
	// ChunkTime is how long a chunk takes rows: past it, the chunk sends what it holds
	// and snoozes itself with the rest of its rows.
	ChunkTime = 8 * time.Second
	// JobTimeout is the Worker's River timeout: ChunkTime, and the last messages.
	JobTimeout = 12 * time.Second
	// RescueAfter is the client's RescueStuckJobsAfter that ConfigureClient and Run set:
	// past JobTimeout, so that a live chunk is never rescued.
	RescueAfter = 15 * time.Second
	// RetryDelay is the wait before a failed or rescued chunk runs again, per attempt
	// (at most 5 s): the journal makes a rerun safe.
	RetryDelay = time.Second
	// SlowdownSnooze is how long a chunk whose rows the relay deferred (4xx) waits.
	SlowdownSnooze = 30 * time.Second
)

// The timing in use: the constants above, shortened by the tests, so that a rescue takes
// seconds there.
var (
	chunkTime      = ChunkTime
	jobTimeout     = JobTimeout
	rescueAfter    = RescueAfter
	slowdownSnooze = SlowdownSnooze
)

// ChunkArgs are a chunk's River job arguments: the send and the chunk's number, from 0.
type ChunkArgs struct {
	Send  string `json:"send"`  // the send's ID
	Chunk int    `json:"chunk"` // the chunk's number: its rows are Chunk·size to (Chunk+1)·size
}

// Kind is ChunkKind.
func (ChunkArgs) Kind() string { return ChunkKind }

// InsertOpts puts chunks on Queue, unique by their arguments over every state but
// cancelled and discarded.
func (ChunkArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 1000,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}
}

// WorkerOptions tunes a Worker.
type WorkerOptions struct {
	// API is the client each chunk reads who may be mailed through before its first
	// message (the account's suppression list; with a list, the rows' state in it): a
	// chunk of more than one row fails without it (mailmerge.ErrNoAPI).
	API *sendloop.Client
	// OnRow, when set, is called with the fate of every row a chunk's run sends or
	// settles (mailmerge.SendOptions.OnRow).
	OnRow func(sendID string, r mailmerge.RowResult)
}

// Worker sends chunks: a river.Worker[ChunkArgs]. It is safe for concurrent use by a
// client's goroutines; Close closes the journals it opened.
type Worker struct {
	river.WorkerDefaults[ChunkArgs]
	db    *pgxpool.Pool
	relay *smtp.Relay
	opts  WorkerOptions

	mu       sync.Mutex
	journals map[string]*pgjournal.Journal // by send ID, opened once per process
	sends    map[string]*queuedSend
}

// NewWorker returns a worker sending through relay (its connections and retries are the
// relay's; leave its rate unset, for Send.Rate is shared in the database) with the
// journals and rows in db.
func NewWorker(db *pgxpool.Pool, relay *smtp.Relay, opts WorkerOptions) *Worker {
	return &Worker{db: db, relay: relay, opts: opts, journals: map[string]*pgjournal.Journal{}, sends: map[string]*queuedSend{}}
}

// AddWorker registers w into workers, for a program's own River client; configure that
// client with ConfigureClient.
func AddWorker(workers *river.Workers, w *Worker) error { return river.AddWorkerSafely(workers, w) }

// ConfigureClient sets what a River client running Workers needs: Queue among its queues
// (maxChunks at once; 1 when less) and RescueStuckJobsAfter at most RescueAfter, so that a
// dead worker's chunk is taken over within the bound the package documentation gives.
// River wants the client's JobTimeout below that: one unset (River's default is a minute)
// or longer becomes JobTimeout. River's rescuer honours a kind's own Timeout, so a
// program's longer jobs keep theirs by their workers' Timeout method, and are not rescued
// before it runs out.
func ConfigureClient(cfg *river.Config, maxChunks int) {
	if cfg.Queues == nil {
		cfg.Queues = map[string]river.QueueConfig{}
	}
	if _, ok := cfg.Queues[Queue]; !ok {
		cfg.Queues[Queue] = river.QueueConfig{MaxWorkers: max(1, maxChunks)}
	}
	if cfg.RescueStuckJobsAfter == 0 || cfg.RescueStuckJobsAfter > rescueAfter {
		cfg.RescueStuckJobsAfter = rescueAfter
	}
	if cfg.JobTimeout == 0 || cfg.JobTimeout >= cfg.RescueStuckJobsAfter {
		cfg.JobTimeout = min(jobTimeout, cfg.RescueStuckJobsAfter-time.Second)
	}
}

// Timeout is JobTimeout.
func (w *Worker) Timeout(*river.Job[ChunkArgs]) time.Duration { return jobTimeout }

// NextRetry runs a failed or rescued chunk again soon: RetryDelay per attempt, at most
// 5 s. The journal makes a rerun safe; MaxAttempts (1000) keeps a long relay outage from
// discarding chunks.
func (w *Worker) NextRetry(j *river.Job[ChunkArgs]) time.Time {
	return time.Now().Add(min(time.Duration(max(j.Attempt, 1))*RetryDelay, 5*RetryDelay))
}

// Close closes the journals the worker opened: their keys still in flight read as
// unknown from then on.
func (w *Worker) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for id, j := range w.journals {
		errs = append(errs, j.Close())
		delete(w.journals, id)
	}
	return errors.Join(errs...)
}

// queuedSend is a send as a worker loaded it.
type queuedSend struct {
	id, journal, fingerprint string
	desc                     description
	columns                  []string
	chunkSize, chunks        int
	rate                     float64
	checkPasses              int            // the passes over the source Job.Send makes before sending
	probe                    *mailmerge.Job // the send's job over no rows: its binding opens the journal
}

func (w *Worker) send(ctx context.Context, id string) (*queuedSend, error) {
	w.mu.Lock()
	s := w.sends[id]
	w.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s = &queuedSend{id: id}
	var desc, columns []byte
	err := w.db.QueryRow(ctx, `SELECT journal, fingerprint, description, columns, chunk_size, chunks, rate
		FROM sendloop_queue_sends WHERE id = $1`, id).Scan(&s.journal, &s.fingerprint, &desc, &columns, &s.chunkSize, &s.chunks, &s.rate)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, river.JobCancel(fmt.Errorf("sendqueue: no send %s in the database", id))
	}
	if err != nil {
		return nil, fmt.Errorf("sendqueue: send %s: %w", id, err)
	}
	if err := json.Unmarshal(desc, &s.desc); err != nil {
		return nil, river.JobCancel(fmt.Errorf("sendqueue: send %s: %w", id, err))
	}
	if err := json.Unmarshal(columns, &s.columns); err != nil {
		return nil, river.JobCancel(fmt.Errorf("sendqueue: send %s: %w", id, err))
	}
	// Job.Send's checks read the source before sending (CheckEscaping when a tag may need
	// it, CheckUnsubscribe when the template lacks an unsubscription): a chunk's source
	// paces only the pass that sends, so count the passes they make.
	probe := mailmerge.RowFunc(s.columns, func(context.Context) iter.Seq2[mailmerge.Row, error] {
		s.checkPasses++
		return func(func(mailmerge.Row, error) bool) {}
	})
	pj, err := mailmerge.New(probe, s.desc.Template, s.desc.options(w.opts.API))
	if err != nil {
		return nil, river.JobCancel(fmt.Errorf("sendqueue: send %s: %w", id, err))
	}
	if pj.Binding().Fingerprint != s.fingerprint {
		return nil, river.JobCancel(fmt.Errorf("sendqueue: send %s was enqueued by a release that binds its message otherwise", id))
	}
	_ = pj.CheckEscaping(ctx)
	_ = pj.CheckUnsubscribe(ctx)
	if s.desc.ListID != 0 {
		s.checkPasses++ // who may be mailed: the rows' state in the list is read first
	}
	s.probe = pj
	w.mu.Lock()
	defer w.mu.Unlock()
	if other := w.sends[id]; other != nil {
		return other, nil
	}
	w.sends[id] = s
	return s, nil
}

func (w *Worker) journal(ctx context.Context, s *queuedSend) (*pgjournal.Journal, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if jr := w.journals[s.id]; jr != nil {
		return jr, nil
	}
	jr, err := pgjournal.Open(ctx, w.db, s.journal, s.probe.Binding(), pgjournal.Options{})
	if err != nil {
		return nil, err
	}
	w.journals[s.id] = jr
	return jr, nil
}

// queuedRow is a row of a chunk still without a fate.
type queuedRow struct {
	idx int
	row mailmerge.Row
	key string
}

// Work sends the chunk's rows that have no fate yet, writes the fates of the rows it
// settled and, when none is left, completes the job in that transaction.
func (w *Worker) Work(ctx context.Context, rj *river.Job[ChunkArgs]) error {
	err := w.work(ctx, rj)
	return scrub(err, w.db)
}

func (w *Worker) work(ctx context.Context, rj *river.Job[ChunkArgs]) error {
	start := time.Now()
	args := rj.Args
	s, err := w.send(ctx, args.Send)
	if err != nil {
		return err
	}
	w.heartbeat(ctx)
	jr, err := w.journal(ctx, s)
	if err != nil {
		return fmt.Errorf("sendqueue: send %s: %w", s.id, err)
	}
	first, last := args.Chunk*s.chunkSize, (args.Chunk+1)*s.chunkSize
	todo, settled, err := w.load(ctx, s, first, last)
	if err != nil {
		return err
	}
	fates := settled
	var cut bool
	var sendErr error
	var deferred int
	if len(todo) > 0 {
		pass := 0
		src := mailmerge.RowFunc(s.columns, func(ctx context.Context) iter.Seq2[mailmerge.Row, error] {
			pass++
			sending := pass > s.checkPasses
			return func(yield func(mailmerge.Row, error) bool) {
				pace := &pacer{db: w.db, send: s.id, rate: s.rate}
				for _, r := range todo {
					if sending {
						if time.Since(start) > chunkTime {
							cut = true
							return
						}
						// A slot past the chunk's time is left: the chunk snoozes and the
						// next run takes a later one.
						ok, err := pace.wait(ctx, start.Add(chunkTime))
						if err != nil {
							yield(mailmerge.Row{}, err)
							return
						}
						if !ok {
							cut = true
							return
						}
					}
					if !yield(r.row, nil) {
						return
					}
				}
			}
		})
		mj, err := mailmerge.New(src, s.desc.Template, s.desc.options(w.opts.API))
		if err != nil {
			return river.JobCancel(fmt.Errorf("sendqueue: send %s: %w", s.id, err))
		}
		res, err := mj.Send(ctx, w.relay, mailmerge.SendOptions{JournalStore: jr,
			MaxRejects: sljob.Unlimited(), MaxUnknown: sljob.Unlimited(),
			OnRow: func(r mailmerge.RowResult) {
				if r.Index < 0 || r.Index >= len(todo) {
					return
				}
				if f, reason, ok := rowFate(r); ok {
					fates = append(fates, rowFateAt{idx: todo[r.Index].idx, fate: f, reason: reason})
				} else if r.Fate == sljob.Deferred {
					deferred++
				}
				if w.opts.OnRow != nil {
					w.opts.OnRow(s.id, r)
				}
			}})
		if res != nil {
			_ = res.Close()
		}
		var jerr *mailmerge.JournalError
		switch {
		case errors.As(err, &jerr):
			return river.JobCancel(fmt.Errorf("sendqueue: send %s: %w", s.id, err))
		case res == nil && err != nil:
			return fmt.Errorf("sendqueue: send %s chunk %d: %w", s.id, args.Chunk, err)
		}
		sendErr = err
	}
	left := len(todo) + len(settled) - len(fates)
	done, err := w.record(ctx, rj, s, jr, fates, left == 0)
	if err != nil {
		return err
	}
	switch {
	case done:
		return nil
	case sendErr != nil:
		return fmt.Errorf("sendqueue: send %s chunk %d: %w", s.id, args.Chunk, sendErr)
	case deferred > 0:
		return river.JobSnooze(slowdownSnooze)
	case cut || left > 0:
		return river.JobSnooze(0)
	}
	return nil
}

// chunkRowsQuery reads a chunk's rows without a fate ($1 the send, $2 its journal, rows
// $3 to $4), with their keys' states in the journal, each looked up in the journal's
// index by a subquery, whatever the statistics say (see rowFateSQL).
const chunkRowsQuery = `SELECT r.idx, r.line, r.address, r.raw, r.reject, r.vals, r.key,
		coalesce(CASE WHEN r.key <> '' THEN ` + keyStateSQL + ` END, '')
	FROM sendloop_queue_rows r
	WHERE r.send_id = $1 AND r.idx >= $3 AND r.idx < $4 AND r.fate IS NULL ORDER BY r.idx`

// load reads the chunk's rows without a fate: those the journal already records (a run
// killed after its messages, before its chunk's transaction) are settled by it (sent:
// done; refused; in flight or unknown: unknown, never sent again), the others are to send.
func (w *Worker) load(ctx context.Context, s *queuedSend, first, last int) ([]queuedRow, []rowFateAt, error) {
	rows, err := w.db.Query(ctx, chunkRowsQuery, s.id, s.journal, first, last)
	if err != nil {
		return nil, nil, fmt.Errorf("sendqueue: send %s: %w", s.id, err)
	}
	defer rows.Close()
	var todo []queuedRow
	var settled []rowFateAt
	for rows.Next() {
		var r queuedRow
		var vals []byte
		var state string
		if err := rows.Scan(&r.idx, &r.row.Line, &r.row.Address, &r.row.Raw, &r.row.Reject, &vals, &r.key, &state); err != nil {
			return nil, nil, fmt.Errorf("sendqueue: send %s: %w", s.id, err)
		}
		if err := json.Unmarshal(vals, &r.row.Values); err != nil {
			return nil, nil, fmt.Errorf("sendqueue: send %s row %d: %w", s.id, r.idx, err)
		}
		switch state {
		case "sent":
			settled = append(settled, rowFateAt{idx: r.idx, fate: FateDone, reason: "sent by an earlier run of the chunk"})
		case "refused":
			settled = append(settled, rowFateAt{idx: r.idx, fate: FateRefused, reason: "refused in an earlier run of the chunk"})
		case "in_flight":
			settled = append(settled, rowFateAt{idx: r.idx, fate: FateUnknown, reason: "in flight when an earlier run of the chunk stopped: not sent again", claim: r.key})
		case "unknown":
			settled = append(settled, rowFateAt{idx: r.idx, fate: FateUnknown, reason: "in flight when an earlier run of the chunk stopped: not sent again"})
		default:
			todo = append(todo, r)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sendqueue: send %s: %w", s.id, err)
	}
	return todo, settled, nil
}

// record writes the fates of the rows this run settled and, with complete, completes the
// job in the same transaction, which also writes the chunk's last journal records: the
// claims a dead run left in flight, recorded unknown (jr.RecordTx), so that the chunk done
// and the journal never disagree. It reports whether the job is completed.
func (w *Worker) record(ctx context.Context, rj *river.Job[ChunkArgs], s *queuedSend, jr *pgjournal.Journal, fates []rowFateAt, complete bool) (bool, error) {
	ctx = context.WithoutCancel(ctx) // what was sent must be written, even past the timeout
	tx, err := w.db.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("sendqueue: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if len(fates) > 0 {
		idx := make([]int32, len(fates))
		fate := make([]string, len(fates))
		reason := make([]string, len(fates))
		for i, f := range fates {
			idx[i], fate[i], reason[i] = int32(min(f.idx, math.MaxInt32)), f.fate, f.reason
		}
		if _, err := tx.Exec(ctx, `UPDATE sendloop_queue_rows r SET fate = u.fate, reason = u.reason
			FROM unnest($2::int[], $3::text[], $4::text[]) AS u(idx, fate, reason)
			WHERE r.send_id = $1 AND r.idx = u.idx AND r.fate IS NULL`, s.id, idx, fate, reason); err != nil {
			return false, fmt.Errorf("sendqueue: %w", err)
		}
	}
	if complete {
		for _, f := range fates {
			if f.claim == "" {
				continue
			}
			if err := jr.RecordTx(ctx, tx, mailmerge.JournalRecord{Key: f.claim, Fate: sljob.Unknown,
				Reply: "in flight when its run stopped; the chunk completed without sending it again"}); err != nil {
				return false, err
			}
		}
		first := rj.Args.Chunk * s.chunkSize
		if _, err := tx.Exec(ctx, `UPDATE sendloop_queue_chunks SET done_at = now(), fates = (
				SELECT jsonb_object_agg(f, n) FROM (SELECT `+rowFateSQL+` AS f, count(*) AS n
					FROM sendloop_queue_rows r WHERE r.send_id = $1 AND r.idx >= $3 AND r.idx < $4 GROUP BY 1) AS x)
			WHERE send_id = $1 AND chunk = $5`,
			s.id, s.journal, first, first+s.chunkSize, rj.Args.Chunk); err != nil {
			return false, fmt.Errorf("sendqueue: %w", err)
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, rj); err != nil {
			return false, fmt.Errorf("sendqueue: completing the chunk: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("sendqueue: %w", err)
	}
	return complete, nil
}

// heartbeat marks the River client running this job as a live worker (Status.Workers).
func (w *Worker) heartbeat(ctx context.Context) {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return
	}
	_, _ = w.db.Exec(ctx, `INSERT INTO sendloop_queue_workers (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET seen_at = now()`, client.ID())
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// pacer takes a send's slots from its budget in the database: a tenth of a second of
// them per round trip, spaced by 1/rate.
type pacer struct {
	db   *pgxpool.Pool
	send string
	rate float64
	next time.Time // the next slot held
	held int       // slots held from next on
}

// wait waits for the next slot, or reports false when it comes after deadline.
func (p *pacer) wait(ctx context.Context, deadline time.Time) (bool, error) {
	if p.rate <= 0 {
		return true, nil
	}
	step := time.Duration(float64(time.Second) / p.rate)
	if p.held == 0 {
		n := max(1, int(p.rate/10))
		var waitSec float64
		err := p.db.QueryRow(ctx, `UPDATE sendloop_queue_sends
			SET next_slot = greatest(next_slot, clock_timestamp()) + make_interval(secs => $2)
			WHERE id = $1
			RETURNING extract(epoch FROM next_slot - make_interval(secs => $2) - clock_timestamp())::float8`,
			p.send, float64(n)/p.rate).Scan(&waitSec)
		if err != nil {
			return false, fmt.Errorf("sendqueue: the send's rate: %w", err)
		}
		p.next, p.held = time.Now().Add(time.Duration(waitSec*float64(time.Second))), n
	}
	at := p.next
	p.next = p.next.Add(step)
	p.held--
	if at.After(deadline) {
		return false, nil
	}
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
		}
	}
	return true, nil
}

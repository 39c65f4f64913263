package sendqueue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// RunOptions tunes Run.
type RunOptions struct {
	// Config says where River's tables are.
	Config
	// Chunks is how many chunks the client works at once (River's MaxWorkers); 0 is 1: a
	// chunk already sends over all the relay's connections.
	Chunks int
	// Logger gets River's log; nil logs River's warnings and errors to stderr.
	Logger *slog.Logger
	// Started, when set, is called once the client works, with its River client ID.
	Started func(id string)
	// StopTimeout bounds the wait for the chunks at work once ctx ends (0: JobTimeout);
	// past it their contexts are cancelled and their rows in flight are unknown.
	StopTimeout time.Duration
}

// Run runs a River client working w's chunks until ctx ends (a worker of the CLI), then
// stops it: the chunks at work finish their rows in hand (each stops taking rows within
// ChunkTime and snoozes the rest) within StopTimeout.
func Run(ctx context.Context, db *pgxpool.Pool, w *Worker, opts RunOptions) error {
	err := run(ctx, db, w, opts)
	return scrub(err, db)
}

func run(ctx context.Context, db *pgxpool.Pool, w *Worker, opts RunOptions) error {
	if err := migrate(ctx, db, opts.Config); err != nil {
		return err
	}
	workers := river.NewWorkers()
	if err := AddWorker(workers, w); err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	stopTimeout := cmpOr(opts.StopTimeout, jobTimeout)
	cfg := &river.Config{Schema: opts.Schema, Workers: workers, Logger: opts.Logger,
		JobTimeout: jobTimeout, SoftStopTimeout: stopTimeout,
		FetchCooldown: 20 * time.Millisecond, FetchPollInterval: time.Second}
	ConfigureClient(cfg, max(1, opts.Chunks))
	client, err := river.NewClient(riverpgxv5.New(db), cfg)
	if err != nil {
		return fmt.Errorf("sendqueue: %w", err)
	}
	// The client runs on a context of its own: ctx's end is a soft stop, not a cancel.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("sendqueue: starting River: %w", err)
	}
	beat := func() {
		_, _ = db.Exec(context.WithoutCancel(ctx), `INSERT INTO sendloop_queue_workers (id) VALUES ($1)
			ON CONFLICT (id) DO UPDATE SET seen_at = now()`, client.ID())
	}
	beat()
	if opts.Started != nil {
		opts.Started(client.ID())
	}
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			beat()
		}
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout+5*time.Second)
	defer cancel()
	err = client.Stop(stopCtx)
	_, _ = db.Exec(stopCtx, `DELETE FROM sendloop_queue_workers WHERE id = $1`, client.ID())
	if err != nil {
		return fmt.Errorf("sendqueue: stopping River: %w", err)
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
	"github.com/go-sendloop/sendloop/smtp"
)

func workerCommand() *command {
	return &command{
		name:    "worker",
		args:    "[--concurrency N] [--chunks N]",
		summary: "send the chunks of queued sends (send --queue) until SIGTERM",
		help: `
Runs a worker of the sends that 'sendloop send --recipients FILE --journal NAME --queue'
enqueued: any number of workers, on any machines, share the queue and the journals in the
PostgreSQL database SENDLOOP_JOURNAL_URL names (from the environment only; its password is
never printed), and send through the relay of the SENDLOOP_SMTP_* variables (see 'sendloop
help send'). Each chunk of a send is a River job (riverqueue.com); a worker takes one, sends
its rows over --concurrency N relay connections and completes it in the transaction that
writes its rows' fates. No row is sent twice: a key is claimed in the journal before its
message goes out.

A worker killed at any moment (kill -9 included) leaves its chunk to River's rescue: another
worker takes it over within about 55 seconds and resumes it from the journal; the rows in flight
at the kill are listed unknown and never sent again. SIGTERM or SIGINT stops the worker once
its chunks in hand are written (a chunk takes rows for at most 8 seconds); a second signal
stops it at once.

--rate on the send bounds the send as a whole, over every worker: the workers take their
slots from a budget in the database. A relay's 4xx slowdown, past its retries, snoozes the
chunk for 30 seconds. 'sendloop send --status ID' shows a send's progress; River UI
(riverqueue.com/riverui) run against the same database shows the chunks as River jobs.`,
		examples: `SENDLOOP_JOURNAL_URL=postgres://sendloop@db/sendloop?search_path=sendloop sendloop worker --concurrency 4
sendloop send --from news@example.com --subject News --html news.html --recipients list.csv --journal news-2026-12 --queue --rate 50 --list-unsubscribe 'https://example.com/u?e={{email}}' --one-click
sendloop send --status snd_0123456789abcdef0123 --json`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			concurrency := fs.Int("concurrency", smtp.DefaultMaxConnections, "keep up to `N` relay connections open")
			chunks := fs.Int("chunks", 1, "work up to `N` chunks at once")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("worker", "unexpected argument %q", args[0])
				}
				if *concurrency < 1 || *chunks < 1 {
					return usagef("worker", "--concurrency and --chunks must be at least 1")
				}
				return runWorker(ctx, a, *concurrency, *chunks)
			}
		},
	}
}

func runWorker(ctx context.Context, a *app, concurrency, chunks int) error {
	db, err := queueDB(ctx, a, "worker")
	if err != nil {
		return err
	}
	defer db.Close()
	opts := []smtp.Option{smtp.WithMaxConnections(concurrency)}
	if a.verbose {
		opts = append(opts, smtp.WithLogger(a.logger()))
	}
	relay, _, err := a.sendRelay(ctx, opts)
	if err != nil {
		return err
	}
	defer relay.Close()
	// Each chunk reads who may be mailed before its first message, through the API.
	api, err := a.audienceClient(ctx, "a worker", "before each chunk")
	if err != nil {
		return err
	}
	w := sendqueue.NewWorker(db, relay, sendqueue.WorkerOptions{API: api})
	defer func() { _ = w.Close() }()
	level := slog.LevelWarn
	if a.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	// The signal's context ends the worker softly; a second signal cancels its chunks.
	err = sendqueue.Run(ctx, db, w, sendqueue.RunOptions{Chunks: chunks, Logger: logger, Started: func(id string) {
		a.note("worker %s: sending the queued chunks through %s (%s); SIGTERM stops it", id, relay.Addr(), plural(concurrency, "connection"))
	}})
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

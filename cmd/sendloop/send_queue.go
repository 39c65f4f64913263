package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
)

// queueOptions are the flags of a send split across workers: --queue, --status, --wait.
type queueOptions struct {
	on        bool
	status    string
	wait      bool
	chunkSize int
}

// queueFlags defines the queue's flags of the send command.
func queueFlags(fs *flag.FlagSet, q *queueOptions) {
	fs.BoolVar(&q.on, "queue", false, "with --recipients and SENDLOOP_JOURNAL_URL: store the rows in the database and enqueue the send for 'sendloop worker' processes; print its ID")
	fs.StringVar(&q.status, "status", "", "show the progress of the queued send `ID` (no other send flag needed)")
	fs.BoolVar(&q.wait, "wait", false, "with --queue or --status: follow the send to its end, then report it with the usual exit codes")
	fs.IntVar(&q.chunkSize, "chunk-size", sendqueue.DefaultChunkSize, "with --queue: the rows of one chunk, the unit a worker takes (`N`)")
}

// queueConflicts are the flags of send --recipients that a queued send cannot take.
var queueConflicts = []string{"shard", "dry-run", "preview", "test-to", "continue-from", "resend-unknown", "resend-refused"}

// queueDB connects to SENDLOOP_JOURNAL_URL, which a queued send needs.
func queueDB(ctx context.Context, a *app, what string) (*pgxpool.Pool, error) {
	url, ok := a.lookupEnv(envJournalURL)
	if !ok || strings.TrimSpace(url) == "" {
		return nil, configError("%s needs %s: the PostgreSQL database that holds the queue and the journal", what, envJournalURL)
	}
	db, err := sendqueue.Connect(ctx, url)
	if err != nil {
		return nil, configError("%s: %v", envJournalURL, err)
	}
	return db, nil
}

// runSendQueue checks the send, stores its rows and enqueues its chunks (send --queue).
func runSendQueue(ctx context.Context, a *app, o *sendOptions) error {
	l := &o.list
	if !o.queue.on {
		return usagef("send", "--wait and --chunk-size go with --queue (or --wait with --status ID)")
	}
	for _, name := range queueConflicts {
		if l.given[name] {
			return usagef("send", "--queue cannot take --%s: the workers split the send and share its journal", name)
		}
	}
	if l.journal == "" {
		return usagef("send", "--queue needs --journal NAME: the journal in %s that every worker shares", envJournalURL)
	}
	if o.queue.chunkSize < 1 {
		return usagef("send", "--chunk-size must be at least 1")
	}
	if err := l.checkLimits(o); err != nil {
		return err
	}
	vars, err := nameValues("--var", l.vars)
	if err != nil {
		return err
	}
	defaults, err := nameValues("--default", l.defaults)
	if err != nil {
		return err
	}
	tmpl, err := o.message(a.stdin)
	if err != nil {
		return err
	}
	db, err := queueDB(ctx, a, "--queue")
	if err != nil {
		return err
	}
	defer db.Close()
	api, err := a.audienceClient(ctx, l.sourceFlag(), "before anything is enqueued")
	if err != nil {
		return err
	}
	src, err := l.source(ctx, api)
	if err != nil {
		return err
	}
	send := sendqueue.Send{Journal: l.journal, Template: tmpl, Source: src, ChunkSize: o.queue.chunkSize, Rate: l.rate,
		Options: mailmerge.Options{Vars: vars, Defaults: defaults, AllowEmpty: l.allowEmpty, AllowTags: l.allowTags,
			KeepEscaping: l.keepEscaping, NoUnsubscribe: l.noUnsubscribe, API: api, IncludeNotSubscribed: l.includeNotSubscribed}}
	if l.recipients != "" {
		send.Options.ListID = l.listID // a list's own source names it
	}
	e, err := sendqueue.Enqueue(ctx, db, send, sendqueue.Config{})
	var cerr *mailmerge.CheckError
	switch {
	case errors.As(err, &cerr):
		return l.checkRefusal(cerr, vars)
	case errors.Is(err, mailmerge.ErrEscape):
		return escapeRefusal(err)
	case errors.Is(err, mailmerge.ErrUnsubscribe):
		return unsubscribeRefusal(err)
	case errors.Is(err, sendqueue.ErrOtherRows):
		return inputf("--journal %s: the send was enqueued before with other rows: give the new rows another journal name", l.journal)
	case err != nil:
		return err
	}
	if o.queue.wait {
		a.note("send %s: %s in %s enqueued", e.ID, plural(e.Rows, "row"), plural(e.Chunks, "chunk"))
		return followSend(ctx, a, o, db, e.ID)
	}
	if a.json {
		return writeJSON(a.stdout, orderedObject{{"id", e.ID}, {"rows", e.Rows}, {"chunks", e.Chunks}, {"inserted", e.Inserted}})
	}
	var b strings.Builder
	if e.Inserted == 0 {
		fmt.Fprintf(&b, "Send %s was enqueued before: nothing new enqueued (%s in %s).\n", e.ID, plural(e.Rows, "row"), plural(e.Chunks, "chunk"))
	} else {
		fmt.Fprintf(&b, "Enqueued send %s: %s in %s.\n", e.ID, plural(e.Rows, "row"), plural(e.Chunks, "chunk"))
	}
	fmt.Fprintf(&b, "Workers send it: sendloop worker (with %s and the relay's settings); progress: sendloop send --status %s\n", envJournalURL, e.ID)
	_, err = io.WriteString(a.stdout, b.String())
	return err
}

// runSendStatus shows a queued send's progress (send --status ID), or follows it (--wait).
func runSendStatus(ctx context.Context, a *app, o *sendOptions) error {
	for name := range o.list.given {
		switch name {
		case "status", "wait", "max-rejects", "max-unknown":
		default:
			return usagef("send", "--status ID takes no other send flag than --wait, --max-rejects and --max-unknown (--%s)", name)
		}
	}
	db, err := queueDB(ctx, a, "--status")
	if err != nil {
		return err
	}
	defer db.Close()
	if o.queue.wait {
		return followSend(ctx, a, o, db, o.queue.status)
	}
	st, err := sendqueue.ReadStatus(ctx, db, o.queue.status, sendqueue.Config{})
	if errors.Is(err, sendqueue.ErrNoSend) {
		return inputf("--status %s: no such send in %s", o.queue.status, envJournalURL)
	}
	if err != nil {
		return err
	}
	return writeStatus(a, st)
}

// statusPoll is how often --wait reads the status: often enough that the end of a send is
// seen within a quarter of a second, for a query of a few milliseconds.
const statusPoll = 250 * time.Millisecond

// nextPoll is the wait before --wait's next read, after one that took took: statusPoll, or
// ten times the read's time when that is longer, so that following a send of millions of
// rows (a read that scans them all) keeps the database's backend busy a tenth of the time
// at most, and the end is still seen within a few reads' time.
func nextPoll(took time.Duration) time.Duration { return max(statusPoll, 10*took) }

// followSend reads the send's status until every chunk is done, then reports it: the exit
// code is 1 for rows refused or rejected beyond --max-rejects, or unknown beyond
// --max-unknown, as send --recipients says.
func followSend(ctx context.Context, a *app, o *sendOptions, db *pgxpool.Pool, id string) error {
	budget, err := parseRejectBudget("send", o.list.maxRejects)
	if err != nil {
		return err
	}
	unknownBudget, err := parseUnknownBudget("send", o.list.maxUnknown)
	if err != nil {
		return err
	}
	wait := time.NewTimer(statusPoll)
	defer wait.Stop()
	var st *sendqueue.Status
	for {
		start := time.Now()
		st, err = sendqueue.ReadStatus(ctx, db, id, sendqueue.Config{})
		if errors.Is(err, sendqueue.ErrNoSend) {
			return inputf("--status %s: no such send in %s", id, envJournalURL)
		}
		if err != nil {
			return err
		}
		if st.Finished() {
			break
		}
		wait.Reset(nextPoll(time.Since(start)))
		select {
		case <-ctx.Done():
			_ = writeStatus(a, st)
			return ctx.Err()
		case <-wait.C:
		}
	}
	if err := writeStatus(a, st); err != nil {
		return err
	}
	if !a.json {
		listed, err := sendqueue.Rows(ctx, db, id, sendqueue.FateUnknown, sendqueue.FateRefused, sendqueue.FateRejected)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, r := range listed {
			fmt.Fprintf(&b, "line %d (%s): %s: %s\n", r.Line, r.Address, r.Fate, r.Reason)
		}
		if _, err := io.WriteString(a.stdout, b.String()); err != nil {
			return err
		}
	}
	// The library's verdict, rendered: the CLI judges no budget itself.
	verdict := st.Verdict(budget.limit, unknownBudget.limit)
	r := sendBudgetOutcome(budget, st.Fates[sendqueue.FateRefused]+st.Fates[sendqueue.FateRejected], st.Rows, verdict)
	u := sendBudgetOutcome(unknownBudget, st.Fates[sendqueue.FateUnknown], st.Rows, verdict)
	switch {
	case !r.Held:
		return fmt.Errorf("%s refused or rejected, beyond --max-rejects %s", plural(r.Rejects, "row"), r.Max)
	case !u.Held:
		return fmt.Errorf("%s of unknown outcome, beyond --max-unknown %s (listed; never sent again)", plural(u.Rejects, "row"), u.Max)
	case st.Fates[sendqueue.FateDeferred]+st.Fates[sendqueue.FateNotAttempted] > 0:
		return fmt.Errorf("rows deferred or not attempted: enqueue the send again to retry them")
	}
	return nil
}

// writeStatus prints a status: one object with --json.
func writeStatus(a *app, st *sendqueue.Status) error {
	if a.json {
		fates := orderedObject{}
		for _, f := range sendqueue.Fates() {
			fates = append(fates, member{f, st.Fates[f]})
		}
		return writeJSON(a.stdout, orderedObject{{"id", st.ID}, {"journal", st.Journal}, {"rows", st.Rows}, {"fates", fates},
			{"chunks", orderedObject{{"done", st.Chunks.Done}, {"in_flight", st.Chunks.InFlight}, {"left", st.Chunks.Left}}},
			{"workers", st.Workers}, {"rate", st.Rate}, {"finished", st.Finished()}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Send %s (journal %s): %s\n", st.ID, st.Journal, plural(st.Rows, "row"))
	var parts []string
	for _, f := range sendqueue.Fates() {
		parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(f, "_", " "), st.Fates[f]))
	}
	fmt.Fprintf(&b, "  %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(&b, "  chunks: %d done, %d in flight, %d left; %s\n", st.Chunks.Done, st.Chunks.InFlight, st.Chunks.Left, plural(st.Workers, "worker"))
	if st.Rate > 0 {
		fmt.Fprintf(&b, "  rate: %g messages a second for the whole send, shared by every worker through the database\n", st.Rate)
	}
	_, err := io.WriteString(a.stdout, b.String())
	return err
}

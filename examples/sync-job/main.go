// Command sync-job keeps a list in step with a JSON export of subscribers, as a nightly job
// would: it plans, refuses to unsubscribe more than 10 % of the list, and applies the plan;
// Ctrl-C stops it cleanly (run it again to finish). With SENDLOOP_API_KEY unset it syncs the
// demo list of an embedded sendlooptest fake (demo.go) with export.json; with it set (and
// SENDLOOP_BASE_URL), it syncs the list SENDLOOP_LIST_ID with the file given as argument.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, args []string) error {
	key, base, listID, data := os.Getenv(sendloop.EnvAPIKey), os.Getenv(sendloop.EnvBaseURL), 1, demoExport
	if key == "" {
		var stop func()
		key, base, stop = demo(ctx)
		defer stop()
	} else if len(args) != 1 { // never the demo's export on a real account
		return errors.New("usage: SENDLOOP_LIST_ID=ID sync-job EXPORT.json (the demo runs with SENDLOOP_API_KEY unset)")
	} else {
		listID, _ = strconv.Atoi(os.Getenv("SENDLOOP_LIST_ID"))
		var err error
		if data, err = os.ReadFile(args[0]); err != nil {
			return err
		}
	}
	c, err := sendloop.NewClient(key, sendloop.WithBaseURL(base))
	if err != nil {
		return err
	}
	var rows []listsync.Row // [{"email": "ann@example.com", "fields": {"Plan": "pro"}}, …]
	if err := json.Unmarshal(data, &rows); err != nil {
		return err
	}
	sj, err := listsync.New(ctx, c, listID, listsync.Rows(rows), listsync.Options{UnsubscribeMissing: true})
	if err != nil {
		return err
	}
	plan, err := sj.Plan(ctx)
	if err != nil {
		return err
	}
	defer plan.Close()
	fmt.Fprintf(w, "plan: %d to add, %d to update, %d to unsubscribe, %d unchanged\n", plan.Adds, plan.Updates, plan.Unsubscribes, plan.Unchanged)
	res, err := plan.Apply(ctx, listsync.ApplyOptions{MaxUnsubscribe: job.DefaultMaxUnsubscribe, Stop: job.Stop{Grace: 10 * time.Second},
		MaxRejects: job.Percent(1), // up to 1 % of the rows rejected (each is reported) still succeeds
		OnRow: func(r listsync.RowResult) {
			if r.Fate != job.Done {
				fmt.Fprintf(w, "%s row %d %q: %s\n", r.Fate, r.Line, r.Address, r.Reason)
			}
		}})
	if err != nil {
		return err
	}
	// Every row has a fate: done, skipped, suppressed, rejected, refused, unknown (the same
	// sync again settles it) or not attempted; an interruption may also leave
	// unsubscriptions, which have no row.
	fates := res.Rows
	fmt.Fprintf(w, "done: %d added, %d updated, %d unsubscribed; rows: %d done, %d rejected or refused, %d unknown, %d not attempted; changes not attempted: %d\n",
		res.Adds.Done, res.Updates.Done, res.Unsubscribes.Done, fates.Done, fates.Rejected+fates.Refused, fates.Unknown, fates.NotAttempted, res.ChangesNotAttempted())
	if fates.Unknown > 0 || res.ChangesNotAttempted() > 0 {
		fmt.Fprintln(w, "run the same sync again to settle the rest")
	}
	return nil
}

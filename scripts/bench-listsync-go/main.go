// Command bench-listsync-go syncs a list with a CSV file through listsync, as a Go CI job
// would, with the options `sendloop sync` uses by default (4 calls in flight, 1,000 rows
// per import, the 10 % guard, a 10 s grace). scripts/bench-listsync times it against the
// CLI; it reads SENDLOOP_API_KEY and SENDLOOP_BASE_URL.
//
// Usage: bench-listsync-go LIST-ID FILE [CONCURRENCY]
//
// Its last line says how long the sync took in the process, from New to the end of Apply,
// as scripts/bench-floor times its calls: scripts/bench-wan compares the two.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
)

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		log.Fatal("usage: bench-listsync-go LIST-ID FILE [CONCURRENCY]")
	}
	listID, err := strconv.Atoi(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	concurrency := 0 // listsync's default, the CLI's
	if len(os.Args) == 4 {
		if concurrency, err = strconv.Atoi(os.Args[3]); err != nil || concurrency <= 0 {
			log.Fatalf("concurrency %q: want a positive number", os.Args[3])
		}
	}
	if err := run(context.Background(), listID, os.Args[2], concurrency); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, listID int, path string, concurrency int) error {
	c, err := sendloop.NewClientFromEnv()
	if err != nil {
		return err
	}
	src, err := listsync.OpenCSV(path, listsync.CSVOptions{})
	if err != nil {
		return err
	}
	start := time.Now()
	sj, err := listsync.New(ctx, c, listID, src, listsync.Options{Concurrency: concurrency})
	if err != nil {
		return err
	}
	plan, err := sj.Plan(ctx)
	if err != nil {
		return err
	}
	defer plan.Close()
	res, err := plan.Apply(ctx, listsync.ApplyOptions{MaxUnsubscribe: job.DefaultMaxUnsubscribe, Stop: job.Stop{Grace: 10 * time.Second}})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	failed := res.Rows.Rejected + res.Rows.Refused + res.Rows.Unknown
	fmt.Printf("plan: %d to add, %d to update, %d unchanged, %d rejected; rows: %d done, %d failed, %d not attempted\n",
		plan.Adds, plan.Updates, plan.Unchanged, plan.Rejected, res.Rows.Done, failed, res.Rows.NotAttempted)
	if plan.Rejected > 0 || failed > 0 || res.Rows.NotAttempted > 0 {
		return fmt.Errorf("%d rows rejected, %d failed, %d not attempted", plan.Rejected, failed, res.Rows.NotAttempted)
	}
	fmt.Printf("synced in %.3f s\n", elapsed.Seconds())
	return nil
}

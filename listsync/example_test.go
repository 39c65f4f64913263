package listsync_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"log"
	"os"
	"path/filepath"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// demo starts a fake holding list 1 with the custom field Plan and two members.
func demo() (*sendlooptest.Server, *sendloop.Client) {
	srv := sendlooptest.NewServer(nil)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Customers", OptInMode: sendloop.OptInSingle})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: "Plan"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{
		{EmailAddress: "ann@example.com", Fields: sendloop.CustomFields{plan: "free"}},
		{EmailAddress: "bob@example.com", Fields: sendloop.CustomFields{plan: "free"}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	return srv, c
}

// Sync a list with rows from anywhere (a query, an export): here, rows in memory. The
// guard refuses to unsubscribe more than half of the list.
func Example() {
	srv, c := demo()
	defer srv.Close()
	ctx := context.Background()

	src := listsync.Rows([]listsync.Row{
		{Email: " Ann@Example.com ", Fields: map[string]string{"Plan": "pro"}},
		{Email: "cat@example.com", Fields: map[string]string{"Plan": "free"}},
		{Email: "not an address"},
	})
	sync, err := listsync.New(ctx, c, 1, src, listsync.Options{UnsubscribeMissing: true})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := sync.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close()
	fmt.Printf("plan: %d to add, %d to update, %d to unsubscribe, %d rejected\n",
		plan.Adds, plan.Updates, plan.Unsubscribes, plan.Rejected)

	res, err := plan.Apply(ctx, listsync.ApplyOptions{
		MaxUnsubscribe: job.Percent(50),
		MaxRejects:     job.Rows(1), // the bad address below; a second rejected row would fail the run
		OnRow: func(r listsync.RowResult) {
			if r.Fate != job.Done {
				fmt.Printf("row %d %q: %v, %s\n", r.Line, r.Address, r.Fate, r.Reason)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d, updated %d, unsubscribed %d; rows: %d done, %d rejected\n",
		res.Adds.Done, res.Updates.Done, res.Unsubscribes.Done, res.Rows.Done, res.Rows.Rejected)
	status, _ := srv.SubscriberStatus(1, "bob@example.com")
	fmt.Println("bob:", status)
	// Output:
	// plan: 1 to add, 1 to update, 1 to unsubscribe, 1 rejected
	// row 3 "not an address": rejected, invalid email address
	// added 1, updated 1, unsubscribed 1; rows: 2 done, 1 rejected
	// bob: Unsubscribed
}

// Sync a list with a CSV file, as `sendloop sync --csv` does: the dry run lists the changes.
func ExampleOpenCSV() {
	srv, c := demo()
	defer srv.Close()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "listsync-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "customers.csv")
	if err := os.WriteFile(path, []byte("E-mail;Plan\nann@example.com;free\nBOB@example.com;team\ndan@example.com;pro\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	src, err := listsync.OpenCSV(path, listsync.CSVOptions{})
	if err != nil {
		log.Fatal(err)
	}
	sync, err := listsync.New(ctx, c, 1, src, listsync.Options{})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := sync.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close()
	for ev, err := range plan.Events(ctx, listsync.EventAdd|listsync.EventUpdate|listsync.EventReject) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case listsync.EventAdd:
			fmt.Printf("line %d: add %s %q\n", ev.Row.Line, ev.Row.Email, ev.Row.Values)
		case listsync.EventUpdate:
			ch := ev.Update.Changes[0]
			fmt.Printf("line %d: update %s: %s %q → %q\n", ev.Row.Line, ev.Update.Email, ch.Header, ch.From, ch.To)
		}
	}
	fmt.Printf("%q-separated, %d unchanged\n", src.Comma, plan.Unchanged)
	// Output:
	// line 3: update bob@example.com: Plan "free" → "team"
	// line 4: add dan@example.com ["pro"]
	// ';'-separated, 1 unchanged
}

// Write the plan as `sendloop sync --dry-run --plan` does: every change and every rejected
// row, in the source's order, then the unsubscriptions.
func ExamplePlan_WriteCSV() {
	srv, c := demo()
	defer srv.Close()
	ctx := context.Background()
	src := listsync.Rows([]listsync.Row{
		{Email: "ann@example.com", Fields: map[string]string{"Plan": "pro"}},
		{Email: "not an address"},
		{Email: "cat@example.com", Fields: map[string]string{"Plan": "free"}},
	})
	sync, err := listsync.New(ctx, c, 1, src, listsync.Options{UnsubscribeMissing: true})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := sync.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close()
	if err := plan.WriteCSV(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// action,line,email,subscriber_id,field,field_id,from,to,reason
	// update,1,ann@example.com,1,Plan,1,free,pro,
	// reject,2,not an address,,,,,,invalid email address
	// add,3,cat@example.com,,Plan,1,,free,
	// unsubscribe,,bob@example.com,2,,,,,
}

// A plan beyond the guard is refused before any change.
func ExamplePlan_Check() {
	srv, c := demo()
	defer srv.Close()
	ctx := context.Background()
	sync, err := listsync.New(ctx, c, 1, listsync.Rows([]listsync.Row{{Email: "ann@example.com"}}), listsync.Options{UnsubscribeMissing: true})
	if err != nil {
		log.Fatal(err)
	}
	plan, err := sync.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer plan.Close()
	var guard *listsync.GuardError
	if err := plan.Check(job.Rows(0)); errors.As(err, &guard) {
		fmt.Printf("refused: %d of %d members, %s allows %d\n", guard.Unsubscribes, guard.Members, guard.Limit, guard.Allowed)
	}
	// Output:
	// refused: 1 of 2 members, 0 allows 0
}

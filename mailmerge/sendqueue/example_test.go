package sendqueue_test

import (
	"context"
	"log"
	"os"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
	"github.com/go-sendloop/sendloop/smtp"
)

// A program that already runs River adds the send workers to its own client, beside its
// own queues. (Compiled, not run: it needs a database and a relay.)
func ExampleAddWorker() {
	ctx := context.Background()
	db, err := sendqueue.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	relay, err := smtp.NewRelayFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()
	if err := sendqueue.Migrate(ctx, db, sendqueue.Config{}); err != nil {
		log.Fatal(err)
	}
	workers := river.NewWorkers()
	api, err := sendloop.NewClientFromEnv() // each chunk reads the suppression list through it
	if err != nil {
		log.Fatal(err)
	}
	w := sendqueue.NewWorker(db, relay, sendqueue.WorkerOptions{API: api})
	defer w.Close()
	if err := sendqueue.AddWorker(workers, w); err != nil {
		log.Fatal(err)
	}
	cfg := &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}}}
	sendqueue.ConfigureClient(cfg, 1)
	client, err := river.NewClient(riverpgxv5.New(db), cfg)
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = client.Stop(context.Background()) }()
}

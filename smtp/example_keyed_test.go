package smtp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// A newsletter to a list, with a journal: the second run, as after a crash,
// sends only the row added since and skips the rest.
func ExampleRelay_SendKeyed() {
	fake, err := sendlooptest.StartRelay(nil, "sender-1", "password-1")
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender-1", Password: "password-1"},
		smtp.WithTLSConfig(fake.ClientTLSConfig()), smtp.WithRate(50, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tmpl := smtp.Message{From: "news@example.com", Subject: "News for {{NAME}}", Text: "Hi {{NAME}}!"}
	rows := func(names ...string) func(yield func(string, *smtp.Message) bool) {
		return func(yield func(string, *smtp.Message) bool) {
			for _, name := range names {
				m := tmpl
				m.To = []string{name + "@example.net"}
				m.Headers.MergeVars = map[string]any{"NAME": name}
				if !yield(m.To[0], &m) {
					return
				}
			}
		}
	}
	dir, err := os.MkdirTemp("", "journal")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	binding := smtp.JournalBinding{Fingerprint: smtp.TemplateFingerprint(&tmpl)}

	for run, names := range [][]string{{"ann", "bob"}, {"ann", "bob", "cat"}} {
		journal, err := smtp.OpenJournal(filepath.Join(dir, "news.journal"), binding)
		if err != nil {
			log.Fatal(err)
		}
		results, err := relay.SendKeyed(ctx, rows(names...), smtp.SendKeyedOptions{Journal: journal})
		if err != nil {
			log.Fatal(err)
		}
		for res := range results {
			if res.State == smtp.KeySkipped {
				fmt.Println(run+1, res.Key, "skipped:", res.Skip)
				continue
			}
			fmt.Println(run+1, res.Key, res.State)
		}
		journal.Close()
	}
	fmt.Println(len(fake.Messages()), "messages")
	// Output:
	// 1 ann@example.net sent
	// 1 bob@example.net sent
	// 2 ann@example.net skipped: already_sent
	// 2 bob@example.net skipped: already_sent
	// 2 cat@example.net sent
	// 3 messages
}

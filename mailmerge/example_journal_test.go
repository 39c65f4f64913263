package mailmerge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// A newsletter to a list, with a journal: the second run, as after a crash, sends only the
// row added since and skips the rest.
func ExampleJob_Send_journal() {
	srv, err := sendlooptest.Start() // the service's API, which the suppression list is read from
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	api, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	fake, err := srv.StartRelay(nil) // and its relay
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()
	user, password := srv.RelayCredentials()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password},
		smtp.WithTLSConfig(fake.ClientTLSConfig()), smtp.WithRate(50, 10))
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "journal")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	tmpl := &smtp.Message{From: "news@example.com", Subject: "News for {{{NAME}}}", Text: "Hi {{{NAME}}}!",
		ListUnsubscribe: []string{"https://example.com/u/{{{NAME}}}"}, ListUnsubscribeOneClick: true}
	for run, names := range [][]string{{"ann", "bob"}, {"ann", "bob", "cat"}} {
		var rows []mailmerge.Row
		for _, name := range names {
			rows = append(rows, mailmerge.Row{Address: name + "@example.net", Values: map[string]string{"NAME": name}})
		}
		news, err := mailmerge.New(mailmerge.Rows([]string{"NAME"}, rows), tmpl, mailmerge.Options{API: api})
		if err != nil {
			log.Fatal(err)
		}
		res, err := news.Send(ctx, relay, mailmerge.SendOptions{Journal: filepath.Join(dir, "news.journal"),
			OnRow: func(r mailmerge.RowResult) {
				if r.Fate == job.Skipped {
					fmt.Println(run+1, r.Address, "skipped:", r.Skip)
					return
				}
				fmt.Println(run+1, r.Address, r.Fate)
			}})
		if err != nil {
			log.Fatal(err)
		}
		res.Close()
	}
	fmt.Println(len(fake.Messages()), "messages")
	// Output:
	// 1 ann@example.net done
	// 1 bob@example.net done
	// 2 ann@example.net skipped: already_sent
	// 2 bob@example.net skipped: already_sent
	// 2 cat@example.net done
	// 3 messages
}

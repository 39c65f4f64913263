// Command bulk-send sends one message per row of a CSV file through the Sendloop relay, with
// a journal, as `sendloop send --recipients` does: every tag is checked before the first
// message, an address on the account's suppression list is never sent, a row with an empty
// FIRST is rejected, a rerun sends no row twice, and Ctrl-C stops it cleanly (run it again
// to finish). With SENDLOOP_SMTP_HOST unset it sends list.csv through an embedded fake of
// the service (its API and its relay, where erin@example.com is suppressed) and prints what
// the relay received; with it set (and SENDLOOP_SMTP_PORT, _USER, _PASSWORD, and the API's
// SENDLOOP_API_KEY and SENDLOOP_BASE_URL), it sends the file given as argument.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

//go:embed list.csv
var demoList []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, args []string) error {
	var relay *smtp.Relay
	var api *sendloop.Client
	var fake *sendlooptest.Relay
	file, journal := "", "bulk-send.journal"
	if os.Getenv(smtp.EnvHost) == "" {
		srv, err := sendlooptest.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		// The service's own suppression (a complaint), which the send must honour.
		if _, err := srv.Suppress(sendloop.GlobalSuppression, "erin@example.com", "FBL Report"); err != nil {
			return err
		}
		if api, err = sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL)); err != nil {
			return err
		}
		if fake, err = srv.StartRelay(nil); err != nil {
			return err
		}
		defer fake.Close()
		user, password := srv.RelayCredentials()
		if relay, err = smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password},
			smtp.WithTLSConfig(fake.ClientTLSConfig())); err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "bulk-send")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		file, journal = filepath.Join(dir, "list.csv"), filepath.Join(dir, "journal")
		if err := os.WriteFile(file, demoList, 0o600); err != nil {
			return err
		}
	} else if len(args) != 1 { // never the demo's list through a real relay
		return errors.New("usage: bulk-send LIST.csv (the demo runs with SENDLOOP_SMTP_HOST unset)")
	} else {
		var err error
		if relay, err = smtp.NewRelayFromEnv(smtp.WithRate(20, 5)); err != nil {
			return err
		}
		if api, err = sendloop.NewClientFromEnv(); err != nil {
			return err // a bulk send reads the suppression list through the API
		}
		file = args[0]
	}
	defer relay.Close()

	src, err := mailmerge.File(file, mailmerge.FileOptions{})
	if err != nil {
		return err
	}
	merge, err := mailmerge.New(src, &smtp.Message{From: "News <news@example.com>", Subject: "Hello {{{FIRST}}}",
		Text: "Hi %FIRST%,{{#City}} greetings to {{{City}}}!{{/City}}\nSpring sale: 50% off.",
		// A bulk send needs a one-click unsubscription naming its recipient.
		ListUnsubscribe: []string{"https://example.com/unsubscribe?e={{email}}"}, ListUnsubscribeOneClick: true},
		mailmerge.Options{API: api})
	if err != nil {
		return err // a tag naming nothing: nothing was sent
	}
	// The zero budgets allow no rejected row and no row of unknown outcome, as the CLI's
	// --max-rejects 0 and --max-unknown 0: this run lists every such row and lets a third of
	// the rows be rejected before it fails.
	res, err := merge.Send(ctx, relay, mailmerge.SendOptions{Journal: journal, MaxRejects: job.Percent(34), OnRow: func(r mailmerge.RowResult) {
		if r.Fate != job.Done {
			fmt.Fprintf(w, "line %d %s: %s %s\n", r.Line, r.Address, r.Fate, r.Reason)
		}
	}})
	if err != nil && res == nil {
		return err
	}
	defer res.Close()
	fmt.Fprintf(w, "%d rows: %d sent, %d suppressed, %d skipped, %d refused, %d unknown, %d deferred, %d rejected, %d not attempted\n",
		res.Rows, res.Tally.Done, res.Tally.Suppressed, res.Skipped(), res.Tally.Refused, res.Tally.Unknown, res.Tally.Deferred, res.Tally.Rejected, res.Tally.NotAttempted)
	if fake != nil {
		fmt.Fprintf(w, "the fake relay received %d messages\n", len(fake.Messages()))
	}
	return err
}

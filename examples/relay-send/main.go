// Command relay-send sends a personalized message through the Sendloop SMTP
// relay and, when it runs against the built-in fake relay, prints what the
// relay received.
//
// Without SENDLOOP_SMTP_HOST it starts a fake relay on 127.0.0.1
// (sendlooptest.StartRelay) and needs nothing else:
//
//	go run ./examples/relay-send
//
// With SENDLOOP_SMTP_HOST, SENDLOOP_SMTP_PORT (587 by default),
// SENDLOOP_SMTP_USER and SENDLOOP_SMTP_PASSWORD set (the delivery settings of
// a sender address), it sends through that relay (smtp.NewRelayFromEnv, which
// also trusts SENDLOOP_SMTP_CA_FILE); -from and -to are then required:
//
//	go run ./examples/relay-send -from you@yourdomain.com -to friend@example.net
//
// The same against `sendloop fake` in another process:
//
//	sendloop fake > fake.env &   # serves until stopped
//	sleep 1; . ./fake.env
//	go run ./examples/relay-send -from shop@example.com -to ann@example.net
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "relay-send:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("relay-send", flag.ContinueOnError)
	flags.SetOutput(stderr)
	from := flags.String("from", "", "sender address (default shop@example.com with the fake relay)")
	to := flags.String("to", "", "comma-separated recipients (default ann@example.net with the fake relay)")
	verbose := flags.Bool("v", false, "log each SMTP step to stderr")
	timeout := flags.Duration("timeout", 30*time.Second, "time allowed for the whole send")
	if err := flags.Parse(args); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var opts []smtp.Option
	if *verbose {
		opts = append(opts, smtp.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}

	var fake *sendlooptest.Relay
	var relay *smtp.Relay
	if os.Getenv(smtp.EnvHost) != "" {
		if *from == "" || *to == "" {
			return errors.New("-from and -to are required with " + smtp.EnvHost)
		}
		var err error
		if relay, err = smtp.NewRelayFromEnv(opts...); err != nil {
			return err
		}
	} else {
		const user, password = "demo-user", "demo-password"
		var err error
		if fake, err = sendlooptest.StartRelay(nil, user, password); err != nil {
			return err
		}
		defer fake.Close()
		opts = append(opts, smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}))
		if relay, err = smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password}, opts...); err != nil {
			return err
		}
		if *from == "" {
			*from = "Sendloop Shop <shop@example.com>"
		}
		if *to == "" {
			*to = "Zoë Martin <zoe@example.net>"
		}
	}

	// One value per name fills both tag styles, %FIRSTNAME% and {{FIRSTNAME}}; a {{#GIFT}}
	// section takes a boolean, added as one key.
	mergeVars := smtp.MergeVars(map[string]string{"FIRSTNAME": "Zoë", "ORDER": "A-1017"})
	mergeVars["GIFT"] = true
	msg := &smtp.Message{
		From:    *from,
		To:      strings.Split(*to, ","),
		Subject: "Your order has shipped, %FIRSTNAME%",
		Text:    "Hi {{FIRSTNAME}},\n\nOrder {{ORDER}} is on its way.{{#GIFT}} It is wrapped as a gift.{{/GIFT}}\n",
		HTML:    "<p>Hi {{FIRSTNAME}},</p><p>Order <b>{{ORDER}}</b> is on its way.{{#GIFT}} It is wrapped as a gift.{{/GIFT}}</p>",
		Headers: smtp.Headers{
			MergeVars:   mergeVars,
			CustomArgs:  map[string]any{"order_id": "1017", "source": "relay-send"},
			Tags:        []string{"transactional", "shipping"},
			TrackOpens:  true,
			TrackClicks: true,
		},
		// Bulk senders must offer a one-click unsubscription (RFC 8058).
		ListUnsubscribe:         []string{"https://example.com/unsubscribe?order=1017", "mailto:unsubscribe@example.com"},
		ListUnsubscribeOneClick: true,
	}
	defer relay.Close()
	fmt.Fprintf(stdout, "sending through %s\n", relay)
	res, err := relay.Send(ctx, msg)
	if err != nil && !res.Delivered() {
		if errors.Is(err, smtp.ErrTemporary) {
			return fmt.Errorf("temporary failure, try again later: %w", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "sent: Message-ID %s, reply %q\n", res.MessageID, res.Reply)
	if err != nil {
		fmt.Fprintln(stdout, "but:", err) // some recipients were refused
	}
	if fake != nil {
		for _, m := range fake.Messages() {
			printCaptured(stdout, m)
		}
	}
	return nil
}

func printCaptured(w io.Writer, m sendlooptest.RelayMessage) {
	fmt.Fprintln(w, "\n--- the fake relay received ---")
	fmt.Fprintf(w, "envelope:  %s -> %s (user %s, %s, TLS %v)\n", m.EnvelopeFrom, strings.Join(m.EnvelopeTo, ", "), m.Username, m.AuthMechanism, m.TLS)
	fmt.Fprintf(w, "structure: %s\n", m.Structure)
	for _, name := range []string{
		smtp.HeaderCustomArgs, smtp.HeaderMergeVars, smtp.HeaderTags,
		smtp.HeaderTrackOpens, smtp.HeaderTrackClicks, smtp.HeaderTrackGA,
		"List-Unsubscribe", "List-Unsubscribe-Post",
	} {
		if value := m.Header.Get(name); value != "" {
			fmt.Fprintf(w, "header:    %s: %s\n", name, value)
		}
	}
	h := m.SLHeaders
	fmt.Fprintf(w, "tags:      %v\n", h.Tags)
	fmt.Fprintf(w, "custom:    %v\n", h.CustomArgs)
	fmt.Fprintf(w, "tracking:  opens=%v clicks=%v analytics=%v\n", h.TrackOpens, h.TrackClicks, h.TrackGA)
	fmt.Fprintf(w, "subject:   %s\n", m.RenderedSubject)
	fmt.Fprintf(w, "text:\n%s\n", indent(m.RenderedText))
	fmt.Fprintf(w, "html:\n%s\n", indent(m.RenderedHTML))
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ")
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// watchInterval is how often the fake command looks for new requests and messages to log.
const watchInterval = 250 * time.Millisecond

func fakeCommand() *command {
	return &command{
		name:    "fake",
		args:    "[--addr 127.0.0.1:8080] [--smtp-addr 127.0.0.1:2525] [--empty] [--ca-file FILE]",
		summary: "serve a fake of the service (API and relay) for local development",
		help: `
Serves sendlooptest, the SDK's in-memory fake of the service, until interrupted (SIGINT or
SIGTERM): the v3 and legacy APIs over HTTP on --addr, and the SMTP relay (STARTTLS with a
certificate made at start, AUTH PLAIN or LOGIN) on --smtp-addr. It holds the same demo data
as --fake (list 1 "Demo", see 'sendloop help'), unless --empty. Its state lives in memory
and is lost when it stops.

On stdout it prints the settings to reach it as shell export lines (a JSON object with
--json): SENDLOOP_BASE_URL, SENDLOOP_API_KEY (the fake's own random key), and the relay's
SENDLOOP_SMTP_HOST, _PORT, _USER, _PASSWORD and _CA_FILE, a PEM file of the certificate
authority of the relay (removed when the fake stops unless --ca-file names it). Then it
logs the API commands it receives and the messages the relay accepts on stderr.

Only loopback addresses are accepted: the fake is not a server to expose. Port 0 picks a
free port, shown in the printed settings.`,
		examples: `sendloop fake > fake.env &    # then: . ./fake.env && sendloop lists
sendloop fake --addr 127.0.0.1:0 --smtp-addr 127.0.0.1:0 --empty`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			addr := fs.String("addr", "127.0.0.1:8080", "serve the HTTP API on `HOST:PORT` (loopback only)")
			smtpAddr := fs.String("smtp-addr", "127.0.0.1:2525", "serve the SMTP relay on `HOST:PORT` (loopback only)")
			empty := fs.Bool("empty", false, "start without the demo data")
			caFile := fs.String("ca-file", "", "write the relay's CA certificate to `FILE` and keep it (default: a temporary file)")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("fake", "unexpected argument %q", args[0])
				}
				if a.fake {
					return usagef("fake", "--fake has no meaning with the fake command")
				}
				for _, f := range []struct{ name, addr string }{{"--addr", *addr}, {"--smtp-addr", *smtpAddr}} {
					if err := checkLoopback(f.addr); err != nil {
						return usagef("fake", "%s: %v", f.name, err)
					}
				}
				return runFake(ctx, a, *addr, *smtpAddr, *empty, *caFile)
			}
		},
	}
}

// checkLoopback accepts a HOST:PORT whose host is a loopback IP address or "localhost".
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q is not a port", port)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing %q: the fake serves loopback addresses only (127.0.0.1, ::1, localhost)", addr)
}

func runFake(ctx context.Context, a *app, addr, smtpAddr string, empty bool, caFile string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := sendlooptest.NewServer(nil, sendlooptest.WithListener(ln))
	defer srv.Close()
	if !empty {
		if err := seedDemo(ctx, srv); err != nil {
			return err
		}
	}
	relay, err := srv.StartRelay(nil, sendlooptest.RelayAddr(smtpAddr))
	if err != nil {
		return err
	}
	defer relay.Close()
	ca, err := relayCA(relay)
	if err != nil {
		return fmt.Errorf("reading the relay's certificate: %w", err)
	}
	if caFile == "" {
		f, err := os.CreateTemp("", "sendloop-fake-ca-*.pem")
		if err != nil {
			return err
		}
		caFile = f.Name()
		f.Close()
		defer os.Remove(caFile)
	}
	if err := os.WriteFile(caFile, ca, 0o644); err != nil {
		return err
	}
	user, password := srv.RelayCredentials()
	settings := orderedObject{
		{envBaseURL, srv.URL}, {envAPIKey, srv.APIKey},
		{envSMTPHost, relay.Host()}, {envSMTPPort, strconv.Itoa(relay.Port())},
		{envSMTPUser, user}, {envSMTPPassword, password}, {envSMTPCAFile, caFile},
	}
	if a.json {
		b, err := settings.MarshalJSON()
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(a.stdout, "%s\n", b); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for _, s := range settings {
			fmt.Fprintf(&b, "export %s=%s\n", s.key, shellQuote(s.value.(string)))
		}
		if _, err := fmt.Fprint(a.stdout, b.String()); err != nil {
			return err
		}
	}
	a.note("fake serving the API at %s and the relay at %s; stop it with Ctrl-C", srv.URL, relay.Addr())
	watchFake(ctx, a, srv, relay)
	a.note("fake stopped")
	return nil
}

// relayCA returns the PEM of the certificate authority of the relay, for clients in other
// processes.
func relayCA(relay *sendlooptest.Relay) ([]byte, error) {
	ca := relay.CACertificatePEM()
	if len(ca) == 0 {
		return nil, errors.New("the relay has no certificate")
	}
	return ca, nil
}

// watchFake logs the commands the fake executes and the messages its relay accepts, until
// ctx ends.
func watchFake(ctx context.Context, a *app, srv *sendlooptest.Server, relay *sendlooptest.Relay) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	seenRequests, seenMessages := len(srv.Requests()), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if a.quiet {
			continue
		}
		reqs := srv.Requests()
		for _, r := range reqs[seenRequests:] {
			a.note("api: %s %s", r.Method, r.Command)
		}
		seenRequests = len(reqs)
		msgs := relay.Messages()
		for _, m := range msgs[seenMessages:] {
			a.note("relay: message from %s to %s: %q", m.EnvelopeFrom, strings.Join(m.EnvelopeTo, ", "), m.Subject)
		}
		seenMessages = len(msgs)
	}
}

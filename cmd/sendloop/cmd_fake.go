package main

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	netsmtp "net/smtp"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// watchInterval is how often the fake command looks for new relay messages to log.
const watchInterval = 250 * time.Millisecond

// defaultFakeLogSize is how many requests the fake command keeps in its request log: the
// log serves nothing but debugging, and a request's body can be a large import.
const defaultFakeLogSize = 1000

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
			logSize := fs.Int("log-size", defaultFakeLogSize, "keep the newest `N` requests in the fake's request log (0: none)")
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
				if *logSize < 0 {
					return usagef("fake", "--log-size cannot be negative")
				}
				return runFake(ctx, a, *addr, *smtpAddr, *empty, *caFile, *logSize)
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

func runFake(ctx context.Context, a *app, addr, smtpAddr string, empty bool, caFile string, logSize int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	requests := &requestLogger{a: a}
	srv := sendlooptest.NewServer(nil, sendlooptest.WithListener(ln), sendlooptest.WithRequestLog(logSize),
		sendlooptest.WithRequestHook(requests.log))
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
	watchFake(ctx, a, relay, requests)
	a.note("fake stopped")
	return nil
}

// relayCA connects to the relay, trusting it through its own pool, and returns the PEM of
// the certificate authority that signed its certificate.
func relayCA(relay *sendlooptest.Relay) ([]byte, error) {
	conn, err := net.DialTimeout("tcp", relay.Addr(), 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	c, err := netsmtp.NewClient(conn, relay.Host())
	if err != nil {
		conn.Close()
		return nil, err
	}
	defer c.Close()
	if err := c.StartTLS(relay.ClientTLSConfig()); err != nil {
		return nil, err
	}
	state, ok := c.TLSConnectionState()
	if !ok || len(state.VerifiedChains) == 0 {
		return nil, errors.New("no verified certificate chain")
	}
	chain := state.VerifiedChains[0]
	_ = c.Quit()
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[len(chain)-1].Raw}), nil
}

// requestLogger logs each API command the fake receives, once, as it arrives: the
// server's request hook. It stays silent until on is set (not for the demo data's
// requests), and with --quiet.
type requestLogger struct {
	a  *app
	on atomic.Bool
	mu sync.Mutex
}

func (l *requestLogger) log(r sendlooptest.Request) {
	if !l.on.Load() || l.a.quiet {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.a.note("api: %s %s", r.Method, r.Command)
}

// watchFake starts the requests' log and logs the messages the fake's relay accepts, until
// ctx ends.
func watchFake(ctx context.Context, a *app, relay *sendlooptest.Relay, requests *requestLogger) {
	requests.on.Store(true)
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	seenMessages := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if a.quiet {
			continue
		}
		msgs := relay.Messages()
		for _, m := range msgs[seenMessages:] {
			a.note("relay: message from %s to %s: %q", m.EnvelopeFrom, strings.Join(m.EnvelopeTo, ", "), m.Subject)
		}
		seenMessages = len(msgs)
	}
}

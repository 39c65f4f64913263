package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// watchInterval is how often the fake command looks for new relay messages to log.
const watchInterval = 250 * time.Millisecond

// defaultFakeLogSize is how many requests the fake command keeps in its request log: the
// log serves nothing but debugging, and a request's body can be a large import (about
// 150 KB for 1,000 rows), so a thousand of them would outweigh a million members.
const defaultFakeLogSize = 100

func fakeCommand() *command {
	return &command{
		name:    "fake",
		args:    "[--addr 127.0.0.1:8080] [--smtp-addr 127.0.0.1:2525] [--empty | --seed FILE] [--ca-file FILE] [--listen-any [--tls-name NAME]] [--latency D[,JITTER]] [--keep-messages N] | messages [--to ADDR] | message ID [--raw] | confirm EMAIL --list ID | delete EMAIL --list ID | event KIND EMAIL [--list ID] [--campaign ID] | reset | inbox",
		summary: "serve a fake of the service (API, relay, inbox) and call it from shells",
		help: `
Serves sendlooptest, the SDK's in-memory fake of the service, until interrupted (SIGINT or
SIGTERM): the v3 and legacy APIs over HTTP on --addr, and the SMTP relay (STARTTLS with a
certificate made at start, AUTH PLAIN or LOGIN) on --smtp-addr. It holds the same demo data
as --fake (list 1 "Demo", see 'sendloop help'), unless --empty or --seed. Its state lives
in memory and is lost when it stops.

--seed FILE starts it with the data of FILE instead (it implies --empty): lists with their
custom fields (IDs may be given, so that a program knows its CustomField<id>), segments,
subscribers in any state the service reports, and suppressions, global or of a list. The
format is the fake's own JSON, not the service's; the sendlooptest package documents it
(Seed), and its file testdata/seed-example.json is an example:

  {"lists": [{"id": 7, "name": "Customers", "opt_in_mode": "Single",
              "custom_fields": [{"id": 3, "name": "Company"}],
              "segments": [{"name": "Acme", "field": "Company", "value": "Acme"}],
              "subscribers": [{"email": "ann@example.com", "fields": {"Company": "Acme"}},
                              {"email": "bob@example.com", "status": "Unsubscribed",
                               "bounce_type": "Hard"}],
              "suppressions": [{"email": "no@example.com"}]}],
   "suppressions": [{"email": "complained@example.com", "type": "FBL Report"}]}

A seed with a fault is refused before the fake prints its settings (exit code 2), every
fault named by its JSON path, e.g. lists[0].subscribers[1].status; unknown members are
faults.

On stdout it prints the settings to reach it as shell export lines (a JSON object with
--json): SENDLOOP_BASE_URL, SENDLOOP_API_KEY (the fake's own random key), the relay's
SENDLOOP_SMTP_HOST, _PORT, _USER, _PASSWORD and _CA_FILE, a PEM file of the certificate
authority of the relay (removed when the fake stops unless --ca-file names it), and the
control API's SENDLOOP_FAKE_URL, SENDLOOP_FAKE_KEY and SENDLOOP_FAKE_INBOX (below). Then
it logs the API commands it receives and the messages the relay accepts on stderr.

The control API lets programs in any language, and shells, see into the fake. It lives
under SENDLOOP_FAKE_URL (the API's address + /_fake, a path the service never uses) and
wants "Authorization: Bearer $SENDLOOP_FAKE_KEY", a key of its own: a program under test
holding SENDLOOP_API_KEY cannot reset the fake. Anything else is answered 401, and a Host
header other than the printed host, localhost, 127.0.0.1, [::1] or a --tls-name is refused
(403), against DNS rebinding. Its messages API has the shape of Mailpit's, so that Mailpit
client code works:

  GET    $SENDLOOP_FAKE_URL/api/v1/messages    newest first; ?start=0&limit=50 (0: all),
         ?to=ADDR, ?subject=TEXT (parts of them), ?since=2026-01-02T15:04:05Z; answers total,
         messages_count, start, tags, dropped and messages (ID, MessageID, From, To, Cc,
         Bcc, ReplyTo, Subject rendered, Created, Tags, Size, Attachments, Snippet)
  GET    …/api/v1/message/ID                  one message: also Text and HTML rendered as
         the service renders them, Envelope, Headers, Sendloop (the X-SL-* options and
         MergeVars) and Template (subject and bodies as sent)
  GET    …/api/v1/message/ID/raw              the .eml as received
  DELETE …/api/v1/messages                    forgets them
  GET    …/webhooks                           deliveries: url, action, body, attempts,
         status_code, error, delivered
  GET    …/lists                              lists, with their custom fields
  GET    …/lists/ID/members                   members as subscriber.browse has them, 100 at
         a time: ?start=0&limit=100 (the default; limit=0: all); answers list_id, total
         (the list's records), count (this page's), start and members
  POST   …/lists/ID/confirm  email=ADDR       confirms a pending double opt-in: the
         Subscription webhook is posted
  DELETE …/lists/ID/members/EMAIL             deletes the member, as the legacy
         Subscriber.Delete does (the record is gone; no webhook)
  POST   …/campaigns/ID/send                  delivers a Draft campaign now
  POST   …/events  kind=K email=ADDR [list=ID] [campaign=ID]
         open, click, forward, browser-view, unsubscribe, bounce, soft-bounce, complaint: on
         the newest delivered campaign that reached the address; without one, unsubscribe,
         bounce and complaint apply to the member of the list
  POST   …/reset                              back to the seed: data, messages, webhooks
  POST   …/inbox/token                        a new one-time inbox URL

Actions answer a JSON object with the webhooks they posted (each URL whole, its query
included); failures {"error": "…"}: 404 for a list, campaign or member that does not
exist, 409 for one whose state does not allow the action. The fake keeps the newest
--keep-messages messages and counts the others as dropped.

SENDLOOP_FAKE_INBOX opens the same in a browser: a one-time URL that sets a session cookie
and shows the messages (a message's HTML only in a sandboxed frame that runs no script
and loads nothing, its resource hints, preloads and frames removed), the lists and the
webhook deliveries. Add next=PATH to the URL to land on another page of the inbox (a local
path under /_fake/inbox/, e.g. next=/_fake/inbox/lists; anything else opens the messages).

The subcommands are clients of a running fake, for shells and Makefiles: they read
SENDLOOP_FAKE_URL and SENDLOOP_FAKE_KEY from the environment it printed. 'fake messages'
lists the messages (--json: the API's answer), 'fake message ID' shows one (--raw: the
.eml), 'fake confirm EMAIL --list ID' confirms a pending subscriber, 'fake delete EMAIL
--list ID' deletes a member, 'fake event KIND EMAIL' records an event, 'fake reset' goes
back to the seed and 'fake inbox' prints a new inbox URL. Confirm, delete and event exit
with 1 when a webhook the action posted was not delivered (the action was done), and
with 1 or 2 as any command when the action failed. Their text output shows a webhook's
URL with the values of its query REDACTED (?token=REDACTED), so that a receiver's token
stays out of CI logs; --json prints the API's answer, URLs whole.

The log on stderr and the subcommands' text output write every value that came from the
network (a request's command, an envelope, a message's subject, headers and text) with
its control characters escaped (\x1b, \n): a request or a message cannot move the
cursor, retitle the terminal or forge a line. The relay refuses control characters in
MAIL FROM and RCPT TO (501), as RFC 5321 does.

Port 0 picks a free port, shown in the printed settings. Only loopback addresses are
accepted unless --listen-any: the fake is not a server to expose. --listen-any lets it
listen on any address (0.0.0.0:8080, for services of a CI job that reach it by a host
name) with a warning: its API key and relay password are printed, and the API is plain
http. --tls-name adds host names to the relay's certificate (the first one is also the
host in the printed settings). Clients on another host need SENDLOOP_INSECURE_HTTP=1 for
the plain http API (printed with the settings), or WithInsecureHTTP in the Go SDK.

--latency D[,JITTER] holds every API answer back by D, plus a random jitter of up to JITTER
(from a fixed seed), and every reply of the relay likewise: the way to see how a job
behaves over a real link, where the service is 20 to 150 ms away and the number of calls
in flight decides the wall time. Requests wait side by side, as over a real link.`,
		examples: `sendloop fake > fake.env &    # then: . ./fake.env && sendloop lists
sendloop fake --addr 127.0.0.1:0 --smtp-addr 127.0.0.1:0 --empty
sendloop fake --seed testdata/seed.json > fake.env &
sendloop fake --latency 50ms,10ms > fake.env &    # a service 50-60 ms away
sendloop fake --listen-any --addr 0.0.0.0:8080 --smtp-addr 0.0.0.0:2525 --tls-name sendloop-fake
sendloop fake messages --to ann@example.com    # in the environment the fake printed
sendloop fake message 3 --raw > message.eml
sendloop fake confirm ann@example.com --list 1
sendloop fake delete bob@example.com --list 1
sendloop fake event unsubscribe ann@example.com --list 1`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			addr := fs.String("addr", "127.0.0.1:8080", "serve the HTTP API on `HOST:PORT` (loopback unless --listen-any)")
			smtpAddr := fs.String("smtp-addr", "127.0.0.1:2525", "serve the SMTP relay on `HOST:PORT` (loopback unless --listen-any)")
			empty := fs.Bool("empty", false, "start without the demo data")
			seedFile := fs.String("seed", "", "start with the data of the JSON seed `FILE` instead of the demo data (implies --empty)")
			caFile := fs.String("ca-file", "", "write the relay's CA certificate to `FILE` and keep it (default: a temporary file)")
			listenAny := fs.Bool("listen-any", false, "allow addresses other than loopback, such as 0.0.0.0:8080 (prints a warning)")
			var tlsNames repeatedFlag
			fs.Var(&tlsNames, "tls-name", "add the host `NAME` to the relay's certificate; the first is the printed host (repeatable)")
			logSize := fs.Int("log-size", defaultFakeLogSize, "keep the newest `N` requests in the fake's request log (0: none)")
			latency := fs.String("latency", "", "answer every request and relay reply after `D[,JITTER]`, e.g. 50ms or 50ms,10ms")
			keep := fs.Int("keep-messages", sendlooptest.DefaultKeepMessages, "keep the newest `N` messages of the relay (0: all)")
			var client fakeClientOptions
			fs.StringVar(&client.to, "to", "", "fake messages: those to `ADDR` (part of a recipient)")
			fs.BoolVar(&client.raw, "raw", false, "fake message: print the message as received (.eml)")
			fs.IntVar(&client.listID, "list", 0, "fake confirm, fake delete, fake event: the list's `ID`")
			fs.IntVar(&client.campaignID, "campaign", 0, "fake event: the delivered campaign's `ID` (default: the newest that reached EMAIL)")
			return func(ctx context.Context, a *app, args []string) error {
				if a.fake {
					return usagef("fake", "--fake has no meaning with the fake command")
				}
				given := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
				if len(args) > 0 {
					takes, ok := fakeSubcommands[args[0]]
					if !ok {
						return usagef("fake", "unknown subcommand %q: messages, message, confirm, delete, event, reset or inbox", args[0])
					}
					for name := range given {
						if !slices.Contains(takes, name) {
							return usagef("fake", "--%s has no meaning with fake %s", name, args[0])
						}
					}
					return runFakeClient(ctx, a, args, client)
				}
				for _, name := range []string{"to", "raw", "list", "campaign"} {
					if given[name] {
						return usagef("fake", "--%s goes with a subcommand of fake (see 'sendloop help fake')", name)
					}
				}
				if *keep < 0 {
					return usagef("fake", "--keep-messages cannot be negative")
				}
				exposed := false
				for _, f := range []struct{ name, addr string }{{"--addr", *addr}, {"--smtp-addr", *smtpAddr}} {
					err := checkLoopback(f.addr)
					var nl *notLoopbackError
					switch {
					case errors.As(err, &nl) && *listenAny:
						exposed = true
					case err != nil:
						return usagef("fake", "%s: %v", f.name, err)
					}
				}
				if *logSize < 0 {
					return usagef("fake", "--log-size cannot be negative")
				}
				for _, n := range tlsNames {
					if strings.TrimSpace(n) == "" || strings.ContainsAny(n, " /:,") && net.ParseIP(n) == nil {
						return usagef("fake", "--tls-name %q is not a host name or an IP address", n)
					}
				}
				if len(tlsNames) > 0 && !*listenAny {
					return usagef("fake", "--tls-name goes with --listen-any: on loopback the certificate already names localhost, 127.0.0.1 and ::1")
				}
				delay, jitter, err := parseLatency(*latency)
				if err != nil {
					return usagef("fake", "--latency: %v", err)
				}
				var seed *sendlooptest.Seed
				if *seedFile != "" {
					s, err := readSeedFile(*seedFile)
					if err != nil {
						return inputf("--seed %s: %v", *seedFile, err)
					}
					seed = &s
				}
				return runFake(ctx, a, fakeOptions{addr: *addr, smtpAddr: *smtpAddr, empty: *empty || seed != nil, caFile: *caFile,
					exposed: exposed, tlsNames: tlsNames, logSize: *logSize, latency: delay, jitter: jitter, seed: seed, keep: *keep})
			}
		},
	}
}

// notLoopbackError is checkLoopback's error for a valid address that is not loopback.
type notLoopbackError struct{ addr string }

func (e *notLoopbackError) Error() string {
	return fmt.Sprintf("refusing %q: the fake serves loopback addresses only (127.0.0.1, ::1, localhost) unless --listen-any", e.addr)
}

// fakeOptions are the fake command's settings.
type fakeOptions struct {
	addr, smtpAddr string
	empty          bool
	caFile         string
	exposed        bool     // an address is not loopback (--listen-any)
	tlsNames       []string // more names for the relay's certificate
	logSize        int      // requests kept in the request log
	latency        time.Duration
	jitter         time.Duration      // up to this much more than latency
	seed           *sendlooptest.Seed // the data to start with (--seed), checked by LoadSeed
	keep           int                // relay messages kept (--keep-messages)
}

// readSeedFile reads a --seed file.
func readSeedFile(path string) (sendlooptest.Seed, error) {
	f, err := os.Open(path)
	if err != nil {
		return sendlooptest.Seed{}, err
	}
	defer f.Close()
	return sendlooptest.ReadSeed(f)
}

// parseLatency reads --latency's D[,JITTER]; "" is none.
func parseLatency(v string) (delay, jitter time.Duration, err error) {
	if strings.TrimSpace(v) == "" {
		return 0, 0, nil
	}
	d, j, hasJitter := strings.Cut(v, ",")
	if delay, err = time.ParseDuration(strings.TrimSpace(d)); err != nil {
		return 0, 0, fmt.Errorf("%q is not a duration such as 50ms", d)
	}
	if hasJitter {
		if jitter, err = time.ParseDuration(strings.TrimSpace(j)); err != nil {
			return 0, 0, fmt.Errorf("jitter %q is not a duration such as 10ms", j)
		}
	}
	if delay < 0 || jitter < 0 {
		return 0, 0, fmt.Errorf("%q: a latency cannot be negative", v)
	}
	return delay, jitter, nil
}

// checkLoopback accepts a HOST:PORT whose host is a loopback IP address or "localhost"; a
// valid address that is not gets a *notLoopbackError.
func checkLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q is not a port", port)
	}
	if sendloop.IsLoopback(host) {
		return nil
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q is not a host", host)
	}
	return &notLoopbackError{addr: addr}
}

func runFake(ctx context.Context, a *app, o fakeOptions) error {
	addr, smtpAddr, empty, caFile := o.addr, o.smtpAddr, o.empty, o.caFile
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	requests := &requestLogger{a: a}
	srv, err := sendlooptest.Start(sendlooptest.WithListener(ln), sendlooptest.WithRequestLog(o.logSize),
		sendlooptest.WithRequestHook(requests.log))
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer srv.Close()
	// The seed is loaded again on every reset of the control API.
	reseed := func(ctx context.Context, srv *sendlooptest.Server) error {
		if o.seed != nil {
			if err := srv.LoadSeed(*o.seed); err != nil {
				return inputf("--seed: %v", err)
			}
		}
		if !empty {
			return seedDemo(ctx, srv)
		}
		return nil
	}
	if err := reseed(ctx, srv); err != nil {
		return err
	}
	// After the demo data, which the fake sends itself: the fake starts as fast as ever.
	srv.SetLatency(o.latency, o.jitter)
	relay, err := srv.StartRelay(nil, sendlooptest.RelayAddr(smtpAddr), sendlooptest.RelayTLSNames(o.tlsNames...),
		sendlooptest.RelayKeepMessages(o.keep))
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
	baseURL, smtpHost := loopbackURL(srv.URL), relay.Host()
	if ip := net.ParseIP(smtpHost); ip != nil && ip.IsUnspecified() {
		smtpHost = "127.0.0.1"
	}
	if o.exposed {
		// Clients elsewhere reach the fake by a name of this host: the first --tls-name.
		if len(o.tlsNames) > 0 {
			host := o.tlsNames[0]
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			baseURL, smtpHost = "http://"+net.JoinHostPort(host, port), host
		}
		fmt.Fprintf(a.stderr, "sendloop: warning: the fake listens beyond this host (API %s, relay %s): anyone who can reach it can use its key, printed below, and it holds no real data; keep it on a private network\n",
			ln.Addr(), relay.Addr())
		fmt.Fprintf(a.stderr, "sendloop: warning: the control API's key (%s) and the inbox URL (%s) cross the network in clear over plain http\n",
			envFakeKey, envFakeInbox)
	}
	control, err := srv.StartControl(sendlooptest.ControlOptions{Relay: relay, BaseURL: baseURL, Hosts: o.tlsNames, Reseed: reseed})
	if err != nil {
		return err
	}
	settings := orderedObject{
		{envBaseURL, baseURL}, {envAPIKey, srv.APIKey},
		{envSMTPHost, smtpHost}, {envSMTPPort, strconv.Itoa(relay.Port())},
		{envSMTPUser, user}, {envSMTPPassword, password}, {envSMTPCAFile, caFile},
		{envFakeURL, control.URL}, {envFakeKey, control.Key}, {envFakeInbox, control.InboxURL()},
	}
	if o.exposed {
		settings = append(settings, member{envInsecureHTTP, "1"})
	}
	// A client may call as soon as it reads the settings: the log is on before they are out.
	a.note("fake serving the API at %s and the relay at %s; stop it with Ctrl-C", srv.URL, relay.Addr())
	requests.on.Store(true)
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
	watchFake(ctx, a, relay)
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
	// The command comes from the URL's path, before any key check: escaped, so that no
	// request can put a control character on the terminal or forge a line.
	l.a.note("api: %s %s", printable(r.Method), printable(r.Command))
}

// watchFake logs the messages the fake's relay accepts, until ctx ends.
func watchFake(ctx context.Context, a *app, relay *sendlooptest.Relay) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	seen := 0 // the ID of the last message logged
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if a.quiet {
			continue
		}
		// By ID, not position: the relay forgets the oldest beyond --keep-messages.
		for _, m := range relay.Messages() {
			if n, _ := strconv.Atoi(m.ID); n > seen {
				a.note("relay: message from %s to %s: %q (ID %s, Message-ID <%s>)", printable(m.EnvelopeFrom),
					printable(strings.Join(m.EnvelopeTo, ", ")), m.RenderedSubject, m.ID, printable(m.MessageID))
				seen = n
			}
		}
	}
}

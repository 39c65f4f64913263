package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// Environment variables read by the tool.
const (
	envAPIKey       = sendloop.EnvAPIKey  // SENDLOOP_API_KEY
	envBaseURL      = sendloop.EnvBaseURL // SENDLOOP_BASE_URL
	envSMTPHost     = smtp.EnvHost        // SENDLOOP_SMTP_HOST
	envSMTPPort     = smtp.EnvPort        // SENDLOOP_SMTP_PORT
	envSMTPUser     = smtp.EnvUser        // SENDLOOP_SMTP_USER
	envSMTPPassword = smtp.EnvPassword    // SENDLOOP_SMTP_PASSWORD
	envSMTPCAFile   = smtp.EnvCAFile      // SENDLOOP_SMTP_CA_FILE
	// envInsecureHTTP allows a plain http SENDLOOP_BASE_URL on a host that is not loopback,
	// e.g. a `sendloop fake --listen-any` reached by its CI service name. The SDK's
	// equivalent is the WithInsecureHTTP option, which NewClientFromEnv sets from it too.
	envInsecureHTTP = sendloop.EnvInsecureHTTP
	// envJournalURL names the database of send journals: when it is set, --journal NAME
	// names a journal in it (package mailmerge/pgjournal), shared by every runner.
	envJournalURL = "SENDLOOP_JOURNAL_URL"
	// envStateURL names the database of sync states: when it is set, sync's --state NAME
	// names a state in it (package listsync/pgstate), shared by every runner. It may name
	// the journals' database: the tables differ.
	envStateURL = "SENDLOOP_STATE_URL"
)

// userAgent names the tool before the SDK's own User-Agent token.
const userAgent = "sendloop-cli/" + sendloop.Version

// The demo data of the fake (--fake, and the fake command unless --empty).
const (
	demoListID   = 1
	demoListName = "Demo"
)

// apiKey returns the key the tool sends with: the fake's with --fake, else the
// environment's ("" when unset).
func (a *app) apiKey(ctx context.Context) string {
	if a.fake {
		fs, err := a.fakeService(ctx)
		if err != nil {
			return ""
		}
		return fs.srv.APIKey
	}
	return strings.TrimSpace(a.getenv(envAPIKey))
}

// client returns a v3 client for the account (or the fake), built as
// sendloop.NewClientFromEnv builds it, from the tool's environment. The SDK checks the key
// and the base URL; the tool adds what to do about a refusal.
func (a *app) client(ctx context.Context) (*sendloop.Client, error) {
	opts := append([]sendloop.Option{sendloop.WithUserAgent(userAgent)}, a.tracing.clientOptions()...)
	if a.verbose {
		opts = append(opts, sendloop.WithLogger(a.logger()))
	}
	if a.fake {
		fs, err := a.fakeService(ctx)
		if err != nil {
			return nil, err
		}
		return sendloop.NewClient(fs.srv.APIKey, append(opts, sendloop.WithBaseURL(fs.srv.URL))...)
	}
	c, err := sendloop.NewClientFromLookup(a.lookupEnv, opts...)
	var envErr *sendloop.EnvError
	var plain *sendloop.PlainHTTPError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &envErr) && envErr.Variable == envAPIKey && envErr.Unset:
		return nil, configError("%v: export your API key (or try the tool with --fake)", err)
	case errors.As(err, &plain):
		return nil, configError("%s: refusing plain http to %s: the API key would travel in clear text (use https, or set %s=1 for a fake or a proxy on a network you trust)",
			envBaseURL, plain.Host, envInsecureHTTP)
	case errors.As(err, &envErr) && envErr.Variable == envBaseURL:
		return nil, configError("%v (set the account's host, e.g. https://acme.sendloop.com)", err)
	case errors.As(err, &envErr):
		return nil, configError("%v", err)
	}
	return nil, configError("%v (check %s and %s)", err, envAPIKey, envBaseURL)
}

// lookupEnv is getenv in the shape of os.LookupEnv: an empty variable counts as unset.
func (a *app) lookupEnv(name string) (string, bool) {
	v := a.getenv(name)
	return v, v != ""
}

func (a *app) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// note prints an informational line on stderr, unless --quiet.
func (a *app) note(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.stderr, "sendloop: "+format+"\n", args...)
	}
}

// fakeService is the in-process fake of --fake.
type fakeService struct {
	srv   *sendlooptest.Server
	relay *sendlooptest.Relay // started by send
}

// fakeService starts the fake of --fake, with the demo data, on first use.
func (a *app) fakeService(ctx context.Context) (*fakeService, error) {
	if a.fakeSrv != nil {
		return a.fakeSrv, nil
	}
	srv, err := sendlooptest.Start()
	if err != nil {
		return nil, err
	}
	if err := seedDemo(ctx, srv); err != nil {
		srv.Close()
		return nil, err
	}
	a.fakeSrv = &fakeService{srv: srv}
	return a.fakeSrv, nil
}

func (a *app) closeFake() {
	if a.fakeSrv == nil {
		return
	}
	if a.fakeSrv.relay != nil {
		_ = a.fakeSrv.relay.Close()
	}
	a.fakeSrv.srv.Close()
	a.fakeSrv = nil
}

// seedDemo gives a fresh fake its demo data:
//
//   - list 1 "Demo" (single opt-in) with the custom fields 1 "First name" and 2 "Plan";
//   - its subscribers ann@example.com (Ann, pro) and bob@example.com (Bob, free), and
//     carol@example.com (Carol, free), who unsubscribed;
//   - campaign 1 "Welcome" to list 1, delivered to Ann and Bob four hours before the fake
//     started: Ann opened it (from Paris) and clicked its link an hour later, Bob opened it.
//     All of it is in the past, within the reports' window.
func seedDemo(ctx context.Context, srv *sendlooptest.Server) error {
	fail := func(err error) error { return fmt.Errorf("seeding the fake: %w", err) }
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(loopbackURL(srv.URL)))
	if err != nil {
		return fail(err)
	}
	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: demoListName, OptInMode: sendloop.OptInSingle})
	if err != nil {
		return fail(err)
	}
	if listID != demoListID {
		return fail(fmt.Errorf("the demo list got ID %d", listID))
	}
	firstName, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "First name"})
	if err != nil {
		return fail(err)
	}
	plan, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: "Plan"})
	if err != nil {
		return fail(err)
	}
	rows := []sendloop.ImportSubscriber{
		{EmailAddress: "ann@example.com", Fields: sendloop.CustomFields{firstName: "Ann", plan: "pro"}},
		{EmailAddress: "bob@example.com", Fields: sendloop.CustomFields{firstName: "Bob", plan: "free"}},
		{EmailAddress: "carol@example.com", Fields: sendloop.CustomFields{firstName: "Carol", plan: "free"}},
	}
	if _, err := c.Subscribers.Import(ctx, listID, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
		return fail(err)
	}
	// Carol left the list herself, from this host.
	_, err = c.Subscribers.Unsubscribe(ctx, listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: "carol@example.com", UnsubscriptionIP: "127.0.0.1"})
	if err != nil {
		return fail(err)
	}
	_, err = c.Campaigns.Create(ctx, sendloop.CampaignCreateParams{
		CampaignName:  "Welcome",
		FromName:      "Demo",
		FromEmail:     "demo@example.com",
		ReplyToName:   "Demo",
		ReplyToEmail:  "demo@example.com",
		Subject:       "Welcome, %FIRSTNAME%",
		PlainContent:  "Welcome aboard!\n\nhttps://example.com/start\n\nUnsubscribe: %Link:Unsubscribe%\n",
		TargetListIDs: []int{listID},
	})
	if err != nil {
		return fail(err)
	}
	// Delivered in the past, so that the recipients' activity has happened by now: the
	// fake refuses activity after its clock, the host's.
	if _, err := srv.SimulateSendAt(1, time.Now().Add(-4*time.Hour)); err != nil {
		return fail(err)
	}
	err = srv.SimulateEvents(1,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: "ann@example.com", After: time.Hour,
			Country: "FR", City: "Paris"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventClick, Email: "ann@example.com", After: 2 * time.Hour,
			Link: "https://example.com/start"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: "bob@example.com", After: 3 * time.Hour},
	)
	if err != nil {
		return fail(err)
	}
	return nil
}

// loopbackURL returns the URL of a server listening on every address (0.0.0.0 or [::]) as
// reached from this host, 127.0.0.1; other URLs as they are.
func loopbackURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	return u.String()
}

// audienceClient is the client a bulk send reads who may be mailed through; without one,
// the refusal says who needed it (--recipients, a worker) and when.
func (a *app) audienceClient(ctx context.Context, who, when string) (*sendloop.Client, error) {
	c, err := a.client(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s reads the account's suppression list (and a list's members) through the API, %s: %w", who, when, err)
	}
	return c, nil
}

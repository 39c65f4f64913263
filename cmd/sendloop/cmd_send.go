package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// listFlag is a flag that may be repeated and holds comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

type sendOptions struct {
	from, subject, text, html, mergeVars, customArgs, messageID string
	to, cc, bcc, tags, listUnsubscribe                          listFlag
	headers, inline, attach                                     multiFlag
	trackOpens, trackClicks, trackGA, oneClick                  bool
	list                                                        listOptions // --recipients and its flags
	queue                                                       queueOptions
}

// multiFlag is a flag that may be repeated; each value is kept whole (a header value
// may hold commas).
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, "; ") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

func sendCommand() *command {
	return &command{
		name:    "send",
		args:    "--from ADDR (--to ADDR | --recipients FILE | --list ID) --subject TEXT [--text FILE|-] [--html FILE|-] [flags]",
		summary: "send a message through the SMTP relay",
		help: `
Sends one message through the Sendloop SMTP relay, with the relay's X-SL-* options: merge
variables, tags, custom arguments and open, click and Google Analytics tracking. The body is
--text, --html or both (a file, or - for stdin), with --inline images the HTML shows by
"cid:" URLs and --attach files; addresses are "ann@example.com" or "Ann <ann@example.com>".
--header adds any other header (In-Reply-To, References, X-...); --list-unsubscribe adds
the List-Unsubscribe header bulk senders need, and --one-click its RFC 8058
List-Unsubscribe-Post companion (it needs an https URL).

Merge variables (--merge-vars) are rendered by the relay. A key written "%NAME%" fills the
%NAME% tags; a bare key "NAME" fills the Mustache tags {{NAME}} (HTML-escaped), {{{NAME}}}
(not escaped) and the sections {{#NAME}}...{{/NAME}} and {{^NAME}}...{{/NAME}}. To fill
both styles, give both keys: '{"%NAME%":"Ann","NAME":"Ann"}'. Custom arguments
(--custom-args) keep their JSON type: 17 stays a number, true a boolean, "17" a string.

The relay comes from the environment: SENDLOOP_SMTP_HOST, SENDLOOP_SMTP_PORT (default 587;
465 means implicit TLS), SENDLOOP_SMTP_USER and SENDLOOP_SMTP_PASSWORD (a sender address's
delivery settings), and optionally SENDLOOP_SMTP_CA_FILE, a PEM file of certificates to
trust besides the system's (as 'sendloop fake' writes for its relay). The connection is
upgraded with STARTTLS, and the password and message are sent only over TLS (or to a
loopback host); the password is never printed.

It prints the Message-ID of the message (generated unless --message-id) and, with --json,
the relay's reply, which often carries its queue ID. A recipient the relay refuses is
reported, and the command fails, even when the others got the message.

With --fake the message goes to an in-process fake relay, trusted through its own
certificate, and the command prints what the relay captured, merge variables rendered.

--recipients FILE.csv sends one message per row instead of --to: to the row's address (a
Name column gives the display name; the file is read as sync reads it: --encoding,
--delimiter, --column), every other column a merge variable for both %COL% and {{COL}}, as
is each --var NAME=VALUE. Rename a column whose name has spaces with --column
'First name=FIRST'. --header and --list-unsubscribe values may hold {{COL}} and %COL%.

--list ID sends one message to each Subscribed member of the list instead, read page by
page, its merge variables EmailAddress, SubscriberID, ListID and each custom field by its
name (spaces become _: {{{First_Name}}}); the journal keys its rows by subscriber ID.
With --recipients FILE, --list ID sends only to the file's rows that are Subscribed members
of the list.

Who may be mailed is read before the first message, through the API (SENDLOOP_API_KEY and
SENDLOOP_BASE_URL, required for --recipients and --list; exit code 2 without them): an
address on the account's global suppression list, or with --list on the list's own, is
never sent (no flag sends it), and with --list a row whose address is not a Subscribed
member (not in the list, unsubscribed, hard-bounced, confirmation pending) is not sent
either, unless --include-not-subscribed, which is only for mail that is not marketing and
that every member must get (a change of terms, a security notice). Those rows are listed
apart with their reasons (suppressed, not subscribed), never counted as rejects. A single
--to message is checked against the global suppression list when the API is configured,
and a note says so when it is not.

Every tag is checked before the first message: each {{NAME}}, {{{NAME}}}, section and
%NAME% in the subject, bodies, headers and List-Unsubscribe must name a column or a --var,
or the run is refused (exit code 2) with the tag, where it stands and the nearest name;
--allow-tag NAME keeps a tag meant to stay as written. {{NAME}} is HTML-escaped (as
Mustache says), which only the HTML part wants: in the subject and the text part write
{{{NAME}}} or %NAME%. A {{NAME}} there whose value in any row holds & < > " or ' refuses
the run (exit code 2) with the tag, the rows and the fix, unless --keep-escaping NAME
keeps the escaping (headers and List-Unsubscribe are never HTML-escaped). A send to more
than one row needs a one-click unsubscription naming its recipient, as Gmail and Yahoo
require of bulk senders: --list-unsubscribe with an https URL holding a column
('https://example.com/u?e={{email}}') and --one-click, or the run is refused (exit code 2);
a row whose URL renders into no absolute https URL is rejected. --no-unsubscribe is for
transactional mail only (receipts, password resets), which needs none. A %...% inside
a URL, a percent-encoding or one starting with a digit is not a tag (a note says so). A row whose
value is empty for a tag it would show is rejected, unless --default NAME=VALUE gives a
fallback or --allow-empty NAME sends it empty (as sendloop 0.3.0 did). --dry-run prints the
first messages, the notes, how many rows an empty value would reject, how many rows
it would send, reject, leave out as suppressed or not subscribed, and skip for the journal
(--journal, only read), and the first rejected and suppressed lines with their reasons; --preview DIR
writes the first --preview-rows N (5) messages as DIR/<line>.eml, rendered; --test-to ADDR
sends the first --test-rows N (3) messages to ADDR only ([test] subject, tracking off,
List-Unsubscribe a mailto: to ADDR, unless --test-as-is for the first two). None of the
three touches a journal.

--journal FILE records each row before its final dot and after the relay's reply, so that
a run killed at any moment can be run again: rows sent or refused are skipped, rows added
since are sent, and rows whose outcome is unknown are listed, never sent again without
--resend-unknown. A journal written for another message is refused: after fixing a mistake
in a partly sent message, --continue-from OLD --journal NEW sends the corrected message to
the rows OLD does not record. --shard K/N splits a file across N jobs (a stable hash of the
address), each with its own journal file. A journal file lives on one machine: where a
rerun may land on another (a CI runner, a rescheduled pod), set SENDLOOP_JOURNAL_URL to a
PostgreSQL database (postgres://…, from the environment only; its password is never
printed) and --journal NAME names a journal in it, shared by every runner and every
--shard of the send: a key is claimed as its message goes out, so two runs never send it
both, and a dead run's keys are unknown. --queue (with SENDLOOP_JOURNAL_URL and --journal
NAME) splits the send across any number of 'sendloop worker' processes instead: it checks
the send, stores the rows in the database, enqueues them as chunks (--chunk-size N, 100),
prints the send's ID (--json: an object with id) and exits; enqueueing the same send again
enqueues nothing new. --status ID shows a queued send's progress (--json: rows, fates adding
up to rows, chunks done, in_flight and left, workers); --wait follows it to its end, then
reports it with the exit codes below. --rate N paces the relay (4xx replies slow it down),
--concurrency N its connections. The report (--json: one object whose counts add up to the
file's rows, reject_budget and unknown_budget) lists the rows refused, unknown (in this run
or an earlier one), deferred and rejected, each with the line it starts on. The exit code
is 1 when any row is deferred or not attempted (a rerun sends them), when rows are refused
or rejected beyond --max-rejects, or of unknown outcome beyond --max-unknown: N rows, or N%
of the file's data rows (rounded up), still exit 0 (every one is still reported); one more
exits 1.

GitHub Actions: when GITHUB_ACTIONS=true (or with --annotations github; --annotations none
turns it off), each refused, unknown or rejected row is also a workflow annotation on
stderr, "::warning file=FILE,line=N::…" (the file relative to $GITHUB_WORKSPACE when it is
inside it); GitHub shows 10 per step, so the rest are counted in one "::notice::". A
Markdown summary (the counts, the result, the most common reasons) is appended to the file
$GITHUB_STEP_SUMMARY names.`,
		examples: `sendloop send --from 'Shop <shop@example.com>' --to ann@example.net --subject 'Your order' --text order.txt
echo '<p>Hi {{NAME}}</p>' | sendloop send --from shop@example.com --to ann@example.net --subject Hi --html - --merge-vars '{"NAME":"Ann"}' --tags orders,receipts --track-opens
sendloop send --from news@example.com --to ann@example.net --subject News --html news.html --inline logo@example.com=logo.png --list-unsubscribe https://example.com/u/ann --one-click --header 'X-Campaign: spring'
sendloop --fake send --from a@example.com --to b@example.net --subject Test --text - <<< 'Hello'
sendloop send --from news@example.com --subject 'News for {{{FIRST}}}' --html news.html --inline logo.png --recipients list.csv --journal news.journal --rate 50 --list-unsubscribe 'https://example.com/u?e={{email}}'
sendloop send --from news@example.com --subject News --html news.html --recipients list.csv --journal news-1.journal --shard 1/3 --max-rejects 1% --annotations github
sendloop send --from news@example.com --subject 'Hi {{{First_Name}}}' --html news.html --list 7 --journal news.journal --list-unsubscribe 'https://example.com/u/{{SubscriberID}}' --one-click`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			o := &sendOptions{}
			fs.StringVar(&o.from, "from", "", "the sender `ADDR` (required)")
			fs.Var(&o.to, "to", "a recipient `ADDR`; repeat the flag or separate with commas (required unless --recipients or --list)")
			fs.Var(&o.cc, "cc", "a copy recipient `ADDR`; repeat the flag or separate with commas")
			fs.Var(&o.bcc, "bcc", "a blind copy recipient `ADDR`, never shown in the message")
			fs.StringVar(&o.subject, "subject", "", "the subject `TEXT` (required)")
			fs.StringVar(&o.text, "text", "", "the plain-text body, read from `FILE` (- for stdin)")
			fs.StringVar(&o.html, "html", "", "the HTML body, read from `FILE` (- for stdin)")
			fs.Var(&o.inline, "inline", "an inline image, `FILE` (shown by the HTML as src=\"cid:FILE's name\") or CID=FILE; repeatable")
			fs.Var(&o.attach, "attach", "attach `FILE`; repeatable")
			fs.Var(&o.headers, "header", "add the header `'NAME: VALUE'` (In-Reply-To, References, X-...); repeatable")
			fs.Var(&o.listUnsubscribe, "list-unsubscribe", "an unsubscribe `URL` (https:) or mailto: address for List-Unsubscribe; repeatable")
			fs.BoolVar(&o.oneClick, "one-click", false, "add List-Unsubscribe-Post: List-Unsubscribe=One-Click (RFC 8058; needs an https --list-unsubscribe)")
			fs.StringVar(&o.messageID, "message-id", "", "the Message-ID, `ID@HOST` (default: generated)")
			fs.StringVar(&o.mergeVars, "merge-vars", "", "merge variables, a `JSON` object (X-SL-Merge-Vars): \"%NAME%\" keys fill %NAME% tags, bare \"NAME\" keys fill {{NAME}} tags")
			fs.StringVar(&o.customArgs, "custom-args", "", "custom arguments, a `JSON` object of scalars (X-SL-Custom-Args), types kept")
			fs.Var(&o.tags, "tags", "comma-separated `TAGS` for the statistics (X-SL-Tags)")
			fs.BoolVar(&o.trackOpens, "track-opens", false, "track opens (X-SL-Track-Opens)")
			fs.BoolVar(&o.trackClicks, "track-clicks", false, "track clicks (X-SL-Track-Clicks)")
			fs.BoolVar(&o.trackGA, "track-ga", false, "track with Google Analytics (X-SL-Track-GA)")
			l := &o.list
			fs.StringVar(&l.recipients, "recipients", "", "send one message per row of the CSV `FILE` (its address column; the other columns are merge variables)")
			fs.IntVar(&l.listID, "list", 0, "send one message to each Subscribed member of the list `ID` (its fields as merge variables); with --recipients, only to the file's rows that are")
			fs.BoolVar(&l.includeNotSubscribed, "include-not-subscribed", false, "with --list: also send to the members who are not Subscribed (unsubscribed, hard-bounced, unconfirmed). Only for mail that is not marketing and that every member must get (a change of terms, a security notice); suppressed addresses are never sent")
			fs.StringVar(&l.journal, "journal", "", "record each row's fate in `FILE` (required with --recipients): a rerun sends no row twice")
			fs.Float64Var(&l.rate, "rate", 0, "send at most `N` messages a second (default: no limit); 4xx replies slow it down")
			fs.IntVar(&l.concurrency, "concurrency", smtp.DefaultMaxConnections, "keep up to `N` relay connections open")
			fs.BoolVar(&l.resendUnknown, "resend-unknown", false, "send again the rows whose outcome the journal records unknown (they may get two messages)")
			fs.BoolVar(&l.resendRefused, "resend-refused", false, "send again the rows the journal records refused")
			fs.BoolVar(&l.dryRun, "dry-run", false, "with --recipients: print the first messages and send nothing")
			fs.StringVar(&l.shard, "shard", "", "send only the rows of shard `K/N` (K from 1 to N; a stable hash of the address), each shard with its own journal")
			fs.Var(&l.vars, "var", "a merge variable `NAME=VALUE` for every row, filling %NAME% and {{NAME}} (repeatable)")
			fs.Var(&l.columns, "column", "with --recipients: rename the column SOURCE (`SOURCE=TARGET`), e.g. 'First name=FIRSTNAME', or name the address column (=EmailAddress)")
			fs.StringVar(&l.encoding, "encoding", "", "with --recipients: read the file as `ENC`: utf-8, latin1, windows-1252, utf-16le or utf-16be")
			fs.StringVar(&l.delimiter, "delimiter", "", "with --recipients: the delimiter `CHAR` (default: detected)")
			budgetFlag(fs, &l.maxRejects)
			unknownBudgetFlag(fs, &l.maxUnknown)
			annotationsFlag(fs, &l.annotations)
			fs.Var(&l.defaults, "default", "with --recipients: `NAME=VALUE` fills the column NAME where a row's value is empty (repeatable)")
			fs.Var(&l.allowEmpty, "allow-empty", "with --recipients: send the rows whose column `NAME` is empty, the tag rendered empty, instead of rejecting them (repeatable)")
			fs.BoolVar(&l.noUnsubscribe, "no-unsubscribe", false, "with --recipients: this mail needs no unsubscription, being transactional (receipts, password resets), not marketing or news: send to many rows without --list-unsubscribe and --one-click")
			fs.Var(&l.keepEscaping, "keep-escaping", "with --recipients: keep the HTML-escaping of {{`NAME`}} in the subject and text part, which the run otherwise refuses for a value holding & < > \" or ' (repeatable)")
			fs.Var(&l.allowTags, "allow-tag", "with --recipients: keep the tag `NAME` as written, naming no column (repeatable)")
			fs.StringVar(&l.continueFrom, "continue-from", "", "with --recipients and a new --journal: send only to the rows the journal `OLD` does not record (sent, refused, unknown); OLD is only read. With SENDLOOP_JOURNAL_URL, OLD names a journal in the database, and file:PATH a file")
			fs.StringVar(&l.previewDir, "preview", "", "with --recipients: write the first rows' messages to `DIR` as DIR/<line>.eml, rendered, and send nothing")
			fs.IntVar(&l.previewRows, "preview-rows", 5, "with --preview: the `N` rows to write")
			fs.StringVar(&l.testTo, "test-to", "", "with --recipients: send the first rows' messages to `ADDR` only, subject prefixed [test], tracking off, List-Unsubscribe a mailto: to ADDR; no journal")
			fs.IntVar(&l.testRows, "test-rows", 3, "with --test-to: the `N` rows to send (at most 20)")
			fs.BoolVar(&l.testAsIs, "test-as-is", false, "with --test-to: keep the subject and tracking as given")
			queueFlags(fs, &o.queue)
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("send", "unexpected argument %q", args[0])
				}
				// The flag set, not a comparison with each default, says what was given:
				// --preview-rows 5 given without --recipients is as misplaced as 6.
				l.given = map[string]bool{}
				fs.Visit(func(f *flag.Flag) { l.given[f.Name] = true })
				return runSend(ctx, a, o)
			}
		},
	}
}

// message builds the message from the flags.
func (o *sendOptions) message(stdin io.Reader) (*smtp.Message, error) {
	switch {
	case strings.TrimSpace(o.from) == "":
		return nil, usagef("send", "--from is required")
	case len(o.to) == 0 && o.list.recipients == "" && o.list.listID == 0:
		return nil, usagef("send", "--to is required (or --recipients FILE, or --list ID)")
	case o.subject == "":
		return nil, usagef("send", "--subject is required")
	case o.text == "" && o.html == "":
		return nil, usagef("send", "give a body: --text FILE, --html FILE, or both (- reads stdin)")
	case o.text == "-" && o.html == "-":
		return nil, usagef("send", "--text and --html cannot both read stdin")
	}
	msg := &smtp.Message{From: o.from, To: o.to, Cc: o.cc, Bcc: o.bcc, Subject: o.subject, MessageID: o.messageID,
		ListUnsubscribe: o.listUnsubscribe, ListUnsubscribeOneClick: o.oneClick}
	var err error
	if msg.Text, err = readBody("--text", o.text, stdin); err != nil {
		return nil, err
	}
	if msg.HTML, err = readBody("--html", o.html, stdin); err != nil {
		return nil, err
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, usagef("send", "--header %q: want 'NAME: VALUE'", h)
		}
		msg.ExtraHeaders = append(msg.ExtraHeaders, smtp.Field{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	for _, in := range o.inline {
		cid, path, ok := strings.Cut(in, "=")
		if !ok {
			// --inline FILE: the Content-ID is the file's name, as in <img src="cid:logo.png">.
			cid, path = filepath.Base(in), in
		}
		if cid == "" || path == "" {
			return nil, usagef("send", "--inline %q: want FILE or CID=FILE, e.g. logo.png or logo@example.com=logo.png", in)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, inputf("--inline: %v", err)
		}
		msg.Inline = append(msg.Inline, smtp.Inline{ContentID: cid, Filename: filepath.Base(path), Data: data})
	}
	for _, path := range o.attach {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, inputf("--attach: %v", err)
		}
		msg.Attachments = append(msg.Attachments, smtp.Attachment{Filename: filepath.Base(path), Data: data})
	}
	if o.mergeVars != "" {
		dec := json.NewDecoder(strings.NewReader(o.mergeVars))
		dec.UseNumber()
		if err := dec.Decode(&msg.Headers.MergeVars); err != nil || msg.Headers.MergeVars == nil || dec.More() {
			return nil, usagef("send", "--merge-vars must be a JSON object, e.g. '{\"%%NAME%%\":\"Ann\",\"NAME\":\"Ann\"}'")
		}
	}
	if o.customArgs != "" {
		// json.Number keeps 17 a number and 17.50 as written; bools and null stay what
		// they are.
		dec := json.NewDecoder(strings.NewReader(o.customArgs))
		dec.UseNumber()
		err := dec.Decode(&msg.Headers.CustomArgs)
		if err == nil {
			_, err = smtp.Headers{CustomArgs: msg.Headers.CustomArgs}.Fields()
		}
		if err != nil || msg.Headers.CustomArgs == nil || dec.More() {
			return nil, usagef("send", "--custom-args must be a JSON object of scalars, e.g. '{\"order\":17,\"vip\":true}'")
		}
	}
	msg.Headers.Tags = o.tags
	msg.Headers.TrackOpens, msg.Headers.TrackClicks, msg.Headers.TrackGA = o.trackOpens, o.trackClicks, o.trackGA
	return msg, nil
}

func readBody(flagName, path string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	switch path {
	case "":
		return "", nil
	case "-":
		b, err = io.ReadAll(stdin)
	default:
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", inputf("%s: %v", flagName, err)
	}
	return string(b), nil
}

// recipientsOnlyFlags are the send flags that mean something only with --recipients FILE.
var recipientsOnlyFlags = []string{
	"journal", "rate", "shard", "dry-run", "resend-unknown", "resend-refused", "var", "column",
	"encoding", "delimiter", "max-rejects", "max-unknown", "annotations", "default", "allow-empty",
	"allow-tag", "keep-escaping", "no-unsubscribe", "include-not-subscribed", "continue-from", "preview", "preview-rows", "test-to", "test-rows", "test-as-is",
	"queue", "wait", "chunk-size",
}

func runSend(ctx context.Context, a *app, o *sendOptions) error {
	if o.queue.status != "" {
		return runSendStatus(ctx, a, o)
	}
	if o.list.recipients != "" || o.list.listID != 0 {
		return runSendList(ctx, a, o)
	}
	if slices.ContainsFunc(recipientsOnlyFlags, func(name string) bool { return o.list.given[name] }) {
		return usagef("send", "--journal, --rate, --shard, --var, --default, --allow-empty, --allow-tag, --keep-escaping, --no-unsubscribe, --include-not-subscribed, --column, --dry-run, --preview, --test-to, --continue-from, --max-rejects, --max-unknown, --annotations, --queue, --wait, --chunk-size and the --resend flags go with --recipients FILE or --list ID")
	}
	msg, err := o.message(a.stdin)
	if err != nil {
		return err
	}
	if err := a.refuseSuppressed(ctx, msg); err != nil {
		return err
	}
	var opts []smtp.Option
	if a.verbose {
		opts = append(opts, smtp.WithLogger(a.logger()))
	}
	relay, fake, err := a.sendRelay(ctx, opts)
	if err != nil {
		return err
	}
	defer relay.Close()
	res, err := relay.Send(ctx, msg)
	if err != nil && !res.Delivered() {
		var addrErr *smtp.AddressError
		var headerErr *smtp.HeaderError
		var partErr *smtp.PartError
		if errors.As(err, &addrErr) || errors.As(err, &headerErr) || errors.As(err, &partErr) {
			return usagef("send", "%v", err)
		}
		return err
	}
	if fake != nil {
		if perr := printCaptured(a, fake, res); perr != nil {
			return perr
		}
		return err
	}
	if a.json {
		refused := make([]orderedObject, 0, len(res.Refused))
		for _, r := range res.Refused {
			refused = append(refused, orderedObject{{"recipient", r.Recipient}, {"code", r.Code}, {"enhanced_code", r.EnhancedCode}, {"message", r.Message}})
		}
		if werr := writeJSON(a.stdout, orderedObject{{"relay", relay.Addr()}, {"from", msg.From}, {"to", []string(o.to)},
			{"subject", msg.Subject}, {"message_id", res.MessageID}, {"reply", res.Reply.String()},
			{"accepted", nonNil(res.Accepted)}, {"refused", refused}}); werr != nil {
			return werr
		}
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Sent %q to %s through %s.\nMessage-ID: %s\n", msg.Subject, strings.Join(res.Accepted, ", "), relay.Addr(), res.MessageID)
	if a.verbose {
		fmt.Fprintf(&b, "Reply: %s\n", res.Reply)
	}
	if _, werr := io.WriteString(a.stdout, b.String()); werr != nil {
		return werr
	}
	// Some recipients refused: reported on stderr, and the exit code says so.
	return err
}

// sendRelay makes the relay sender: to the in-process fake with --fake (returned too), else
// from the environment.
func (a *app) sendRelay(ctx context.Context, opts []smtp.Option) (*smtp.Relay, *sendlooptest.Relay, error) {
	if a.tracing != nil {
		opts = append(opts, smtp.WithMessageObserver(a.tracing.observer))
	}
	if !a.fake {
		relay, err := a.relayFromEnv(opts)
		return relay, nil, err
	}
	fs, err := a.fakeService(ctx)
	if err != nil {
		return nil, nil, err
	}
	fake, err := fs.srv.StartRelay(nil)
	if err != nil {
		return nil, nil, err
	}
	fs.relay = fake
	user, password := fs.srv.RelayCredentials()
	opts = append(opts, smtp.WithTLSConfig(fake.ClientTLSConfig()))
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password}, opts...)
	if err != nil {
		return nil, nil, err
	}
	return relay, fake, nil
}

// relayFromEnv makes the relay sender from the SENDLOOP_SMTP_* variables, read by the smtp
// package's own reader.
func (a *app) relayFromEnv(opts []smtp.Option) (*smtp.Relay, error) {
	relay, err := smtp.NewRelayFromLookup(a.lookupEnv, opts...)
	var envErr *smtp.EnvError
	switch {
	case errors.As(err, &envErr) && envErr.Unset:
		return nil, configError("%v (or try --fake)", err)
	case err != nil:
		return nil, configError("%v", err)
	}
	return relay, nil
}

// printCaptured prints the messages the fake relay captured, and the result of the send.
func printCaptured(a *app, fake *sendlooptest.Relay, res smtp.SendResult) error {
	msgs := fake.Messages()
	if a.json {
		captured := make([]orderedObject, 0, len(msgs))
		for _, m := range msgs {
			h := m.SLHeaders
			captured = append(captured, orderedObject{
				{"envelope_from", m.EnvelopeFrom}, {"envelope_to", m.EnvelopeTo}, {"tls", m.TLS},
				{"auth_mechanism", m.AuthMechanism}, {"subject", m.Subject}, {"rendered_subject", m.RenderedSubject},
				{"tags", nonNil(h.Tags)}, {"merge_vars", nonNilMap(h.MergeVars)}, {"custom_args", nonNilMap(h.CustomArgs)},
				{"track_opens", h.TrackOpens}, {"track_clicks", h.TrackClicks}, {"track_ga", h.TrackGA},
				{"text", m.Text}, {"rendered_text", m.RenderedText}, {"html", m.HTML}, {"rendered_html", m.RenderedHTML},
				{"structure", m.Structure}, {"inline", len(m.Inline)}, {"attachments", len(m.Attachments)},
			})
		}
		return writeJSON(a.stdout, orderedObject{{"relay", fake.Addr()}, {"fake", true}, {"message_id", res.MessageID},
			{"reply", res.Reply.String()}, {"captured", captured}})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Sent through the fake relay at %s, which captured %s.\nMessage-ID: %s\n", fake.Addr(), plural(len(msgs), "message"), res.MessageID)
	for _, m := range msgs {
		h := m.SLHeaders
		b.WriteString("\n")
		t := newTable(&b)
		t.row("Envelope from:", m.EnvelopeFrom)
		t.row("Envelope to:", strings.Join(m.EnvelopeTo, ", "))
		t.row("Connection:", fmt.Sprintf("TLS %t, AUTH %s", m.TLS, m.AuthMechanism))
		t.row("Subject:", m.Subject)
		t.row("Rendered subject:", m.RenderedSubject)
		t.row("Structure:", m.Structure)
		for _, name := range []string{"List-Unsubscribe", "List-Unsubscribe-Post", "In-Reply-To", "References"} {
			if v := m.Header.Get(name); v != "" {
				t.row(name+":", v)
			}
		}
		if len(h.Tags) > 0 {
			t.row("Tags:", strings.Join(h.Tags, ", "))
		}
		if len(h.MergeVars) > 0 {
			t.row("Merge vars:", compactJSON(h.MergeVars))
		}
		if len(h.CustomArgs) > 0 {
			t.row("Custom args:", compactJSON(h.CustomArgs))
		}
		t.row("Tracking:", tracking(h))
		_ = t.flush()
		for _, part := range []struct{ name, body string }{{"text", m.RenderedText}, {"html", m.RenderedHTML}} {
			if body := strings.ReplaceAll(part.body, "\r\n", "\n"); body != "" {
				fmt.Fprintf(&b, "--- %s (rendered) ---\n%s", part.name, body)
				if !strings.HasSuffix(body, "\n") {
					b.WriteString("\n")
				}
			}
		}
	}
	_, err := a.stdout.Write(b.Bytes())
	return err
}

func tracking(h smtp.Headers) string {
	var on []string
	for _, t := range []struct {
		name string
		on   bool
	}{{"opens", h.TrackOpens}, {"clicks", h.TrackClicks}, {"Google Analytics", h.TrackGA}} {
		if t.on {
			on = append(on, t.name)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ", ")
}

// compactJSON writes a map as JSON with sorted keys.
func compactJSON[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := make(orderedObject, 0, len(keys))
	for _, k := range keys {
		o = append(o, member{k, m[k]})
	}
	b, _ := o.MarshalJSON()
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// refuseSuppressed refuses a message to an address the account suppresses everywhere
// (mailmerge.CheckMessage), as a bulk send never sends one: read through the API when it
// is configured (or --fake), and said to be unchecked when it is not.
func (a *app) refuseSuppressed(ctx context.Context, msg *smtp.Message) error {
	if !a.fake && a.apiKey(ctx) == "" {
		a.note("the suppression list was not checked: %s is not set", envAPIKey)
		return nil
	}
	c, err := a.client(ctx)
	if err != nil {
		return err
	}
	err = mailmerge.CheckMessage(ctx, c, msg)
	if refused := (*mailmerge.SuppressedError)(nil); errors.As(err, &refused) {
		return errors.New(strings.TrimPrefix(refused.Error(), "mailmerge: "))
	}
	if err != nil {
		return fmt.Errorf("checking the suppression list: %w", err)
	}
	return nil
}

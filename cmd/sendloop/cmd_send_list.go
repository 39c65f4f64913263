package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// listOptions are the flags of `send --recipients`.
type listOptions struct {
	recipients, journal, shard string
	rate                       float64
	concurrency                int
	resendUnknown              bool
	resendRefused              bool
	dryRun                     bool
	vars, columns              repeatedFlag
	defaults, allowEmpty       repeatedFlag
	allowTags                  repeatedFlag
	keepEscaping               repeatedFlag
	noUnsubscribe              bool
	encoding, delimiter        string
	maxRejects, annotations    string
	maxUnknown                 string
	continueFrom               string
	previewDir                 string
	previewRows                int
	testTo                     string
	testRows                   int
	testAsIs                   bool
	// listID is --list: the list whose Subscribed members are sent to (alone, or the
	// file's rows that are members of it, with --recipients).
	listID               int
	includeNotSubscribed bool
	// given names the flags given on the command line (flag.FlagSet.Visit).
	given map[string]bool
}

// sendListGCPercent is the garbage collector's GOGC while send --recipients runs: its live
// heap is small and grows slowly (a few tens of bytes per row, for the journal's index and
// the duplicate check), its garbage plentiful (every row's message), so collecting at 25 %
// growth keeps the peak RSS near the live heap for a few more short collections.
const sendListGCPercent = 25

// parseShard reads --shard K/N: K from 1 to N.
func parseShard(s string) (mailmerge.ShardSpec, error) {
	if s == "" {
		return mailmerge.ShardSpec{}, nil
	}
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return mailmerge.ShardSpec{}, usagef("send", "--shard %q: want K/N with K from 1 to N, e.g. 1/3", s)
	}
	return mailmerge.ShardSpec{Index: ki - 1, Count: ni}, nil
}

// shardFlag names a shard as --shard does: "2/2".
func shardFlag(s mailmerge.ShardSpec) string {
	if s.Count <= 1 {
		return "no --shard"
	}
	return fmt.Sprintf("--shard %d/%d", s.Index+1, s.Count)
}

// nameValues reads the NAME=VALUE of a repeated flag.
func nameValues(flagName string, given []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range given {
		name, value, ok := strings.Cut(v, "=")
		if !ok || !mailmerge.ValidName(name) {
			return nil, usagef("send", "%s %q: want NAME=VALUE, NAME of letters, digits, _ . or -", flagName, v)
		}
		out[name] = value
	}
	return out, nil
}

// checkLimits refuses the flags of send --recipients that cannot go together.
func (l *listOptions) checkLimits(o *sendOptions) error {
	switch {
	case len(o.to) > 0 || len(o.cc) > 0:
		return usagef("send", "%s sends to its own addresses: drop --to and --cc", l.sourceFlag())
	case l.listID < 0:
		return usagef("send", "--list wants a list's ID, e.g. --list 7")
	case l.includeNotSubscribed && l.listID == 0:
		return usagef("send", "--include-not-subscribed goes with --list ID")
	case l.journal == "" && !l.dryRun && l.previewDir == "" && l.testTo == "":
		return usagef("send", "%s needs --journal FILE: it records each row sent, so that a rerun sends no row twice", l.sourceFlag())
	case l.concurrency < 1:
		return usagef("send", "--concurrency must be at least 1")
	case l.rate < 0 || math.IsNaN(l.rate) || math.IsInf(l.rate, 0):
		return usagef("send", "--rate must be a number of messages per second, 0 or more")
	case o.messageID != "":
		return usagef("send", "--message-id cannot be used with --recipients: each message gets its own")
	case l.continueFrom != "" && l.journal == "":
		return usagef("send", "--continue-from OLD needs a new --journal NEW")
	case l.continueFrom != "" && strings.TrimPrefix(l.continueFrom, "file:") == l.journal:
		return usagef("send", "--continue-from OLD and --journal NEW must be two files: OLD is only read")
	case l.previewRows < 1:
		return usagef("send", "--preview-rows must be at least 1")
	case l.testRows < 1 || l.testRows > mailmerge.MaxTestRows:
		return usagef("send", "--test-rows must be from 1 to %d", mailmerge.MaxTestRows)
	case l.testAsIs && l.testTo == "":
		return usagef("send", "--test-as-is goes with --test-to ADDR")
	case btoi(l.dryRun)+btoi(l.previewDir != "")+btoi(l.testTo != "") > 1:
		return usagef("send", "--dry-run, --preview and --test-to are three ways to look before sending: give one")
	}
	return nil
}

// sourceFlag names the recipients' flag given: --recipients FILE or --list ID.
func (l *listOptions) sourceFlag() string {
	if l.recipients == "" {
		return "--list"
	}
	return "--recipients"
}

// sourceName names the recipients in messages and the step summary: the file, or the list.
func (l *listOptions) sourceName() string {
	if l.recipients == "" {
		return fmt.Sprintf("list %d", l.listID)
	}
	return l.recipients
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// listJob reads the flags of send --recipients into the library's job: the file, the
// template, the variables, defaults and shard, every tag checked.
func (l *listOptions) listJob(ctx context.Context, a *app, o *sendOptions, shard mailmerge.ShardSpec, api *sendloop.Client) (*mailmerge.Job, error) {
	vars, err := nameValues("--var", l.vars)
	if err != nil {
		return nil, err
	}
	defaults, err := nameValues("--default", l.defaults)
	if err != nil {
		return nil, err
	}
	tmpl, err := o.message(a.stdin)
	if err != nil {
		return nil, err
	}
	src, err := l.source(ctx, api)
	if err != nil {
		return nil, err
	}
	opts := mailmerge.Options{Vars: vars, Defaults: defaults, AllowEmpty: l.allowEmpty, AllowTags: l.allowTags,
		KeepEscaping: l.keepEscaping, NoUnsubscribe: l.noUnsubscribe, Shard: shard,
		API: api, IncludeNotSubscribed: l.includeNotSubscribed}
	if l.recipients != "" {
		opts.ListID = l.listID // a list's own source names it
	}
	job, err := mailmerge.New(src, tmpl, opts)
	var cerr *mailmerge.CheckError
	switch {
	case errors.As(err, &cerr):
		return nil, l.checkRefusal(cerr, vars)
	case err != nil && strings.Contains(err.Error(), "default for"):
		return nil, usagef("send", "--default: %s", strings.TrimPrefix(cliMessage(err), "mailmerge: default for "))
	case err != nil:
		return nil, inputf("%s", strings.TrimPrefix(cliMessage(err), "mailmerge: "))
	}
	return job, nil
}

// checkRefusal is the message of a template whose tags do not check: every problem, and
// the columns and variables there are.
func (l *listOptions) checkRefusal(cerr *mailmerge.CheckError, vars map[string]string) error {
	var b strings.Builder
	for i, p := range cerr.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		if p.Tag == "" {
			fmt.Fprintf(&b, "%s does not parse: %s", p.Where, strings.TrimPrefix(p.Msg, "personalize: "))
			continue
		}
		msg := p.Msg
		if msg == "no column or variable of that name" {
			msg = "no column or --var of that name"
		}
		fmt.Fprintf(&b, "%s (%s): %s", p.Tag, p.Where, msg)
		if p.Suggest != "" {
			fmt.Fprintf(&b, "; did you mean %s?", p.Suggest)
		}
	}
	var vs []string
	for _, n := range cerr.Names {
		if _, ok := vars[n]; ok {
			vs = append(vs, n)
		}
	}
	fmt.Fprintf(&b, "\nthe columns of %s: %s", l.sourceName(), orNone(cerr.Columns))
	if len(vs) > 0 {
		fmt.Fprintf(&b, "; --var: %s", strings.Join(vs, ", "))
	}
	b.WriteString("\nnothing was sent (--allow-tag NAME keeps a tag meant to stay as written)")
	return inputf("%s", b.String())
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// source opens --recipients as the library reads it (the reader's options and the column
// renames), or the members of --list ID.
func (l *listOptions) source(ctx context.Context, api *sendloop.Client) (mailmerge.Source, error) {
	if l.recipients == "" {
		src, err := mailmerge.OpenList(ctx, api, l.listID)
		switch {
		case errors.Is(err, sendloop.ErrListNotFound):
			return nil, inputf("--list %d: no list of that ID in the account", l.listID)
		case err != nil:
			return nil, fmt.Errorf("--list: %s", cliMessage(err))
		}
		return src, nil
	}
	read := csvfile.ReadOptions{}
	var err error
	if read.Encoding, err = csvfile.ParseEncoding(l.encoding); err != nil {
		return nil, usagef("send", "--encoding: %v", err)
	}
	if l.delimiter != "" {
		if read.Comma, err = csvfile.ParseDelimiter(l.delimiter); err != nil {
			return nil, usagef("send", "--delimiter: %v", err)
		}
	}
	var maps []csvfile.ColumnMap
	for _, c := range l.columns {
		m, err := csvfile.ParseColumnMap(c)
		if err != nil {
			return nil, usagef("send", "--column: %v", err)
		}
		maps = append(maps, m)
	}
	src, err := mailmerge.File(l.recipients, mailmerge.FileOptions{Read: read, Columns: maps})
	var cne *mailmerge.ColumnNameError
	switch {
	case errors.As(err, &cne):
		return nil, inputf("%s: column %q cannot be a merge variable: rename it, e.g. --column '%s=%s'", l.recipients, cne.Column, cne.Column, cne.Suggest)
	case err != nil && strings.HasPrefix(err.Error(), l.recipients+": "): // the header: the file names itself
		return nil, inputf("%v", err)
	case err != nil:
		return nil, inputf("--recipients: %v", err)
	}
	return src, nil
}

func runSendList(ctx context.Context, a *app, o *sendOptions) (runErr error) {
	l := &o.list
	if o.queue.on || l.given["wait"] || l.given["chunk-size"] {
		return runSendQueue(ctx, a, o)
	}
	if err := l.checkLimits(o); err != nil {
		return err
	}
	shard, err := parseShard(l.shard)
	if err != nil {
		return err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(sendListGCPercent))
	budget, err := parseRejectBudget("send", l.maxRejects)
	if err != nil {
		return err
	}
	unknownBudget, err := parseUnknownBudget("send", l.maxUnknown)
	if err != nil {
		return err
	}
	// The library judges the budgets; the command renders its verdict.
	maxRejects, maxUnknown := budget.limit, unknownBudget.limit
	gh, err := newGitHubReport("send", a.env, l.annotations, l.recipients)
	if err != nil {
		return err
	}
	if gh != nil {
		gh.noun = "failed row"
	}
	// The step summary is written whatever stops the run, a template the check refuses
	// included; the preview, a dry run and a test send write none.
	rep := &listReport{gh: gh}
	var outcome, unknownOutcome *budgetOutcome
	summarize := true
	defer func() {
		if !summarize {
			return
		}
		path := gh.path()
		if l.recipients == "" {
			path = l.sourceName()
		}
		if err := gh.finish(rep.summary(path, shard, outcome, unknownOutcome, runErr)); err != nil {
			a.note("%v", err)
		}
	}()
	// Who may be mailed is read through the API: a bulk send without it is refused, as
	// the library refuses it (mailmerge.ErrNoAPI). A preview and a test send reach nobody
	// on the file and go without, unless the recipients are a list; a dry run reads it
	// when the API is configured and says so when it is not.
	var api *sendloop.Client
	if l.dryRun && l.listID == 0 && a.apiKey(ctx) != "" {
		if api, err = a.client(ctx); err != nil {
			return err
		}
	}
	if l.listID != 0 || (l.previewDir == "" && l.testTo == "" && !l.dryRun) {
		if api, err = a.audienceClient(ctx, l.sourceFlag(), "before the first message"); err != nil {
			return err
		}
	}
	job, err := l.listJob(ctx, a, o, shard, api)
	if err != nil {
		return err
	}
	if err := escapeRefusal(job.CheckEscaping(ctx)); err != nil {
		return err
	}
	if l.testTo == "" {
		if err := unsubscribeRefusal(job.CheckUnsubscribe(ctx)); err != nil {
			return err
		}
	}
	if !l.dryRun {
		for _, n := range job.Notes() {
			a.note("%s", n)
		}
	}
	switch {
	case l.dryRun:
		summarize = false
		return dryRunList(ctx, a, job, l)
	case l.previewDir != "":
		summarize = false
		paths, err := job.WritePreview(ctx, l.previewDir, l.previewRows)
		if err != nil {
			return inputf("--preview: %v", cliMessage(err))
		}
		_, err = fmt.Fprintf(a.stdout, "Preview: %s written to %s, nothing sent.\n", plural(len(paths), "message"), l.previewDir)
		return err
	}

	var relayOpts []smtp.Option
	if a.verbose {
		relayOpts = append(relayOpts, smtp.WithLogger(a.logger()))
	}
	relayOpts = append(relayOpts, smtp.WithMaxConnections(l.concurrency))
	if l.rate > 0 {
		relayOpts = append(relayOpts, smtp.WithRate(l.rate, max(1, int(l.rate/10))))
	}
	relay, _, err := a.sendRelay(ctx, relayOpts)
	if err != nil {
		return err
	}
	defer relay.Close()
	if l.testTo != "" {
		summarize = false
		return testSendList(ctx, a, job, relay, l)
	}
	store, closeStore, err := openJournalStore(ctx, a, job, l)
	if err != nil {
		return err
	}
	defer closeStore()
	prog, endProgress := a.startProgress()
	prog.start(0, func(done, _ int64) string { return fmt.Sprintf(" %s", plural(int(done), "row")) })
	// ctx ends at the first signal: no new row starts. The messages in flight get sendGrace
	// to finish, or end at a second signal.
	work, cancelWork := secondSignal(ctx)
	defer cancelWork()
	earlierName, earlier, closeEarlier, err := continueFrom(ctx, a, l)
	if err != nil {
		return err
	}
	defer closeEarlier()
	res, err := job.Send(ctx, relay, mailmerge.SendOptions{Journal: l.journal, JournalStore: store, ContinueFrom: earlierName, ContinueFromRecords: earlier,
		ResendUnknown: l.resendUnknown, ResendRefused: l.resendRefused, MaxRejects: maxRejects, MaxUnknown: maxUnknown,
		Stop:  sljob.Stop{Grace: sendGrace, Work: work},
		OnRow: rep.annotate, OnProgress: func(sljob.Progress) { prog.add(1) }, Observer: a.tracing.jobObserver()})
	endProgress()
	var jerr *mailmerge.JournalError
	switch {
	case errors.As(err, &jerr):
		return journalRefusal(jerr, l)
	case res == nil && err != nil:
		return err
	}
	defer res.Close()
	rep.Result = res
	var over *sljob.BudgetError
	if err != nil && ctx.Err() == nil && !errors.As(err, &over) {
		rep.stop = err
	}
	o2 := sendBudgetOutcome(budget, res.Rejects(), res.Rows, err)
	u2 := sendBudgetOutcome(unknownBudget, res.Unknowns(), res.Rows, err)
	outcome, unknownOutcome = &o2, &u2
	if werr := rep.write(a, relay.Addr(), l.journal, o2, u2); werr != nil {
		return werr
	}
	return rep.err(ctx, a, o2, u2)
}

// sendGrace is how long the messages in flight of send --recipients may finish after a
// first SIGINT or SIGTERM: a message cut off after its final dot is of unknown outcome,
// which the rerun lists instead of sending.
const sendGrace = 10 * time.Second

// journalRefusal says why a journal cannot be used, and what to do.
func journalRefusal(e *mailmerge.JournalError, l *listOptions) error {
	flagName := "--journal"
	if e.Path == strings.TrimPrefix(l.continueFrom, "file:") && l.continueFrom != "" {
		flagName = "--continue-from"
	}
	switch {
	case e.MessageChanged:
		return inputf("%s %s was written for another message: the subject, a body, a header, --var, --default, --merge-vars or --custom-args changed since. "+
			"If you fixed a mistake after a partial send, keep %s and send the corrected message to the rows it does not record: "+
			"--continue-from %s --journal NEW.journal", flagName, e.Path, e.Path, e.Path)
	case e.Journal != e.Want:
		return inputf("%s %s was written by %s, not %s: each shard has its own journal", flagName, e.Path, shardFlag(e.Journal), shardFlag(e.Want))
	}
	return inputf("%s: %s", flagName, cliMessage(e.Err))
}

// testSendList sends the first rows' messages to --test-to only.
func testSendList(ctx context.Context, a *app, job *mailmerge.Job, relay *smtp.Relay, l *listOptions) error {
	sent, err := job.TestSend(ctx, relay, mailmerge.TestOptions{To: l.testTo, Rows: l.testRows, AsIs: l.testAsIs})
	var b strings.Builder
	for _, s := range sent {
		fmt.Fprintf(&b, "line %d (%s): sent to %s as %s\n", s.Line, s.Address, l.testTo, s.MessageID)
	}
	fmt.Fprintf(&b, "Test: %s sent to %s only; no journal touched.\n", plural(len(sent), "message"), l.testTo)
	if _, werr := io.WriteString(a.stdout, b.String()); werr != nil {
		return werr
	}
	return err
}

// dryRunList prints the first rows' messages of this shard, the notes and the rows the
// check would reject, and sends nothing.
func dryRunList(ctx context.Context, a *app, job *mailmerge.Job, l *listOptions) error {
	const show = 3
	msgs, err := job.Preview(ctx, show)
	if err != nil {
		return inputf("%s: %v", l.sourceFlag(), cliMessage(err))
	}
	var b strings.Builder
	for _, p := range msgs {
		m := p.Message
		fmt.Fprintf(&b, "To: %s\nSubject: %s\n", strings.Join(m.To, ", "), p.Subject)
		for _, u := range m.ListUnsubscribe {
			fmt.Fprintf(&b, "List-Unsubscribe: <%s>\n", u)
		}
		for _, f := range m.ExtraHeaders {
			fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
		}
		switch {
		case p.Text != "":
			fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(p.Text, "\n"))
		case p.HTML != "":
			fmt.Fprintf(&b, "\n(the text the HTML part shows; --preview DIR writes the whole message)\n%s\n", htmlText(p.HTML))
		}
		b.WriteString("\n")
	}
	// The journal the run would use, only read, so that the counts say what it would skip.
	records, closeRecords, err := readJournalStore(ctx, a, job, l)
	if err != nil {
		return err
	}
	defer closeRecords()
	check, err := job.Check(ctx, mailmerge.CheckOptions{Journal: l.journal, JournalRecords: records,
		ResendUnknown: l.resendUnknown, ResendRefused: l.resendRefused})
	var jerr *mailmerge.JournalError
	switch {
	case errors.As(err, &jerr):
		return journalRefusal(jerr, l)
	case err != nil:
		return inputf("%s: %v", l.sourceFlag(), cliMessage(err))
	}
	for _, n := range job.Notes() {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	for _, t := range job.EmptyTags() {
		fmt.Fprintf(&b, "Rows with an empty value for %s would be rejected: %d (--default NAME=VALUE or --allow-empty NAME sends them)\n", t, check.Empty[t])
	}
	writeDryRunCounts(&b, check)
	fmt.Fprintf(&b, "Dry run: %s shown, nothing sent.\n", plural(len(msgs), "message"))
	_, err = io.WriteString(a.stdout, b.String())
	return err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
)

// syncGCPercent is the garbage collector's GOGC while sync runs.
const syncGCPercent = 150

// maxRejectsShown is how many rejected rows are printed on stderr without --rejects.
const maxRejectsShown = 20

func syncCommand() *command {
	return &command{
		name:    "sync",
		args:    "--list ID (--csv FILE | --jsonl FILE | --query SQL) [--dry-run [--plan FILE]] [--unsubscribe-missing[=all]] [--rejects FILE] [--max-rejects N] [--state FILE [--full]] [flags]",
		summary: "keep a list in step with a CSV file",
		help: `
Makes a list hold the subscribers of a CSV file: it adds the addresses the list lacks,
updates the custom fields that differ, and with --unsubscribe-missing unsubscribes the
members the file does not name. It plans first and prints the plan; --dry-run stops there
and changes nothing. A second run with the same file plans nothing.

A dry run prints the plan's counts and the first 20 changes of each kind (additions,
updates, unsubscriptions), then "… and N more". --plan FILE (- for stdout, instead of the
table) writes every change and every rejected row as CSV, with the columns
action,line,email,subscriber_id,field,field_id,from,to,reason: the file's rows in its
order, then the unsubscriptions. action is add, update, reject or unsubscribe; one row per
field an addition sets or an update changes (an addition without values, a rejected row
and an unsubscription take one row without a field); line is the record's first line
(empty for an unsubscription), email the address as written (as the list holds it for an
update or an unsubscription), from the member's value and to the file's, reason why a row
is rejected (empty on the other rows). listsync's Plan.WriteCSV writes the same file.
--json lists every change too.

The file: UTF-8 with or without a byte-order mark, or UTF-16 with one (as Excel's "Unicode
text" writes it); other encodings with --encoding (latin1, windows-1252, utf-16le,
utf-16be): a header that is not UTF-8 is refused with the encoding it looks like. Comma-,
semicolon- or tab-separated, detected from the header line, or from Excel's "sep=;" first
line; --delimiter overrides both. Quoted as RFC 4180 says; a quoted value is kept byte for
byte, its line breaks too (CRLF stays CRLF).

The header row names the columns. The address column is EmailAddress in any common
spelling, compared without case, spaces, '-' and '_' (Email, E-mail, "Email Address",
email_address, Mail). Custom fields are named by key (CustomField7) or by name ("First
name", looked up with list.get), case-insensitively. --column 'SOURCE=TARGET' maps any
column to EmailAddress or to a custom field, whatever its name. An unknown column is a
usage error (it catches typos): skip it with --ignore-column NAME, or skip every unknown
and unnamed column with --ignore-unknown-columns. The read-only columns that export
writes (SubscriberID, SubscriptionStatus, BounceType, …) are ignored, except that with a
SubscriptionStatus column only the rows whose status is Subscribed count: the others are
skipped (they add, update and unsubscribe no one).

Other sources, instead of --csv, whose columns map as a header's do (the address by its
usual names, the others by field name, --column and --ignore-column as for a file):
--jsonl FILE reads a JSON Lines file, one object per line, its keys as columns (what
"bq extract --destination_format NEWLINE_DELIMITED_JSON" or "SELECT row_to_json(t)"
writes): numbers, true and false as written, null as empty; a line that is no JSON object
is rejected with its number. --query SQL reads a PostgreSQL query, on the database whose
address (postgres://USER:PASSWORD@HOST/DB) is in SENDLOOP_SOURCE_URL, never a flag; values
as PostgreSQL writes them (a boolean is t or f), NULL as empty. The query runs once, in a
read-only session: its rows go to a temporary file that the apply reads again, so the
plan and the apply see the same rows in the same order with or without ORDER BY.

Values: spaces around a value are trimmed (spreadsheets pad cells); --no-trim keeps them
in custom fields (addresses are always trimmed, of a byte-order mark and zero-width spaces
too). An empty cell empties the field.

Addresses are compared case-insensitively. Members who unsubscribed are not subscribed again,
and addresses on the suppression list (the list's or the global one) are not added: both
are counted as skipped. Members pending a double opt-in confirmation count as members.

Rejected rows, each with its line number and reason: malformed lines (a stray quote, the
wrong number of fields), invalid UTF-8, missing or invalid addresses, addresses already
given on an earlier line (outcome "rejected"), and rows the service refused ("refused").
Rows of unknown outcome ("unknown") are listed with them but are no rejects: their call
may have run (the connection broke after the request was sent, on every attempt), and the
same sync run again settles them. --rejects FILE writes them all as CSV
(line,email,reason,outcome, the address as written; the header alone when there is none);
without it they are printed on stderr (the first 20). Any rejected or refused row makes
the exit code 1, in a dry run too, unless --max-rejects allows it: N rows, or N% of the
file's data rows (rounded up), still exit 0 (every reject is still reported); one more
exits 1. A dry run measures its planned rejects. Rows of unknown outcome have a budget of
their own, --max-unknown, given the same way; beyond it the run exits 1 and says that
running the same sync again settles them. Both default to 0, allowing none; the
unsubscription guard's exit code 2 comes first.

GitHub Actions: when GITHUB_ACTIONS=true (or with --annotations github; --annotations none
turns it off), each rejected row is also a workflow annotation on stderr,
"::warning file=FILE,line=N::…", naming the file relative to $GITHUB_WORKSPACE when it is
inside it and the record's first line; GitHub shows 10 per step, so the rest are counted in
one "::notice::". A Markdown summary (the plan's counts, the result, the most common
rejection reasons) is appended to the file $GITHUB_STEP_SUMMARY names.

Applying: additions through subscriber.import in batches (--batch-size, --concurrency),
then updates (subscriber.update, by SubscriberID), then unsubscriptions through the legacy
API's Subscriber.Unsubscribe, which takes the list's ID: the v3 subscriber.unsubscribe has
none and would unsubscribe the address from every list. Nothing is unsubscribed when the
file names no subscriber at all (an empty or truncated export must not empty the list), and
a member whose row is rejected but names the address is kept. A file with a record that
cannot be parsed (an unterminated quote swallows the lines after it) is refused with
--unsubscribe-missing, and nothing changes: its rejected rows are listed, and the error
names the malformed lines. The file is read again to apply the plan: a file whose size or
modification time changed since the first read stops the sync, and a line that no longer
holds the address planned for it is skipped and rejected.

Progress goes to stderr when it is a terminal (not with TERM=dumb, a pipe or a file).

Whom --unsubscribe-missing unsubscribes: with --state, only the members that are the
sync's, those it added or its source named at some run (the state records them); a member
the service added and the source never named (a sign-up form's) is kept, counted as
"kept: not the sync's" (in --json, the plan's "kept_not_owned"). --unsubscribe-missing=all
unsubscribes every member the source does not name, an exact mirror. Without --state
nothing records whose members are whose, and every member the source does not name is
unsubscribed (a note says so). A state that records no owners yet (the first run, or one
written by sendloop 0.4.0) makes the run record those the source names and unsubscribe
none of the others, and says so. The --json plan's "unsubscribe_rule" is owned, all or
none. The bare flag takes no separate value: write --unsubscribe-missing=all.

Unsubscription guard: with --unsubscribe-missing, a plan that would unsubscribe more than
--max-unsubscribe members (N, or N% of the list's subscribed and pending members, rounded
up; 10% by default, 100% for no limit) is refused with exit code 2, and nothing changes.

Interruption: on SIGINT or SIGTERM sync stops reading the file and starts no new call; the
calls in flight get --grace (10s) to finish, and a second signal cancels them at once. It
prints "Interrupted" with the rows done, failed, of unknown outcome and not attempted
(they add up to the file's rows) and the changes of every kind not attempted
(unsubscriptions have no row), and exits 130 after SIGINT, 143 after SIGTERM. A cancelled row is never
reported as rejected: running the same sync again finishes the job. (Windows has no
SIGTERM: Ctrl-C and Ctrl-Break act as SIGINT, closing the console window as SIGTERM.)

Memory does not grow with the list or the file: the plan keeps a 48-byte record per member
and per row, sorted on disk, and the members' addresses and values, in temporary files
(in $TMPDIR, unlinked as soon as created, so that even a killed run leaves none; about
100 bytes per member and row). On Windows, where an open file cannot be unlinked, they are
in %TEMP% and removed when the run ends: a killed run leaves them behind.

Progress (on a terminal) names the kind of change under way: adding, updating or
unsubscribing, with its count.

A state (--state FILE) makes a nightly sync cost what changed rather than the size of the
list. After a run that finished (not interrupted, not a dry run), sync writes to FILE
what the list holds: each member's subscriber ID, address, status and a fingerprint of
the mapped fields' values. The next run with the same FILE compares the file with the
state instead of reading every member: it makes one list.getlist call, one legacy
Chart.ListActivity call, the suppression reads, one subscriber.get for each address the
state does not know (so that no one who unsubscribed is subscribed again), and the
changes. An unchanged list costs 5 calls. The drift is the larger of the difference
between the list's subscribed members and the state's, and the subscriptions plus
unsubscriptions the list's activity chart counts since the state (so that a sign-up
offset by an unsubscription counts 2); the chart does not count a deletion (the
subscribed count does, unless a sign-up offsets it), nor field edits.
The run is a full one (it reads the members, and writes a fresh state) when the state is
missing, unreadable, written for another account (base URL or API key: a rotated key is
another account), list or mapping of the columns, older than --max-state-age since its
last full read (7 days; 0 for no limit), marked in use by a run that did not finish,
older than the days the service's activity chart reaches back,
when the list's subscribed members differ from the state's by more than --max-drift (N,
or N% of the state's members; 5% by default), or with --full. The output says which it
was, and why ("state used" or "state not used: …"; in --json, "state": {"used", "reason",
"drift"}). A lock (FILE.lock, removed when the run ends) keeps two runs from using one
state at once; a missing folder of FILE is made, mode 0700.

A run from the state reads back by its address (subscriber.get) every row it would add
that the state does not know, every member it would update, and every member the state
holds as unsubscribed whose row changed, and plans them as a full run does: an update
goes by the row's address, never by a subscriber ID that the service may have given to
another address since; a member deleted or renamed on the service side is added again; a
member who subscribed again on the service side is updated. An update costs two calls.

What a run from the state cannot see until the next full run, because their rows did not
change: members added on the service side (the owned rule keeps them anyway; =all
unsubscribes them at the next full run); a member deleted or renamed on the service side
(not added again); a member who subscribed again there (counted as skipped); a field
edited there (not set back). A member who unsubscribed on the service side is never
subscribed again. For a nightly job: a state every night, --full once a week.

With SENDLOOP_STATE_URL set (a PostgreSQL database, postgres://user:password@host/db, from
the environment only, its password never printed; it may name the journals' database),
--state NAME names a state in that database, and no file is written: the same encrypted
state, with the same checks and fallbacks, is a row of sendloop_sync_states under NAME, in
the first schema of the URL's search_path (created on first use, or by 'sendloop journal
migrate'). An advisory lock on NAME keeps two runs from using it at once (the second is
refused: in use by another run), and ends with the run however it ends. A nightly sync on
runners that keep no disk (a CI job, a Kubernetes CronJob) then still costs what changed.

The state is a copy of the list's personal data. It is encrypted (AES-256-GCM, with a key
derived from the API key: it tells nothing to anyone without the key, who could not read
the list either) and written with mode 0600, but do not keep it where others can fetch
it: not in an artifact or cache of a public repository's CI, whose artifacts anyone may
download. Keep it in a private cache or on the runner's disk.

With --json, stdout is one document: the list, the plan, the changes (dry run) or the
result (counts by kind: done, failed, unknown and not attempted; changes_not_attempted;
and rows_done, rows_failed, rows_unknown, rows_not_attempted), rejected_rows (line,
address, reason, outcome), reject_budget (max as given, allowed for this file, -1 for any;
rejects; held) and, once applied, unknown_budget (the same, counting unknown).`,
		examples: `sendloop sync --list 12 --csv subscribers.csv --dry-run
sendloop sync --list 12 --csv subscribers.csv --rejects rejects.csv
sendloop sync --list 12 --csv subscribers.csv --dry-run --plan plan.csv
sendloop sync --list 12 --csv nightly.csv --max-rejects 1% --max-unknown 10 --annotations github
sendloop --json sync --list 12 --csv subscribers.csv --unsubscribe-missing
sendloop sync --list 12 --csv nightly.csv --unsubscribe-missing --state .cache/list-12.state
SENDLOOP_SOURCE_URL=postgres://reader@db/app sendloop sync --list 12 --query 'SELECT email, first_name AS "First name" FROM users'
sendloop sync --list 12 --csv excel.csv --encoding windows-1252 --column 'Work e-mail=EmailAddress' --ignore-column Notes`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			o := &syncOptions{}
			fs.IntVar(&o.listID, "list", 0, "the `ID` of the list to sync (required)")
			fs.StringVar(&o.csvPath, "csv", "", "the CSV `FILE` (required)")
			o.sourceFlags(fs)
			fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan's counts and first changes, and change nothing")
			fs.StringVar(&o.planPath, "plan", "", "with --dry-run, write every planned change to `FILE` as CSV (- for stdout)")
			fs.Var(&o.unsubscribeMissing, "unsubscribe-missing", "unsubscribe the members the source does not name: with --state the sync's only (those it added or its source named); =all every one, an exact mirror")
			fs.StringVar(&o.rejectsPath, "rejects", "", "write the rejected rows, and those of unknown outcome, to `FILE` (CSV: line,email,reason,outcome)")
			budgetFlag(fs, &o.maxRejects)
			unknownBudgetFlag(fs, &o.maxUnknown)
			annotationsFlag(fs, &o.annotations)
			fs.IntVar(&o.batchSize, "batch-size", 1000, "send `N` rows per subscriber.import call")
			fs.IntVar(&o.concurrency, "concurrency", 4, "keep up to `N` API calls in flight")
			fs.Var(&o.columns, "column", "map the column SOURCE to TARGET (`SOURCE=TARGET`): EmailAddress, a custom field's name or CustomField<id> (repeatable)")
			fs.Var(&o.ignoreColumns, "ignore-column", "ignore the column `NAME` (repeatable)")
			fs.BoolVar(&o.header.IgnoreUnknown, "ignore-unknown-columns", false, "ignore the columns that name nothing known, instead of refusing the file")
			fs.StringVar(&o.encoding, "encoding", "", "read the file as `ENC`: utf-8, latin1, windows-1252, utf-16le or utf-16be (default: UTF-8, or UTF-16 by its byte-order mark)")
			fs.StringVar(&o.delimiter, "delimiter", "", "the delimiter `CHAR`: , ; tab | … (default: detected)")
			fs.BoolVar(&o.header.KeepSpaces, "no-trim", false, "keep the spaces around custom-field values")
			g := &syncStop{}
			fs.DurationVar(&g.grace, "grace", 10*time.Second, "on SIGINT or SIGTERM, give the calls in flight `DUR` to finish")
			fs.StringVar(&g.maxUnsubscribe, "max-unsubscribe", job.DefaultMaxUnsubscribe.String(), "refuse to unsubscribe more than `N` members, or N% of the list (100% for no limit)")
			fs.StringVar(&o.statePath, "state", "", "keep the list's state in `FILE` (encrypted), or under that name in SENDLOOP_STATE_URL's database, and plan from it when it can: a nightly run costs what changed")
			fs.BoolVar(&o.full, "full", false, "with --state, read every member whatever the state, and write a fresh one")
			fs.StringVar(&o.maxDrift, "max-drift", job.DefaultMaxDrift.String(), "with --state, a full run when the list's subscribed members differ from the state's by more than `N`, or N% of the state's members")
			o.maxStateAge = 7 * 24 * time.Hour
			fs.Var((*durationFlag)(&o.maxStateAge), "max-state-age", "with --state, a full run when the state's last full read is older than `DUR` (0: no limit)")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("sync", "unexpected argument %q", args[0])
				}
				return runSync(ctx, a, o, g)
			}
		},
	}
}

type syncOptions struct {
	listID             int
	csvPath            string
	dryRun             bool
	unsubscribeMissing missingRule
	rejectsPath        string
	planPath           string
	maxRejects         string
	maxUnknown         string
	annotations        string
	batchSize          int
	concurrency        int
	statePath          string
	full               bool
	maxDrift           string
	maxStateAge        time.Duration
	syncSources

	// How the file is read; check fills read and header from the flags' text.
	columns, ignoreColumns repeatedFlag
	encoding, delimiter    string
	read                   csvfile.ReadOptions
	header                 listsync.HeaderOptions
}

func (o *syncOptions) check() error {
	switch {
	case o.listID <= 0:
		return usagef("sync", "--list ID is required and must be positive")
	case !o.hasSource():
		return usagef("sync", "--csv FILE is required (or --jsonl FILE, or --query SQL)")
	case o.batchSize < 1:
		return usagef("sync", "--batch-size must be at least 1")
	case o.concurrency < 1:
		return usagef("sync", "--concurrency must be at least 1")
	case o.planPath != "" && !o.dryRun:
		return usagef("sync", "--plan needs --dry-run")
	case o.statePath == "" && o.full:
		return usagef("sync", "--full needs --state")
	case o.maxStateAge < 0:
		return usagef("sync", "--max-state-age cannot be negative")
	}
	var err error
	if o.read.Encoding, err = csvfile.ParseEncoding(o.encoding); err != nil {
		return usagef("sync", "--encoding: %v", err)
	}
	if o.delimiter != "" {
		if o.read.Comma, err = csvfile.ParseDelimiter(o.delimiter); err != nil {
			return usagef("sync", "--delimiter: %v", err)
		}
	}
	o.header.Columns = nil
	for _, c := range o.columns {
		m, err := csvfile.ParseColumnMap(c)
		if err != nil {
			return usagef("sync", "--column: %v", err)
		}
		o.header.Columns = append(o.header.Columns, m)
	}
	o.header.Ignore = o.ignoreColumns
	return nil
}

// stateOptions reads the flags of --state.
func (o *syncOptions) stateOptions() (*listsync.StateOptions, error) {
	drift, err := job.ParseBudget(o.maxDrift)
	if err != nil {
		return nil, usagef("sync", "--max-drift %q: want N or N%% (0%% to 100%%)", o.maxDrift)
	}
	age := o.maxStateAge
	if age == 0 {
		age = -1 // no limit
	}
	so := listsync.DefaultStateOptions(o.statePath)
	so.Full, so.MaxDrift, so.MaxAge = o.full, drift, age
	return &so, nil
}

// syncStop holds the flags of sync's interruption and guard.
type syncStop struct {
	grace          time.Duration
	maxUnsubscribe string
}

// parseMaxUnsubscribe reads --max-unsubscribe: N members, or N% of the list's members
// (rounded up). It returns the limit for a list of members members, or -1 for none.
func parseMaxUnsubscribe(s string, members int) (int, error) {
	l, err := job.ParseBudget(s)
	if err != nil {
		return 0, usagef("sync", "--max-unsubscribe %q: want N or N%% (0%% to 100%%)", s)
	}
	return l.Allowed(members), nil
}

func runSync(ctx context.Context, a *app, o *syncOptions, g *syncStop) (runErr error) {
	if err := o.check(); err != nil {
		return err
	}
	if o.planPath == "-" && a.json {
		return usagef("sync", "--plan - and --json both write stdout: give --plan a file")
	}
	budget, err := parseRejectBudget("sync", o.maxRejects)
	if err != nil {
		return err
	}
	unknownBudget, err := parseUnknownBudget("sync", o.maxUnknown)
	if err != nil {
		return err
	}
	gh, err := newGitHubReport("sync", a.env, o.annotations, o.csvPath)
	if err != nil {
		return err
	}
	var out *syncOutput
	var res *syncResult
	defer func() {
		if err := gh.finish(syncSummary(o, gh.path(), out, res, runErr)); err != nil {
			a.note("%v", err)
		}
	}()
	if _, err := parseMaxUnsubscribe(g.maxUnsubscribe, 0); err != nil {
		return err
	}
	limit, _ := job.ParseBudget(g.maxUnsubscribe)
	if g.grace < 0 {
		return usagef("sync", "--grace cannot be negative")
	}
	// The plan's memory is bounded (its records wait on disk), so the collector can let the
	// heap grow further between cycles: an eighth of the CPU a re-sync spends, for a few MB
	// (200 would save more, but bring the first sync's peak RSS at 1M rows near 1.5× 10k's).
	defer debug.SetGCPercent(debug.SetGCPercent(syncGCPercent))
	prog, endProgress := a.startProgress()
	defer endProgress()
	// The file first: a wrong path or a file that cannot be read is found before any API call.
	src, info, err := openSyncSource(ctx, a, o)
	if err != nil {
		return err
	}
	defer src.Close()

	c, err := a.client(ctx)
	if err != nil {
		return err
	}
	var state *listsync.StateOptions
	if o.statePath != "" {
		if state, err = o.stateOptions(); err != nil {
			return err
		}
		closeStore, err := openStateStore(ctx, a, state)
		if err != nil {
			return err
		}
		defer closeStore() // after the plan and the job, which release the state's lock
	}
	var members atomic.Int64
	var described sync.Once
	sj, err := listsync.New(ctx, c, o.listID, src, listsync.Options{
		UnsubscribeMissing: o.unsubscribeMissing.on,
		UnsubscribeAll:     o.unsubscribeMissing.all,
		Concurrency:        o.concurrency,
		State:              state,
		Observer:           a.tracing.jobObserver(),
		Progress: func(p listsync.PlanProgress) {
			if p.Mapping != nil {
				// How the file is read, as soon as list.get has answered.
				described.Do(func() { a.note("%s", src.describe(p.Mapping)) })
			}
			members.Store(int64(p.Members))
			prog.set(p.Read)
		},
	})
	if err != nil {
		return err
	}
	defer sj.Close()

	// The plan: the list and its fields (the file's columns are mapped to them), its
	// members and the suppressed addresses, then the file, each read once into records on
	// disk.
	prog.start(src.Size, func(done, total int64) string {
		return fmt.Sprintf("reading the members of list %d (%d) and %s (%s)", o.listID, members.Load(), o.csvPath, percent(done, total))
	})
	plan, err := sj.Plan(ctx)
	prog.finish()
	var herr *listsync.HeaderError
	switch {
	case errors.As(err, &herr):
		return inputf("%s: %v", o.csvPath, err)
	case err != nil && ctx.Err() != nil:
		return interruptedBeforeChanges(ctx, a, src)
	case err != nil:
		return err
	}
	defer plan.Close()

	rejects, err := newRejectSink(a, o.rejectsPath, info)
	if err != nil {
		return err
	}
	defer rejects.abort()
	rejects.gh = gh
	var unreadable *listsync.UnreadableError
	var guard *listsync.GuardError
	switch err := plan.Check(limit); {
	case errors.As(err, &unreadable):
		return refuseUnreadable(ctx, a, o.csvPath, plan, rejects)
	case errors.As(err, &guard) && guard.EmptySource:
		return fmt.Errorf("refusing to unsubscribe all %s of list %d: %s names no subscriber", plural(guard.Unsubscribes, "member"), o.listID, o.csvPath)
	case errors.As(err, &guard):
		kept := ""
		if guard.KeptNotOwned > 0 {
			kept = fmt.Sprintf(" (%d more absent kept: not the sync's)", guard.KeptNotOwned)
		}
		return inputf("refusing to unsubscribe %d of the %s of list %d%s: --max-unsubscribe %s allows %d (is %s complete? raise the limit, or 100%% for none); nothing was changed",
			guard.Unsubscribes, plural(guard.Members, "member"), o.listID, kept, g.maxUnsubscribe, guard.Allowed, o.csvPath)
	case err != nil:
		return err
	}

	list := sj.List()
	noteMirrorRule(a, o, plan)
	out = &syncOutput{a: a, list: list, csvPath: o.csvPath, dryRun: o.dryRun, unsubscribeMissing: o.unsubscribeMissing.on,
		plan: plan, mapping: sj.Mapping(), rejects: rejects, budget: budget, state: state != nil}
	if err := out.openPlan(o.planPath, info); err != nil {
		return err
	}
	defer out.closePlan()
	if err := out.begin(); err != nil {
		return err
	}
	if o.dryRun {
		return runDryRun(ctx, out, plan, rejects)
	}
	if list.OptInMode == sendloop.OptInDouble && plan.Adds > 0 {
		a.note("list %d is double opt-in, but subscriber.import subscribes new addresses (%d here) at once, without a confirmation email",
			o.listID, plan.Adds)
	}
	a.note("%s", out.planCounts())

	// ctx ends at the first signal: no more rows are read and no call is started. The calls
	// in flight run for the grace period, or until a second signal ends work.
	work, cancelWork := secondSignal(ctx)
	defer cancelWork()
	var applyErr error
	var under atomic.Pointer[job.Progress]
	var before int64 // the changes of the kinds done before the one under way
	prog.start(int64(plan.Adds+plan.Updates+plan.Unsubscribes), func(done, total int64) string {
		return fmt.Sprintf("applying: %d/%s%s", done, plural(int(total), "change"), applying(under.Load()))
	})
	lib, applyErr := plan.Apply(ctx, listsync.ApplyOptions{
		BatchSize:      o.batchSize,
		MaxUnsubscribe: limit,
		MaxRejects:     budget.limit,
		MaxUnknown:     unknownBudget.limit,
		Stop:           job.Stop{Grace: g.grace, Work: work},
		OnProgress: func(p job.Progress) {
			// One call at a time: a kind begins once the one before has ended.
			if old := under.Load(); old != nil && old.Kind != p.Kind {
				before += int64(old.Total)
			}
			under.Store(&p)
			prog.set(before + int64(p.Done))
		},
		OnRow: rejects.onRow,
	})
	prog.finish()
	if lib == nil {
		return applyErr
	}
	res = newSyncResult(lib)
	if res.AddUntraced > 0 {
		a.note("the service refused %s that could not be traced to a line", plural(res.AddUntraced, "row"))
	}
	// The budgets' verdict is the library's: the run's report says it below, in the
	// CLI's words.
	over, applyErr := budgetVerdicts(applyErr)
	if res.Interrupted {
		applyErr = errors.Join(fmt.Errorf("%s: of %s, %d done, %d failed, %d of unknown outcome, %d not attempted, and %s not attempted in all; run the same sync again to finish",
			stopReason(ctx), plural(plan.Rows, "row"), res.RowsDone, res.RowsFailed, res.RowsUnknown, res.RowsNotAttempted,
			plural(res.ChangesNotAttempted, "change")), applyErr)
	}
	// Rows the service refused without a line to reject count against the budget too.
	outcome := budget.check(rejects.count+res.AddUntraced, plan.Rows)
	outcome.Held = !over["MaxRejects"]
	out.outcome, rejects.budget = &outcome, &outcome
	unknownOutcome := unknownBudget.check(rejects.unknown, plan.Rows)
	unknownOutcome.Held = !over["MaxUnknown"]
	out.unknownOutcome, rejects.unknownBudget = &unknownOutcome, &unknownOutcome
	if err := out.end(res); err != nil {
		return err
	}
	return rejects.finish(errors.Join(applyErr, failures(res, outcome.Held)))
}

// budgetVerdicts takes the *job.BudgetErrors out of Apply's error: over names the budgets
// (job.BudgetError.Budget) the run exceeded, rest is what else went wrong.
func budgetVerdicts(err error) (over map[string]bool, rest error) {
	over = map[string]bool{}
	var walk func(error) error
	walk = func(err error) error {
		var be *job.BudgetError
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			var errs []error
			for _, e := range joined.Unwrap() {
				errs = append(errs, walk(e))
			}
			return errors.Join(errs...)
		} else if errors.As(err, &be) {
			over[be.Budget] = true
			return nil
		}
		return err
	}
	rest = walk(err)
	return over, rest
}

// maxUnreadableNamed is how many malformed records the refusal of an unreadable file names.
const maxUnreadableNamed = 5

// refuseUnreadable reports a sync with --unsubscribe-missing of a file with records the CSV
// reader could not parse, which listsync refuses: who is missing is unknown (an
// unterminated quote swallows the lines after it), and nothing is changed. The rejected
// rows go to the rejects as usual and the error names the malformed lines, so that the file
// can be fixed.
func refuseUnreadable(ctx context.Context, a *app, path string, plan *listsync.Plan, rejects *rejectSink) error {
	var named []string
	for ev, err := range plan.Events(ctx, listsync.EventReject) {
		if err != nil {
			return err
		}
		rejects.addRow(ev.Row, ev.Reason)
		if ev.Row.Malformed && len(named) < maxUnreadableNamed {
			named = append(named, fmt.Sprintf("line %d %s", ev.Row.Line, strconv.Quote(ev.Row.Raw)))
		}
	}
	if plan.Unreadable > len(named) {
		named = append(named, "…")
	}
	err := fmt.Errorf("refusing to unsubscribe anyone: %s has %s whose addresses cannot be read (an unterminated quote?), so who is missing is unknown: %s; nothing was changed (fix the file, or sync without --unsubscribe-missing)",
		path, plural(plan.Unreadable, "malformed record"), strings.Join(named, ", "))
	if a.json && rejects.path == "" {
		rejects.abort() // no document lists them (they went to stderr): the error names the lines
		return err
	}
	return errors.Join(err, rejects.finish(nil))
}

// interruptedBeforeChanges reports a sync stopped while it planned: nothing was changed,
// and every row of the file (counted, not read through the plan) is left to the next run.
func interruptedBeforeChanges(ctx context.Context, a *app, src *syncSource) error {
	path := src.Path
	rows, _ := src.CountRecords()
	if a.json {
		doc := orderedObject{{"csv", path}, {"interrupted", true}, {"changed", false}, {"rows", rows},
			{"rows_done", 0}, {"rows_failed", 0}, {"rows_not_attempted", rows}}
		fmt.Fprintf(a.stdout, "%s\n", indentJSON(doc, ""))
	} else {
		fmt.Fprintf(a.stdout, "Interrupted while planning: nothing was changed (%s of %s not attempted).\n", plural(rows, "row"), path)
	}
	return fmt.Errorf("%s before any change: of %s, 0 done, 0 failed, %d not attempted; run the same sync again",
		stopReason(ctx), plural(rows, "row"), rows)
}

// stopReason says why ctx ended: a signal, --timeout, or a caller's cancellation.
func stopReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	var ie *interruptedError
	switch {
	case errors.As(cause, &ie):
		return ie.Error()
	case errors.Is(cause, context.DeadlineExceeded):
		return "stopped by --timeout"
	}
	return "interrupted"
}

// failures describes the changes that failed without a row to reject; the rows refused
// without a line are no failure when the reject budget held.
func failures(res *syncResult, budgetHeld bool) error {
	var errs []error
	if res.UnsubscribeFailed > 0 {
		errs = append(errs, fmt.Errorf("%s failed", plural(res.UnsubscribeFailed, "unsubscription")))
	}
	if res.UnsubscribeUnknown > 0 {
		errs = append(errs, fmt.Errorf("%s of unknown outcome: the same sync run again settles them",
			plural(res.UnsubscribeUnknown, "unsubscription")))
	}
	if res.AddUntraced > 0 && !budgetHeld {
		errs = append(errs, fmt.Errorf("the service refused %s that could not be traced to a line",
			plural(res.AddUntraced, "row")))
	}
	return errors.Join(errs...)
}

// applying names the kind of change under way, for the progress line.
func applying(p *job.Progress) string {
	if p == nil {
		return ""
	}
	switch p.Kind {
	case listsync.KindAdd:
		return fmt.Sprintf(" (adding: %d/%d)", p.Done, p.Total)
	case listsync.KindUpdate:
		return fmt.Sprintf(" (updating: %d/%d)", p.Done, p.Total)
	case listsync.KindUnsubscribe:
		return fmt.Sprintf(" (unsubscribing: %d/%d)", p.Done, p.Total)
	}
	return ""
}

// describeMapping says how the file is read, for the notes.
func describeMapping(r *listsync.CSVFile, m *listsync.Mapping) string {
	sep := map[rune]string{',': "comma", ';': "semicolon", '\t': "tab", '|': "pipe"}[r.Comma]
	if sep == "" {
		sep = strconv.QuoteRune(r.Comma)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %s-separated", r.Path, r.Encoding, sep)
	if r.BOM {
		b.WriteString(", with a byte-order mark")
	}
	if r.SepLine {
		b.WriteString(`, after a "sep=" line`)
	}
	fmt.Fprintf(&b, "; address in column %d", m.Email+1)
	for _, f := range m.Fields {
		fmt.Fprintf(&b, "; %q is CustomField%d (%s)", f.Header, f.Field.ID, f.Field.Name)
	}
	if len(m.Ignored) > 0 {
		fmt.Fprintf(&b, "; ignored: %s", strings.Join(m.Ignored, ", "))
	}
	return b.String()
}

// missingRule is --unsubscribe-missing: bare (or =owned, =true) the owned rule, =all the
// exact mirror's, =false off. It is a boolean flag to package flag (IsBoolFlag), so that
// the bare form still parses; a value goes after "=".
type missingRule struct{ on, all bool }

func (r *missingRule) String() string {
	switch {
	case r == nil || !r.on:
		return "false"
	case r.all:
		return "all"
	}
	return "true"
}

func (r *missingRule) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "owned", "1":
		*r = missingRule{on: true}
	case "all":
		*r = missingRule{on: true, all: true}
	case "false", "0":
		*r = missingRule{}
	default:
		return fmt.Errorf("want all, or no value (the members the sync brought or its source named)")
	}
	return nil
}

// IsBoolFlag lets --unsubscribe-missing stand alone.
func (r *missingRule) IsBoolFlag() bool { return true }

// noteMirrorRule says which members --unsubscribe-missing may unsubscribe when that is not
// the rule a reader of the flag would assume: without a state every absent member (nothing
// records which are the sync's), and with a state that held no owners, none this run.
func noteMirrorRule(a *app, o *syncOptions, plan *listsync.Plan) {
	if !o.unsubscribeMissing.on {
		return
	}
	switch {
	case o.statePath == "" && !o.unsubscribeMissing.all:
		a.note("--unsubscribe-missing without --state: nothing records which members the sync brought, so it unsubscribes every member %s does not name (the rule of --unsubscribe-missing=all)", o.csvPath)
	case o.statePath != "" && !o.unsubscribeMissing.all && plan.State.NoOwners:
		a.note("the state held no record of which members are the sync's (none yet, unreadable, or written by sendloop 0.4.0): this run records those %s names and those it adds, and unsubscribes none of the others (%d kept)", o.csvPath, plan.KeptNotOwned)
	}
}

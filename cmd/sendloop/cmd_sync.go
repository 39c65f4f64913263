package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/cmd/sendloop/internal/csvsync"
	"github.com/go-sendloop/sendloop/legacy"
)

// unsubscriptionIP is the UnsubscriptionIP sent with Subscriber.Unsubscribe: the service's
// "unset" address, since no subscriber's address made the request.
const unsubscriptionIP = "0.0.0.0"

// maxRejectsShown is how many rejected rows are printed on stderr without --rejects.
const maxRejectsShown = 20

func syncCommand() *command {
	return &command{
		name:    "sync",
		args:    "--list ID --csv FILE [--dry-run] [--unsubscribe-missing] [--rejects FILE] [flags]",
		summary: "keep a list in step with a CSV file",
		help: `
Makes a list hold the subscribers of a CSV file: it adds the addresses the list lacks,
updates the custom fields that differ, and with --unsubscribe-missing unsubscribes the
members the file does not name. It plans first and prints the plan; --dry-run stops there
and changes nothing. A second run with the same file plans nothing.

The file: UTF-8 with or without a byte-order mark, or UTF-16 with one (as Excel's "Unicode
text" writes it); other encodings with --encoding (latin1, windows-1252, utf-16le,
utf-16be): a header that is not UTF-8 is refused with the encoding it looks like. Comma-,
semicolon- or tab-separated, detected from the header line, or from Excel's "sep=;" first
line; --delimiter overrides both. Quoted as RFC 4180 says.

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

Values: spaces around a value are trimmed (spreadsheets pad cells); --no-trim keeps them
in custom fields (addresses are always trimmed). An empty cell empties the field.

Addresses are compared case-insensitively. Members who unsubscribed are not subscribed again,
and addresses on the suppression list (the list's or the global one) are not added: both
are counted as skipped. Members pending a double opt-in confirmation count as members.

Rejected rows, each with its line number and reason: malformed lines (a stray quote, the
wrong number of fields), invalid UTF-8, missing or invalid addresses, addresses already
given on an earlier line, and rows the service refused. --rejects FILE writes them as CSV
(line,email,reason, the address as written; the header alone when there is none);
without it they are printed on stderr (the first 20). Any rejected row makes the exit
code 1, in a dry run too.

Applying: additions through subscriber.import in batches (--batch-size, --concurrency),
then updates (subscriber.update, by SubscriberID), then unsubscriptions through the legacy
API's Subscriber.Unsubscribe, which takes the list's ID: the v3 subscriber.unsubscribe has
none and would unsubscribe the address from every list. Nothing is unsubscribed when the
file names no subscriber at all (an empty or truncated export must not empty the list), and
a member whose row is rejected but names the address is kept.

Progress goes to stderr when it is a terminal (not with TERM=dumb, a pipe or a file).`,
		examples: `sendloop sync --list 12 --csv subscribers.csv --dry-run
sendloop sync --list 12 --csv subscribers.csv --rejects rejects.csv
sendloop --json sync --list 12 --csv subscribers.csv --unsubscribe-missing
sendloop sync --list 12 --csv excel.csv --encoding windows-1252 --column 'Work e-mail=EmailAddress' --ignore-column Notes`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			o := &syncOptions{}
			fs.IntVar(&o.listID, "list", 0, "the `ID` of the list to sync (required)")
			fs.StringVar(&o.csvPath, "csv", "", "the CSV `FILE` (required)")
			fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan and change nothing")
			fs.BoolVar(&o.unsubscribeMissing, "unsubscribe-missing", false, "unsubscribe the members the CSV does not name")
			fs.StringVar(&o.rejectsPath, "rejects", "", "write the rejected rows to `FILE` (CSV: line,email,reason)")
			fs.IntVar(&o.batchSize, "batch-size", 1000, "send `N` rows per subscriber.import call")
			fs.IntVar(&o.concurrency, "concurrency", 4, "keep up to `N` API calls in flight")
			fs.Var(&o.columns, "column", "map the column SOURCE to TARGET (`SOURCE=TARGET`): EmailAddress, a custom field's name or CustomField<id> (repeatable)")
			fs.Var(&o.ignoreColumns, "ignore-column", "ignore the column `NAME` (repeatable)")
			fs.BoolVar(&o.header.IgnoreUnknown, "ignore-unknown-columns", false, "ignore the columns that name nothing known, instead of refusing the file")
			fs.StringVar(&o.encoding, "encoding", "", "read the file as `ENC`: utf-8, latin1, windows-1252, utf-16le or utf-16be (default: UTF-8, or UTF-16 by its byte-order mark)")
			fs.StringVar(&o.delimiter, "delimiter", "", "the delimiter `CHAR`: , ; tab | … (default: detected)")
			fs.BoolVar(&o.header.KeepSpaces, "no-trim", false, "keep the spaces around custom-field values")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("sync", "unexpected argument %q", args[0])
				}
				return runSync(ctx, a, o)
			}
		},
	}
}

type syncOptions struct {
	listID             int
	csvPath            string
	dryRun             bool
	unsubscribeMissing bool
	rejectsPath        string
	batchSize          int
	concurrency        int

	// How the file is read; check fills read and header from the flags' text.
	columns, ignoreColumns repeatedFlag
	encoding, delimiter    string
	read                   csvsync.ReadOptions
	header                 csvsync.HeaderOptions
}

func (o *syncOptions) check() error {
	switch {
	case o.listID <= 0:
		return usagef("sync", "--list ID is required and must be positive")
	case o.csvPath == "":
		return usagef("sync", "--csv FILE is required")
	case o.batchSize < 1:
		return usagef("sync", "--batch-size must be at least 1")
	case o.concurrency < 1:
		return usagef("sync", "--concurrency must be at least 1")
	}
	var err error
	if o.read.Encoding, err = csvsync.ParseEncoding(o.encoding); err != nil {
		return usagef("sync", "--encoding: %v", err)
	}
	if o.delimiter != "" {
		if o.read.Comma, err = csvsync.ParseDelimiter(o.delimiter); err != nil {
			return usagef("sync", "--delimiter: %v", err)
		}
	}
	o.header.Columns = nil
	for _, c := range o.columns {
		m, err := csvsync.ParseColumnMap(c)
		if err != nil {
			return usagef("sync", "--column: %v", err)
		}
		o.header.Columns = append(o.header.Columns, m)
	}
	o.header.Ignore = o.ignoreColumns
	return nil
}

// syncResult counts what applying the plan did.
type syncResult struct {
	Added             int `json:"added"`
	AlreadyPresent    int `json:"already_present"`
	AddFailed         int `json:"add_failed"`
	AddUntraced       int `json:"add_untraced"` // refused rows the service's answer did not let us trace
	Updated           int `json:"updated"`
	UpdateFailed      int `json:"update_failed"`
	Unsubscribed      int `json:"unsubscribed"`
	UnsubscribeFailed int `json:"unsubscribe_failed"`
	Rejected          int `json:"rejected"`
}

func runSync(ctx context.Context, a *app, o *syncOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	// Everything written on stderr goes through the progress, which keeps the terminal's
	// progress line apart from the messages.
	prog := newProgress(a.stderr, a.stderrTTY, a.quiet)
	stderr := a.stderr
	a.stderr = prog
	defer func() {
		prog.finish()
		a.stderr = stderr
	}()
	// The file first: a wrong path or header is a usage error, found before any API call.
	if o.csvPath == "-" {
		return usagef("sync", "--csv needs a file: sync reads it more than once, so it cannot read stdin")
	}
	info, err := os.Stat(o.csvPath)
	if err != nil {
		return usagef("sync", "--csv: %v", err)
	}
	head, err := csvsync.Open(o.csvPath, o.read)
	if err != nil {
		return usagef("sync", "%s: %v", o.csvPath, err)
	}
	header := head.Header
	head.Close()

	c, err := a.client(ctx)
	if err != nil {
		return err
	}
	list, err := c.Lists.Get(ctx, o.listID, sendloop.ListGetParams{CustomFields: true})
	if err != nil {
		return err
	}
	mapping, err := csvsync.MapHeader(header, listFields(list), o.header)
	if err != nil {
		return usagef("sync", "%s: %v", o.csvPath, err)
	}
	a.note("%s", describeMapping(o.csvPath, head, mapping))

	var unsubscriber *legacy.Client
	if o.unsubscribeMissing && !o.dryRun {
		if unsubscriber, err = a.legacyClient(ctx); err != nil {
			return err
		}
	}
	rejects, err := newRejectSink(a, o.rejectsPath, info)
	if err != nil {
		return err
	}
	defer rejects.abort()

	// What the plan needs: the list's members and the suppressed addresses.
	planner := csvsync.NewPlanner(mapping, csvsync.Options{
		UnsubscribeMissing: o.unsubscribeMissing,
		Progress:           func(offset int64) { prog.set(offset) },
	})
	prog.start(0, func(done, _ int64) string {
		return fmt.Sprintf("reading the members of list %d: %d", o.listID, done)
	})
	for sub, err := range c.Subscribers.BrowseIter(ctx, o.listID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			return err
		}
		planner.AddMember(sub.SubscriberID, sub.EmailAddress, string(sub.SubscriptionStatus), sub.CustomFields)
		prog.add(1)
	}
	for _, id := range []int{o.listID, 0} {
		entries, err := c.Suppression.List(ctx, id)
		if err != nil {
			return err
		}
		for _, e := range entries {
			planner.Suppress(e.EmailAddress)
		}
	}

	open := func() (*csvsync.Reader, error) { return csvsync.Open(o.csvPath, o.read) }
	prog.start(info.Size(), func(done, total int64) string {
		return fmt.Sprintf("planning: read %s of %s", percent(done, total), o.csvPath)
	})
	plan, err := planner.Plan(open)
	prog.finish()
	if err != nil {
		return err
	}
	if o.unsubscribeMissing && plan.Unreadable > 0 {
		return fmt.Errorf("refusing to unsubscribe anyone: %s has %d malformed records whose addresses cannot be read (an unterminated quote?), so who is missing is unknown",
			o.csvPath, plan.Unreadable)
	}
	named := plan.Adds + len(plan.Updates) + plan.Unchanged + plan.SkippedUnsubscribed + plan.SkippedSuppressed + plan.SkippedStatus
	if len(plan.Unsubscribes) > 0 && named == 0 {
		return fmt.Errorf("refusing to unsubscribe all %d members of list %d: %s names no subscriber", len(plan.Unsubscribes), o.listID, o.csvPath)
	}

	out := &syncOutput{a: a, list: list, csvPath: o.csvPath, dryRun: o.dryRun, unsubscribeMissing: o.unsubscribeMissing, plan: plan, mapping: mapping}
	if err := out.begin(); err != nil {
		return err
	}
	if o.dryRun {
		if err := dryRun(out, plan, open, rejects); err != nil {
			return err
		}
		if err := out.end(nil); err != nil {
			return err
		}
		return rejects.finish(nil)
	}
	if list.OptInMode == sendloop.OptInDouble && plan.Adds > 0 {
		a.note("list %d is double opt-in, but subscriber.import subscribes new addresses (%d here) at once, without a confirmation email",
			o.listID, plan.Adds)
	}
	a.note("plan: %d to add, %d to update, %d to unsubscribe, %d unchanged, %d skipped, %d rejected",
		plan.Adds, len(plan.Updates), len(plan.Unsubscribes), plan.Unchanged,
		plan.SkippedUnsubscribed+plan.SkippedSuppressed+plan.SkippedStatus, plan.Rejected)

	res := &syncResult{}
	total := int64(plan.Adds + len(plan.Updates) + len(plan.Unsubscribes))
	prog.start(total, func(done, total int64) string {
		return fmt.Sprintf("applying: %d/%d changes", done, total)
	})
	applyErr := applyAdds(ctx, c, o, plan, open, rejects, res, prog)
	if applyErr == nil {
		applyUpdates(ctx, c, o, plan, rejects, res, prog)
		applyUnsubscribes(ctx, a, unsubscriber, o, plan, res, prog)
		applyErr = context.Cause(ctx)
	}
	prog.finish()
	res.Rejected = rejects.count
	if err := out.end(res); err != nil {
		return err
	}
	return rejects.finish(errors.Join(applyErr, failures(res)))
}

// failures describes the changes that failed without a row to reject.
func failures(res *syncResult) error {
	var errs []error
	if res.UnsubscribeFailed > 0 {
		errs = append(errs, fmt.Errorf("%s failed", plural(res.UnsubscribeFailed, "unsubscription")))
	}
	if res.AddUntraced > 0 {
		errs = append(errs, fmt.Errorf("the service refused %s that could not be traced to a line",
			plural(res.AddUntraced, "row")))
	}
	return errors.Join(errs...)
}

// describeMapping says how the file is read, for the notes.
func describeMapping(path string, r *csvsync.Reader, m *csvsync.Mapping) string {
	sep := map[rune]string{',': "comma", ';': "semicolon", '\t': "tab", '|': "pipe"}[r.Comma]
	if sep == "" {
		sep = strconv.QuoteRune(r.Comma)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %s-separated", path, r.Encoding, sep)
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

// dryRun lists the changes of the plan and writes the rejected rows.
func dryRun(out *syncOutput, plan *csvsync.Plan, open func() (*csvsync.Reader, error), rejects *rejectSink) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	for ev, err := range plan.Events(r) {
		if err != nil {
			return err
		}
		if ev.Kind == csvsync.EventReject {
			rejects.add(ev.Row.Line, ev.Row.Email, ev.Reason)
			continue
		}
		if err := out.add(ev.Row); err != nil {
			return err
		}
	}
	for _, u := range plan.Updates {
		if err := out.update(u); err != nil {
			return err
		}
	}
	for _, u := range plan.Unsubscribes {
		if err := out.unsubscribe(u); err != nil {
			return err
		}
	}
	return nil
}

// importRow is the row sent for an addition: the address and the non-empty fields (an
// empty field of a new subscriber is empty anyway).
func importRow(m *csvsync.Mapping, row csvsync.Row) sendloop.ImportSubscriber {
	sub := sendloop.ImportSubscriber{EmailAddress: row.Email}
	for i, f := range m.Fields {
		if row.Values[i] == "" {
			continue
		}
		if sub.Fields == nil {
			sub.Fields = sendloop.CustomFields{}
		}
		sub.Fields[f.Field.ID] = row.Values[i]
	}
	return sub
}

// applyAdds streams the file once more: rejected rows go to the sink, new addresses to
// ImportAll. Rows the service refused are then traced to their lines by a last pass.
func applyAdds(ctx context.Context, c *sendloop.Client, o *syncOptions, plan *csvsync.Plan,
	open func() (*csvsync.Reader, error), rejects *rejectSink, res *syncResult, prog *progress) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	mapping := plan.Mapping()
	var readErr error
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for ev, err := range plan.Events(r) {
			if err != nil {
				readErr = err
				return
			}
			if ev.Kind == csvsync.EventReject {
				rejects.add(ev.Row.Line, ev.Row.Email, ev.Reason)
				continue
			}
			if !yield(importRow(mapping, ev.Row)) {
				return
			}
		}
	}
	if plan.Adds == 0 {
		for range rows {
		}
		return readErr
	}
	report, err := c.Subscribers.ImportAll(ctx, o.listID, rows, sendloop.ImportOptions{
		BatchSize:   o.batchSize,
		Concurrency: o.concurrency,
		OnProgress:  func(p sendloop.ImportProgress) { prog.set(int64(p.Rows)) },
	})
	if report != nil {
		res.Added, res.AlreadyPresent = report.Imported, report.Duplicate
		res.AddFailed = len(report.Failed) + report.Unattributed
		res.AddUntraced = report.Unattributed
		if report.Unattributed > 0 {
			rejects.a.note("the service refused %d rows that could not be traced to a line", report.Unattributed)
		}
		if len(report.Failed) > 0 {
			if traceErr := traceFailures(plan, open, report.Failed, rejects); traceErr != nil {
				err = errors.Join(err, traceErr)
			}
		}
	}
	return errors.Join(err, readErr)
}

// traceFailures reads the additions again to find the lines of the rows ImportAll reports as
// failed (by their position among the additions), and rejects them.
func traceFailures(plan *csvsync.Plan, open func() (*csvsync.Reader, error), failed []sendloop.FailedRow, rejects *rejectSink) error {
	slices.SortFunc(failed, func(x, y sendloop.FailedRow) int { return x.Index - y.Index })
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	index, next := 0, 0
	for ev, err := range plan.Events(r) {
		if err != nil {
			return err
		}
		if ev.Kind != csvsync.EventAdd {
			continue
		}
		for next < len(failed) && failed[next].Index == index {
			rejects.add(ev.Row.Line, ev.Row.Email, importFailure(failed[next].Err))
			next++
		}
		if next == len(failed) {
			break
		}
		index++
	}
	return nil
}

func importFailure(err error) string {
	if errors.Is(err, sendloop.ErrRowRefused) {
		return "refused by the service"
	}
	return "not imported: " + strings.TrimPrefix(err.Error(), "sendloop: ")
}

// forEach calls fn for every item, n at a time, until ctx ends.
func forEach[T any](ctx context.Context, n int, items []T, fn func(T)) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, item := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(item)
		}()
	}
	wg.Wait()
}

func applyUpdates(ctx context.Context, c *sendloop.Client, o *syncOptions, plan *csvsync.Plan, rejects *rejectSink, res *syncResult, prog *progress) {
	var mu sync.Mutex
	forEach(ctx, o.concurrency, plan.Updates, func(u csvsync.Update) {
		err := c.Subscribers.Update(ctx, o.listID, sendloop.SubscriberUpdateParams{SubscriberID: u.SubscriberID, Fields: sendloop.CustomFields(u.Fields)})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.UpdateFailed++
			rejects.add(u.Line, u.Email, "update failed: "+strings.TrimPrefix(err.Error(), "sendloop: "))
		} else {
			res.Updated++
		}
		prog.add(1)
	})
}

func applyUnsubscribes(ctx context.Context, a *app, lc *legacy.Client, o *syncOptions, plan *csvsync.Plan, res *syncResult, prog *progress) {
	if lc == nil || len(plan.Unsubscribes) == 0 {
		return
	}
	var mu sync.Mutex
	forEach(ctx, o.concurrency, plan.Unsubscribes, func(u csvsync.Unsubscribe) {
		_, err := lc.SubscriberUnsubscribe(ctx, o.listID, legacy.SubscriberUnsubscribeParams{EmailAddress: u.Email, UnsubscriptionIP: unsubscriptionIP})
		if errors.Is(err, legacy.ErrEmailNotInList) {
			err = nil // gone since the plan was made: the list is as wanted
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.UnsubscribeFailed++
			fmt.Fprintf(a.stderr, "sendloop: unsubscribing %s: %v\n", u.Email, err)
		} else {
			res.Unsubscribed++
		}
		prog.add(1)
	})
}

// rejectSink receives the rejected rows: into the --rejects file, or onto stderr.
type rejectSink struct {
	a     *app
	path  string
	f     *os.File
	w     *csv.Writer
	mu    sync.Mutex
	count int
}

func newRejectSink(a *app, path string, csvInfo os.FileInfo) (*rejectSink, error) {
	s := &rejectSink{a: a, path: path}
	if path == "" {
		return s, nil
	}
	if info, err := os.Stat(path); err == nil && os.SameFile(info, csvInfo) {
		return nil, usagef("sync", "--rejects names the CSV file itself")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("sync", "--rejects: %v", err)
	}
	s.f, s.w = f, csv.NewWriter(f)
	_ = s.w.Write([]string{"line", "email", "reason"})
	return s, nil
}

func (s *rejectSink) add(line int, email, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if s.w != nil {
		_ = s.w.Write([]string{strconv.Itoa(line), email, reason})
		return
	}
	if s.count <= maxRejectsShown {
		fmt.Fprintf(s.a.stderr, "sendloop: rejected line %d %s: %s\n", line, strconv.Quote(email), reason)
	}
}

// finish closes the file and returns the run's error: err, or one saying rows were rejected.
func (s *rejectSink) finish(err error) error {
	if s.f != nil {
		s.w.Flush()
		werr := s.w.Error()
		if cerr := s.f.Close(); werr == nil {
			werr = cerr
		}
		s.f = nil
		if werr != nil {
			err = errors.Join(err, fmt.Errorf("writing %s: %w", s.path, werr))
		}
	}
	if s.count == 0 {
		return err
	}
	where := "listed in " + s.path
	if s.path == "" {
		where = "listed above"
		if s.count > maxRejectsShown {
			where = fmt.Sprintf("the first %d listed above; --rejects FILE keeps them all", maxRejectsShown)
		}
	}
	verb := "were"
	if s.count == 1 {
		verb = "was"
	}
	return errors.Join(fmt.Errorf("%s %s rejected (%s)", plural(s.count, "row"), verb, where), err)
}

// abort closes the file if finish was not reached.
func (s *rejectSink) abort() {
	if s.f != nil {
		s.w.Flush()
		s.f.Close()
	}
}

// syncOutput writes the plan and the result on stdout: a table, or one JSON document.
type syncOutput struct {
	a                  *app
	list               *sendloop.List
	csvPath            string
	dryRun             bool
	unsubscribeMissing bool
	plan               *csvsync.Plan
	mapping            *csvsync.Mapping
	changes            int
}

func (s *syncOutput) planJSON() orderedObject {
	p := s.plan
	return orderedObject{
		{"rows", p.Rows}, {"add", p.Adds}, {"update", len(p.Updates)}, {"unsubscribe", len(p.Unsubscribes)},
		{"unchanged", p.Unchanged}, {"skipped_unsubscribed", p.SkippedUnsubscribed},
		{"skipped_suppressed", p.SkippedSuppressed}, {"skipped_status", p.SkippedStatus},
		{"absent", p.Absent}, {"rejected", p.Rejected},
	}
}

// begin writes what is known once the plan is made.
func (s *syncOutput) begin() error {
	w := s.a.stdout
	if s.a.json {
		head := orderedObject{{"list_id", s.list.ListID}, {"name", s.list.Name}}
		_, err := fmt.Fprintf(w, "{\n  \"list\": %s,\n  \"csv\": %s,\n  \"dry_run\": %t,\n  \"plan\": %s",
			indentJSON(head, "  "), jsonString(s.csvPath), s.dryRun, indentJSON(s.planJSON(), "  "))
		if err == nil && s.dryRun {
			_, err = io.WriteString(w, ",\n  \"changes\": [")
		}
		return err
	}
	if !s.dryRun {
		return nil // the table comes with the result
	}
	fmt.Fprintf(w, "Plan for list %d %q from %s (%s). Dry run: nothing was changed.\n\n",
		s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"))
	t := newTable(w, "ACTION", "PLANNED")
	for _, r := range s.summaryRows() {
		t.row(r.name, strconv.Itoa(r.planned))
	}
	return t.flush()
}

type summaryRow struct {
	name            string
	planned         int
	done, failed    int
	applies         bool // done and failed apply
	showWhenNothing bool
}

func (s *syncOutput) summaryRows() []summaryRow {
	p := s.plan
	rows := []summaryRow{
		{name: "add", planned: p.Adds, applies: true, showWhenNothing: true},
		{name: "update", planned: len(p.Updates), applies: true, showWhenNothing: true},
		{name: "unsubscribe", planned: len(p.Unsubscribes), applies: true, showWhenNothing: true},
		{name: "unchanged", planned: p.Unchanged, showWhenNothing: true},
		{name: "skipped (unsubscribed)", planned: p.SkippedUnsubscribed},
		{name: "skipped (suppressed)", planned: p.SkippedSuppressed},
		{name: "skipped (status)", planned: p.SkippedStatus},
	}
	if !s.unsubscribeMissing {
		rows = append(rows, summaryRow{name: "absent (kept)", planned: p.Absent})
	}
	rows = append(rows, summaryRow{name: "rejected", planned: p.Rejected, showWhenNothing: true})
	out := rows[:0]
	for _, r := range rows {
		if r.planned > 0 || r.showWhenNothing {
			out = append(out, r)
		}
	}
	return out
}

func (s *syncOutput) change(text string, v orderedObject) error {
	w := s.a.stdout
	if s.a.json {
		sep := ","
		if s.changes == 0 {
			sep = ""
		}
		s.changes++
		_, err := fmt.Fprintf(w, "%s\n    %s", sep, indentJSON(v, "    "))
		return err
	}
	if s.changes == 0 {
		if _, err := io.WriteString(w, "\nChanges:\n"); err != nil {
			return err
		}
	}
	s.changes++
	_, err := fmt.Fprintf(w, "  %s\n", text)
	return err
}

func (s *syncOutput) add(row csvsync.Row) error {
	fields := orderedObject{}
	var text []string
	for i, f := range s.mapping.Fields {
		if row.Values[i] != "" {
			fields = append(fields, member{f.Header, row.Values[i]})
			text = append(text, fmt.Sprintf("%s=%s", f.Header, strconv.Quote(row.Values[i])))
		}
	}
	return s.change(fmt.Sprintf("%-11s line %-6d %s  %s", "add", row.Line, row.Email, strings.Join(text, " ")),
		orderedObject{{"action", "add"}, {"line", row.Line}, {"email", row.Email}, {"fields", fields}})
}

func (s *syncOutput) update(u csvsync.Update) error {
	var changes []orderedObject
	var text []string
	for _, ch := range u.Changes {
		changes = append(changes, orderedObject{{"field", ch.Header}, {"field_id", ch.Field.ID}, {"from", ch.From}, {"to", ch.To}})
		text = append(text, fmt.Sprintf("%s: %s → %s", ch.Header, strconv.Quote(ch.From), strconv.Quote(ch.To)))
	}
	return s.change(fmt.Sprintf("%-11s line %-6d %s  %s", "update", u.Line, u.Email, strings.Join(text, ", ")),
		orderedObject{{"action", "update"}, {"line", u.Line}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}, {"changes", changes}})
}

func (s *syncOutput) unsubscribe(u csvsync.Unsubscribe) error {
	return s.change(fmt.Sprintf("%-11s %-11s %s", "unsubscribe", "", u.Email),
		orderedObject{{"action", "unsubscribe"}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}})
}

// end writes the result (nil for a dry run) and closes the document.
func (s *syncOutput) end(res *syncResult) error {
	w := s.a.stdout
	if s.a.json {
		var err error
		if s.dryRun {
			closing := "]"
			if s.changes > 0 {
				closing = "\n  ]"
			}
			_, err = io.WriteString(w, closing+"\n}\n")
		} else {
			_, err = fmt.Fprintf(w, ",\n  \"result\": %s\n}\n", indentJSON(res, "  "))
		}
		return err
	}
	if s.dryRun {
		if s.changes == 0 {
			_, err := io.WriteString(w, "\nNo changes.\n")
			return err
		}
		return nil
	}
	fmt.Fprintf(w, "Synced list %d %q with %s (%s).\n\n", s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"))
	t := newTable(w, "ACTION", "PLANNED", "DONE", "FAILED")
	for _, r := range s.summaryRows() {
		switch r.name {
		case "add":
			r.done, r.failed = res.Added+res.AlreadyPresent, res.AddFailed
		case "update":
			r.done, r.failed = res.Updated, res.UpdateFailed
		case "unsubscribe":
			r.done, r.failed = res.Unsubscribed, res.UnsubscribeFailed
		}
		if r.applies {
			t.row(r.name, strconv.Itoa(r.planned), strconv.Itoa(r.done), strconv.Itoa(r.failed))
		} else {
			t.row(r.name, strconv.Itoa(r.planned))
		}
	}
	return t.flush()
}

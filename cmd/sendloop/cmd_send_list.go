package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"net/url"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/personalize"
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
	encoding, delimiter        string
	maxRejects, annotations    string
}

// sendListGCPercent is the garbage collector's GOGC while send --recipients runs: its live
// heap is small and grows slowly (a few tens of bytes per row, for the journal's index and
// the duplicate check), its garbage plentiful (every row's message), so collecting at 25 %
// growth keeps the peak RSS near the live heap for a few more short collections.
const sendListGCPercent = 25

// mergeName is what a column or --var name must look like to be a merge variable.
var mergeName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// placeholder is a {{NAME}} in a --header or --list-unsubscribe value.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}`)

// parseShard reads --shard K/N: K from 1 to N.
func parseShard(s string) (smtp.ShardSpec, error) {
	if s == "" {
		return smtp.ShardSpec{}, nil
	}
	k, n, ok := strings.Cut(s, "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return smtp.ShardSpec{}, usagef("send", "--shard %q: want K/N with K from 1 to N, e.g. 1/3", s)
	}
	return smtp.ShardSpec{Index: ki - 1, Count: ni}, nil
}

func runSendList(ctx context.Context, a *app, o *sendOptions) (runErr error) {
	l := &o.list
	switch {
	case len(o.to) > 0 || len(o.cc) > 0:
		return usagef("send", "--recipients sends to the file's addresses: drop --to and --cc")
	case l.journal == "" && !l.dryRun:
		return usagef("send", "--recipients needs --journal FILE: it records each row sent, so that a rerun sends no row twice")
	case l.concurrency < 1:
		return usagef("send", "--concurrency must be at least 1")
	case l.rate < 0 || math.IsNaN(l.rate) || math.IsInf(l.rate, 0):
		return usagef("send", "--rate must be a number of messages per second, 0 or more")
	case l.messageIDGiven(o):
		return usagef("send", "--message-id cannot be used with --recipients: each message gets its own")
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
	gh, err := newGitHubReport("send", a.env, l.annotations, l.recipients)
	if err != nil {
		return err
	}
	if gh != nil {
		gh.noun = "failed row"
	}
	rep := &listReport{Skipped: map[string]int{}, gh: gh, queuing: !l.dryRun}
	defer rep.close()
	var outcome *budgetOutcome
	defer func() {
		if l.dryRun {
			return
		}
		if err := gh.finish(rep.summary(gh.path(), shard, outcome, runErr)); err != nil {
			a.note("%v", err)
		}
	}()
	vars := map[string]string{}
	for _, v := range l.vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || !mergeName.MatchString(name) {
			return usagef("send", "--var %q: want NAME=VALUE, NAME of letters, digits, _ . or -", v)
		}
		vars[name] = value
	}
	tmpl, err := o.message(a.stdin)
	if err != nil {
		return err
	}
	// The fingerprint covers the template as written (placeholders unrendered), the --var
	// values, and --merge-vars and --custom-args (the same for every row here, though
	// TemplateFingerprint leaves them out as per-recipient): each changes every message.
	fp := *tmpl
	for _, h := range []struct {
		name string
		m    map[string]any
	}{{"X-Merge-Vars", tmpl.Headers.MergeVars}, {"X-Custom-Args", tmpl.Headers.CustomArgs}} {
		if len(h.m) > 0 {
			b, _ := json.Marshal(h.m) // keys sorted: a stable text
			fp.ExtraHeaders = append(fp.ExtraHeaders, smtp.Field{Name: h.name, Value: string(b)})
		}
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fp.ExtraHeaders = append(fp.ExtraHeaders, smtp.Field{Name: "X-Var-" + n, Value: vars[n]})
	}
	binding := smtp.JournalBinding{Fingerprint: smtp.TemplateFingerprint(&fp), Shard: shard}

	read := csvfile.ReadOptions{}
	if read.Encoding, err = csvfile.ParseEncoding(l.encoding); err != nil {
		return usagef("send", "--encoding: %v", err)
	}
	if l.delimiter != "" {
		if read.Comma, err = csvfile.ParseDelimiter(l.delimiter); err != nil {
			return usagef("send", "--delimiter: %v", err)
		}
	}
	r, err := csvfile.Open(l.recipients, read)
	if err != nil {
		return inputf("--recipients: %v", err)
	}
	defer r.Close()
	var maps []csvfile.ColumnMap
	rename := map[string]string{}
	for _, c := range l.columns {
		m, err := csvfile.ParseColumnMap(c)
		if err != nil {
			return usagef("send", "--column: %v", err)
		}
		maps = append(maps, m)
		rename[strings.ToLower(strings.TrimSpace(m.Source))] = m.Target
	}
	addrCol, err := csvfile.AddressColumn(r.Header, maps)
	if err != nil {
		return inputf("%s: %v", l.recipients, err)
	}
	// Every other column is a merge variable: its name must be one a tag can hold. The
	// address is one too, under its column's name when a tag can hold it ({{email}}).
	colName := map[string]string{} // header name (trimmed) → merge-variable name
	nameCol, addrName := "", ""
	for i, h := range r.Header {
		h = strings.TrimSpace(h)
		if i == addrCol {
			if mergeName.MatchString(h) {
				addrName = h
			}
			continue
		}
		name := h
		if t, ok := rename[strings.ToLower(h)]; ok {
			name = t
		}
		if !mergeName.MatchString(name) {
			return inputf("%s: column %q cannot be a merge variable: rename it, e.g. --column '%s=%s'", l.recipients, h, h, suggestName(h))
		}
		colName[h] = name
		if strings.EqualFold(name, "name") {
			nameCol = h
		}
	}
	for _, ph := range o.placeholders() {
		if _, ok := vars[ph]; ok {
			continue
		}
		found := ph == addrName
		for _, n := range colName {
			found = found || n == ph
		}
		if !found {
			return usagef("send", "{{%s}} in --header or --list-unsubscribe names no column of %s and no --var", ph, l.recipients)
		}
	}

	rows := func(yield func(string, *smtp.Message) bool) {
		for rec, err := range r.Named(addrCol) {
			if err != nil {
				rep.stop = err
				return
			}
			rep.Rows++
			if rec.Reject != "" {
				rep.rejectRow(rec.Line, rec.Raw, rec.Reject)
				continue
			}
			values := map[string]string{}
			if addrName != "" {
				values[addrName] = rec.Address
			}
			for h, v := range rec.Columns {
				values[colName[h]] = v
			}
			for n, v := range vars {
				values[n] = v
			}
			m, err := rowMessage(tmpl, o, rec.Address, rec.Columns[nameCol], values)
			if err != nil {
				rep.rejectRow(rec.Line, rec.Raw, cliMessage(err))
				continue
			}
			rep.yielded(rec.Line)
			if !yield(strings.ToLower(rec.Address), m) {
				return
			}
		}
	}
	if l.dryRun {
		return dryRunList(a, rows, shard)
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
	journal, err := smtp.OpenJournal(l.journal, binding)
	var mismatch *smtp.JournalMismatchError
	switch {
	case errors.As(err, &mismatch):
		return inputf("--journal: %v", err)
	case errors.Is(err, smtp.ErrJournalCorrupt):
		return inputf("--journal: %v", err)
	case err != nil:
		return err
	}
	defer journal.Close()
	results, err := relay.SendKeyed(ctx, rows, smtp.SendKeyedOptions{Journal: journal, Shard: shard,
		ResendUnknown: l.resendUnknown, ResendRefused: l.resendRefused})
	if err != nil {
		return inputf("--journal: %v", err)
	}
	prog, endProgress := a.startProgress()
	prog.start(0, func(done, _ int64) string { return fmt.Sprintf(" %s", plural(int(done), "row")) })
	for res := range results {
		prog.add(1)
		rep.add(res)
	}
	rep.flush()
	endProgress()
	if cerr := journal.Close(); cerr != nil && rep.stop == nil {
		rep.stop = cerr
	}
	o2 := budget.check(rep.rejects(), rep.Rows)
	outcome = &o2
	if werr := rep.write(a, relay.Addr(), l.journal, o2); werr != nil {
		return werr
	}
	return rep.err(ctx, a, o2)
}

// messageIDGiven reports --message-id with --recipients.
func (l *listOptions) messageIDGiven(o *sendOptions) bool { return o.messageID != "" }

// suggestName makes a merge-variable name out of a header: spaces and other characters
// become underscores.
func suggestName(h string) string {
	var b strings.Builder
	for _, r := range h {
		if r < 0x80 && mergeName.MatchString(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// placeholders lists the {{NAME}} of --header and --list-unsubscribe.
func (o *sendOptions) placeholders() []string {
	var out []string
	for _, s := range append(append([]string(nil), o.headers...), o.listUnsubscribe...) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// rowMessage is the template addressed to one row, its columns as merge variables for both
// tag styles, its --header and --list-unsubscribe placeholders rendered.
func rowMessage(tmpl *smtp.Message, o *sendOptions, addr, name string, values map[string]string) (*smtp.Message, error) {
	m := *tmpl
	to := addr
	if name = strings.TrimSpace(name); name != "" {
		to = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `" <` + addr + `>`
	}
	m.To = []string{to}
	m.Headers.MergeVars = make(map[string]any, 2*len(values)+len(tmpl.Headers.MergeVars))
	for k, v := range tmpl.Headers.MergeVars {
		m.Headers.MergeVars[k] = v
	}
	for k, v := range values {
		m.Headers.MergeVars[k] = v
		m.Headers.MergeVars["%"+k+"%"] = v
	}
	render := func(s string, inURL bool) string {
		return placeholder.ReplaceAllStringFunc(s, func(p string) string {
			v := values[placeholder.FindStringSubmatch(p)[1]]
			if inURL {
				return strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
			}
			return v
		})
	}
	if len(tmpl.ListUnsubscribe) > 0 {
		m.ListUnsubscribe = make([]string, len(tmpl.ListUnsubscribe))
		for i, u := range tmpl.ListUnsubscribe {
			m.ListUnsubscribe[i] = render(u, true)
		}
	}
	if len(tmpl.ExtraHeaders) > 0 {
		m.ExtraHeaders = make([]smtp.Field, len(tmpl.ExtraHeaders))
		for i, f := range tmpl.ExtraHeaders {
			m.ExtraHeaders[i] = smtp.Field{Name: f.Name, Value: render(f.Value, false)}
		}
	}
	// An address or a rendered header the message cannot hold is refused by SendKeyed, before
	// sending, as an invalid key: a rejected row.
	return &m, nil
}

// dryRunList renders the first rows' messages of this shard and sends nothing.
func dryRunList(a *app, rows iter.Seq2[string, *smtp.Message], shard smtp.ShardSpec) error {
	const show = 3
	var b strings.Builder
	n := 0
	for key, m := range rows {
		if shard.Count > 1 && smtp.Shard(key, shard.Count) != shard.Index {
			continue
		}
		vars := map[string]any{}
		for k, v := range m.Headers.MergeVars {
			vars[k] = v
		}
		subject, _ := personalize.Render(m.Subject, vars)
		text, _ := personalize.Render(m.Text, vars)
		fmt.Fprintf(&b, "To: %s\nSubject: %s\n", strings.Join(m.To, ", "), subject)
		for _, u := range m.ListUnsubscribe {
			fmt.Fprintf(&b, "List-Unsubscribe: <%s>\n", u)
		}
		for _, f := range m.ExtraHeaders {
			fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
		}
		if text != "" {
			fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(text, "\n"))
		}
		b.WriteString("\n")
		if n++; n == show {
			break
		}
	}
	fmt.Fprintf(&b, "Dry run: %s shown, nothing sent.\n", plural(n, "message"))
	_, err := io.WriteString(a.stdout, b.String())
	return err
}

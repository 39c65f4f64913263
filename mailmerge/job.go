package mailmerge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/personalize"
	"github.com/go-sendloop/sendloop/smtp"
)

// Options are what New checks the template with and what enters every message.
type Options struct {
	// Vars are constant merge variables, the same for every row; a variable overrides a
	// column of the same name. They enter the journal's binding.
	Vars map[string]string
	// Defaults are fallbacks for a column's empty value. They enter the binding.
	Defaults map[string]string
	// AllowEmpty names the columns whose empty value is sent as empty instead of
	// rejecting the row (sendloop 0.3.0 sent every row so).
	AllowEmpty []string
	// AllowTags names the tags meant to stay as written: the check does not look them up.
	AllowTags []string
	// KeepEscaping names the tags whose {{NAME}} in the subject or text part is meant to
	// be HTML-escaped: the escaping check (Job.CheckEscaping) passes them. It does not
	// enter the binding.
	KeepEscaping []string
	// NoUnsubscribe says the mail needs no unsubscription: a transactional notice (a
	// receipt, a password reset), not marketing or a newsletter. Without it Send refuses a
	// send to more than one row whose template lacks a List-Unsubscribe https URL holding a
	// tag and ListUnsubscribeOneClick (*UnsubscribeError). It does not enter the binding.
	NoUnsubscribe bool
	// Shard sends only the rows of one shard (smtp.Shard of the lower-cased address); it
	// enters the binding.
	Shard ShardSpec
	// API is the client Send and Check read who may be mailed through, before the first
	// message: the account's global suppression list (one suppression.list.getlist) and,
	// with ListID, the list's suppression entries and its members' status. A send to more
	// than one recipient needs it (ErrNoAPI). A suppressed address is never sent.
	API *sendloop.Client
	// ListID names the list the send is for (a source from OpenList names its own): its
	// suppression entries apply, and a row whose address is not a Subscribed member of it
	// (not in the list, unsubscribed, hard-bounced, confirmation pending) gets the fate
	// job.NotSubscribed with the reason, and is not sent. It needs API. It does not enter
	// the binding.
	ListID int
	// IncludeNotSubscribed sends to the rows ListID would leave out as not subscribed. It
	// is only for mail that is not marketing and that every member must get whatever
	// their status (a change of terms, a security notice): unsubscribed and bounced people
	// get it too. Suppressed addresses are still never sent. It does not enter the binding.
	IncludeNotSubscribed bool
}

// Job is a recipient source and a message template, checked: every tag of the template
// names a column or a variable. A Job may send many times (a rerun with its journal).
type Job struct {
	src        Source
	tmpl       *smtp.Message
	vars       map[string]string
	defaults   map[string]string
	allowEmpty map[string]bool
	allowTag   map[string]bool
	// keepEscaping are the tags the escaping check passes.
	keepEscaping map[string]bool
	// noUnsubscribe: Options.NoUnsubscribe.
	noUnsubscribe bool
	shard         ShardSpec
	// api, listID and includeNotSubscribed are Options'; fromList says the source reads
	// listID itself, its rows carrying their state.
	api                  *sendloop.Client
	listID               int
	includeNotSubscribed bool
	fromList             bool

	names    []string // columns and variables, sorted
	columns  []string // the source's
	nameSet  map[string]bool
	constant map[string]bool // the template's merge variables
	nameCol  string          // the column giving To its display name
	parts    []*part
	interps  []interp
	notes    []Note
	binding  JournalBinding
}

// New checks tmpl against the columns of src and opts and returns the job. It reads no
// row. It fails with a *CheckError when a part of the template does not parse or a tag
// names nothing (see the package documentation), and for a variable, default or shard
// that cannot be used. tmpl is copied: To, Cc, Bcc and MessageID must be empty, for each
// row has its own.
func New(src Source, tmpl *smtp.Message, opts Options) (*Job, error) {
	switch {
	case src == nil || tmpl == nil:
		return nil, fmt.Errorf("mailmerge: a source and a template are needed")
	case len(tmpl.To) > 0 || len(tmpl.Cc) > 0 || len(tmpl.Bcc) > 0:
		return nil, fmt.Errorf("mailmerge: the template has recipients: each row is its own")
	case tmpl.MessageID != "":
		return nil, fmt.Errorf("mailmerge: the template has a Message-ID: each message gets its own")
	case opts.ListID < 0:
		return nil, fmt.Errorf("mailmerge: list ID %d: want a list's ID", opts.ListID)
	case opts.ListID != 0 && opts.API == nil:
		return nil, fmt.Errorf("mailmerge: a send for list %d reads the list's members and suppressions through the API: Options.API is not set", opts.ListID)
	case opts.Shard.Count < 0 || opts.Shard.Count > 0 && (opts.Shard.Index < 0 || opts.Shard.Index >= opts.Shard.Count):
		return nil, fmt.Errorf("mailmerge: shard index %d of %d: want an index from 0 to %d", opts.Shard.Index, opts.Shard.Count, max(opts.Shard.Count-1, 0))
	}
	m := *tmpl
	j := &Job{src: src, tmpl: &m, vars: map[string]string{}, defaults: map[string]string{},
		allowEmpty: set(opts.AllowEmpty), allowTag: set(opts.AllowTags), keepEscaping: set(opts.KeepEscaping), noUnsubscribe: opts.NoUnsubscribe, shard: opts.Shard, nameSet: map[string]bool{}, constant: map[string]bool{},
		api: opts.API, listID: opts.ListID, includeNotSubscribed: opts.IncludeNotSubscribed}
	if ls, ok := src.(*listSource); ok {
		if opts.ListID != 0 && opts.ListID != ls.listID {
			return nil, fmt.Errorf("mailmerge: Options.ListID %d is not the source's list %d", opts.ListID, ls.listID)
		}
		j.listID, j.fromList = ls.listID, true
		if j.api == nil {
			j.api = ls.api
		}
	}
	for k, v := range opts.Vars {
		if !ValidName(k) {
			return nil, fmt.Errorf("mailmerge: variable %q: a name is made of letters, digits, _ . or -", k)
		}
		j.vars[k] = v
	}
	for _, c := range src.Columns() {
		j.nameSet[c] = true
		j.columns = append(j.columns, c)
		if strings.EqualFold(c, "name") && j.nameCol == "" {
			j.nameCol = c
		}
	}
	for k, v := range opts.Defaults {
		if !j.nameSet[k] {
			return nil, fmt.Errorf("mailmerge: default for %q: no column of that name", k)
		}
		j.defaults[k] = v
	}
	for k := range j.vars {
		j.nameSet[k] = true
	}
	// The template's own merge variables are constants too, under either spelling.
	for k := range tmpl.Headers.MergeVars {
		name := strings.TrimSuffix(strings.TrimPrefix(k, "%"), "%")
		j.nameSet[name] = true
		j.constant[name] = true
	}
	for k := range j.nameSet {
		j.names = append(j.names, k)
	}
	sort.Strings(j.names)
	if err := j.check(); err != nil {
		return nil, err
	}
	j.binding = JournalBinding{Fingerprint: TemplateFingerprint(j.fingerprinted()), Shard: opts.Shard}
	return j, nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// fingerprinted is the template as the binding covers it: the template as written, then
// X-Merge-Vars and X-Custom-Args (the same for every row here, though TemplateFingerprint
// leaves them out as per-recipient), the sorted X-Var-NAME constants and the sorted
// X-Default-NAME fallbacks as pseudo-headers. Without defaults this is sendloop 0.3.0's
// composition, so its journals resume.
func (j *Job) fingerprinted() *smtp.Message {
	fp := *j.tmpl
	fp.ExtraHeaders = append([]smtp.Field(nil), j.tmpl.ExtraHeaders...)
	for _, h := range []struct {
		name string
		m    map[string]any
	}{{"X-Merge-Vars", j.tmpl.Headers.MergeVars}, {"X-Custom-Args", j.tmpl.Headers.CustomArgs}} {
		if len(h.m) > 0 {
			b, _ := json.Marshal(h.m) // keys sorted: a stable text
			fp.ExtraHeaders = append(fp.ExtraHeaders, smtp.Field{Name: h.name, Value: string(b)})
		}
	}
	for _, n := range sortedKeys(j.vars) {
		fp.ExtraHeaders = append(fp.ExtraHeaders, smtp.Field{Name: "X-Var-" + n, Value: j.vars[n]})
	}
	for _, n := range sortedKeys(j.defaults) {
		fp.ExtraHeaders = append(fp.ExtraHeaders, smtp.Field{Name: "X-Default-" + n, Value: j.defaults[n]})
	}
	return &fp
}

// ListID returns the list the send is for: Options.ListID, or the list an OpenList source
// reads; 0 for none.
func (j *Job) ListID() int { return j.listID }

// Binding returns the journal binding of the job's messages and shard.
func (j *Job) Binding() JournalBinding { return j.binding }

// Notes returns the %…% candidates the check left as written, in the template's order.
func (j *Job) Notes() []Note { return append([]Note(nil), j.notes...) }

// Names returns the columns and variables a tag may name, sorted.
func (j *Job) Names() []string { return append([]string(nil), j.names...) }

// EmptyTags returns, for each tag an empty value would reject a row for, the tag as
// written and where it stands ("{{FIRST}} (subject)"), in the template's order.
func (j *Job) EmptyTags() []string {
	var out []string
	for _, in := range j.interps {
		if !j.allowEmpty[in.name] {
			out = append(out, fmt.Sprintf("%s (%s)", in.tag, in.where))
		}
	}
	return out
}

// message composes the message of a row: its values (defaults for the empty ones, the
// variables over the columns), To with the row's display name, the merge variables under
// both NAME and %NAME%, the extra headers and List-Unsubscribe rendered. reject, when not
// empty, says why the row cannot be sent.
func (j *Job) message(row Row) (msg *smtp.Message, reject string) {
	values := make(map[string]string, len(row.Values)+len(j.vars))
	for k, v := range row.Values {
		if v == "" {
			if d, ok := j.defaults[k]; ok {
				v = d
			}
		}
		values[k] = v
	}
	for _, in := range j.interps {
		if values[in.name] == "" && !j.allowEmpty[in.name] {
			return nil, fmt.Sprintf(emptyPrefix+"%s (%s)", in.tag, in.where)
		}
	}
	for k, v := range j.vars {
		values[k] = v
	}
	m := *j.tmpl
	to := row.Address
	if name := strings.TrimSpace(row.Values[j.nameCol]); j.nameCol != "" && name != "" {
		to = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `" <` + row.Address + `>`
	}
	m.To = []string{to}
	m.Headers.MergeVars = make(map[string]any, 2*len(values)+len(j.tmpl.Headers.MergeVars))
	for k, v := range j.tmpl.Headers.MergeVars {
		m.Headers.MergeVars[k] = v
	}
	for k, v := range values {
		m.Headers.MergeVars[k] = v
		m.Headers.MergeVars["%"+k+"%"] = v
	}
	hi, ui := 0, 0
	for _, p := range j.parts {
		switch p.kind {
		case partHeader:
			if hi == 0 {
				m.ExtraHeaders = append([]smtp.Field(nil), j.tmpl.ExtraHeaders...)
			}
			for m.ExtraHeaders[hi].Value != p.src {
				hi++
			}
			m.ExtraHeaders[hi].Value = p.render(values)
			hi++
		case partURL:
			if ui == 0 {
				m.ListUnsubscribe = append([]string(nil), j.tmpl.ListUnsubscribe...)
			}
			for m.ListUnsubscribe[ui] != p.src {
				ui++
			}
			m.ListUnsubscribe[ui] = p.render(values)
			if why := badUnsubscribeURL(m.ListUnsubscribe[ui]); why != "" {
				return nil, why
			}
			ui++
		}
	}
	// An address or a rendered header the message cannot hold is refused by sendKeyed,
	// before sending, as an invalid key: a rejected row.
	return &m, ""
}

// render substitutes the tags of a header or List-Unsubscribe part: a value as written,
// URL-encoded in a URL; a %NAME% of no value stays as written.
func (p *part) render(values map[string]string) string {
	if len(p.tags) == 0 {
		return p.src
	}
	var b strings.Builder
	last := 0
	for _, t := range p.tags {
		if t.Offset < last {
			continue // an overlapping %…% candidate
		}
		v, ok := values[t.Name]
		switch t.Kind {
		case personalize.TagEscaped, personalize.TagRaw:
		case personalize.TagMerge:
			if !ok {
				continue
			}
		default:
			continue
		}
		b.WriteString(p.src[last:t.Offset])
		if p.kind == partURL {
			v = strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
		}
		b.WriteString(v)
		last = t.End
	}
	b.WriteString(p.src[last:])
	return b.String()
}

// emptyPrefix starts the reason of a row rejected for an empty value.
const emptyPrefix = "empty value for "

package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/job"
)

// At home in CI: the pieces that sync (and any command that reports rows of a file) share
// to report to GitHub Actions and to keep a job green within its reject budget.
//
// A command that rejects rows of a file:
//   - registers --annotations with annotationsFlag and --max-rejects with budgetFlag;
//   - opens its report with newGitHubReport (nil when not on Actions: every method of a nil
//     *githubReport does nothing);
//   - calls reject for every rejected or refused row, with the row's first physical line;
//   - at the end, checks its rejects against the budget (rejectBudget.check; send renders
//     the verdict mailmerge's Send returned instead, sendBudgetOutcome) and calls finish
//     with a summary of its plan and result.

// maxAnnotations is how many warnings GitHub shows for a step: the rest are counted in one
// notice.
const maxAnnotations = 10

// Values of --annotations.
const (
	annotationsAuto   = "auto"   // github when GITHUB_ACTIONS=true, else none
	annotationsGitHub = "github" // workflow commands on stderr, and the step summary
	annotationsNone   = "none"
)

// annotationsFlag registers --annotations on fs.
func annotationsFlag(fs interface {
	StringVar(p *string, name, value, usage string)
}, p *string) {
	fs.StringVar(p, "annotations", annotationsAuto, "report rejected rows to CI as `MODE`: github (workflow annotations and a step summary), none, or auto (github when GITHUB_ACTIONS=true)")
}

// budgetFlag registers --max-rejects on fs.
func budgetFlag(fs interface {
	StringVar(p *string, name, value, usage string)
}, p *string) {
	fs.StringVar(p, "max-rejects", "0", "exit 0 when at most `N` rows, or N% of the file's rows, are rejected or refused (they are still reported)")
}

// unknownBudgetFlag registers --max-unknown on fs.
func unknownBudgetFlag(fs interface {
	StringVar(p *string, name, value, usage string)
}, p *string) {
	fs.StringVar(p, "max-unknown", "0", "exit 0 when at most `N` rows, or N% of the file's rows, end with an unknown outcome (they are still reported; the same run again settles them)")
}

// rejectBudget is --max-rejects: how many rejected or refused rows still let a run succeed;
// or --max-unknown: how many rows of unknown outcome.
type rejectBudget struct {
	limit job.Budget
	flag  string // flagMaxRejects or flagMaxUnknown
}

// The budget flags.
const (
	flagMaxRejects = "--max-rejects"
	flagMaxUnknown = "--max-unknown"
)

// parseRejectBudget reads --max-rejects: N rows, or N% of the file's data rows.
func parseRejectBudget(cmd, s string) (rejectBudget, error) {
	return parseBudget(cmd, flagMaxRejects, s)
}

// parseUnknownBudget reads --max-unknown: N rows, or N% of the file's data rows.
func parseUnknownBudget(cmd, s string) (rejectBudget, error) {
	return parseBudget(cmd, flagMaxUnknown, s)
}

func parseBudget(cmd, flag, s string) (rejectBudget, error) {
	l, err := job.ParseBudget(s)
	if err != nil {
		return rejectBudget{}, usagef(cmd, "%s %q: want N or N%% (0%% to 100%%)", flag, s)
	}
	return rejectBudget{limit: l, flag: flag}, nil
}

// budgetOutcome is a run's rejects (or rows of unknown outcome) measured against its
// budget: the JSON report's reject_budget (unknown_budget).
type budgetOutcome struct {
	Max     string // the budget as given: "5" or "5%"
	Allowed int    // the rows it allows for this file, -1 for any number
	Rejects int    // the rows measured
	Held    bool
	flag    string // the budget's flag; "" is --max-rejects
}

// flagName is the flag the budget was given with.
func (o budgetOutcome) flagName() string {
	if o.flag == "" {
		return flagMaxRejects
	}
	return o.flag
}

// check measures rejects against the budget for a file of rows data rows. N% allows N% of
// the rows rounded up; 100% allows every row.
// The zero budget allows none.
func (b rejectBudget) check(rejects, rows int) budgetOutcome {
	l := b.limit
	allowed := l.Allowed(rows)
	flag := b.flag
	if flag == flagMaxRejects {
		flag = ""
	}
	return budgetOutcome{Max: l.String(), Allowed: allowed, Rejects: rejects, Held: allowed < 0 || rejects <= allowed, flag: flag}
}

// json is the report's reject_budget member (or unknown_budget, which counts "unknown").
func (o budgetOutcome) json() orderedObject {
	count := "rejects"
	if o.flagName() == flagMaxUnknown {
		count = "unknown"
	}
	return orderedObject{{"max", o.Max}, {"allowed", o.Allowed}, {count, o.Rejects}, {"held", o.Held}}
}

// given reports a budget that allows rejects: the default 0 is not worth a mention.
func (o budgetOutcome) given() bool { return o.Allowed != 0 }

// describe says how the rejects fared, for people: "within --max-rejects 5%".
func (o budgetOutcome) describe() string {
	if o.Held {
		return "within " + o.flagName() + " " + o.Max
	}
	if o.Max == strconv.Itoa(o.Allowed) {
		return "over " + o.flagName() + " " + o.Max
	}
	return fmt.Sprintf("over %s %s, which allows %d", o.flagName(), o.Max, o.Allowed)
}

// githubReport reports a run to GitHub Actions: a warning annotation per rejected row (the
// first maxAnnotations, then a notice with the count of the rest), and a Markdown summary
// appended to $GITHUB_STEP_SUMMARY. A nil *githubReport reports nothing.
type githubReport struct {
	w           io.Writer // where the workflow commands go: stderr, so that --json's stdout stays one document
	file        string    // the file property of the annotations
	summaryPath string
	rejects     int // rows warned of that count against the reject budget
	unknown     int // rows of unknown outcome warned of
	reasons     map[string]int
	noun        string // what the rows reported are, in the notice and the summary: "rejected row" unless set
}

// maxReasonKinds bounds the distinct reasons counted for the summary; the rest are "other".
const maxReasonKinds = 1000

// newGitHubReport returns the report for mode (--annotations) and the environment, or nil
// when it is not on; path is the file whose rows are reported.
func newGitHubReport(cmd string, e *env, mode, path string) (*githubReport, error) {
	switch mode {
	case annotationsNone:
		return nil, nil
	case annotationsAuto:
		if e.getenv("GITHUB_ACTIONS") != "true" {
			return nil, nil
		}
	case annotationsGitHub:
	default:
		return nil, usagef(cmd, "--annotations %q: want auto, github or none", mode)
	}
	return &githubReport{w: e.stderr, file: workspacePath(path, e.getenv("GITHUB_WORKSPACE")),
		summaryPath: e.getenv("GITHUB_STEP_SUMMARY"), reasons: map[string]int{}}, nil
}

// workspacePath is path relative to the workspace, with slashes, when the file is inside
// it (GitHub links an annotation to the repository's file by that path), also through
// symbolic links; else path as given.
func workspacePath(path, workspace string) string {
	if workspace == "" {
		return path
	}
	abs, err1 := filepath.Abs(path)
	ws, err2 := filepath.Abs(workspace)
	if err1 != nil || err2 != nil {
		return path
	}
	rel, ok := relInside(ws, abs)
	if !ok {
		// A link from outside into the workspace, or a workspace named through a link:
		// compare where they lead.
		realAbs, err1 := filepath.EvalSymlinks(abs)
		realWS, err2 := filepath.EvalSymlinks(ws)
		if err1 != nil || err2 != nil {
			return path
		}
		if rel, ok = relInside(realWS, realAbs); !ok {
			return path
		}
	}
	return filepath.ToSlash(rel)
}

// relInside returns abs relative to dir, when it is inside it.
func relInside(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// path is the file as the annotations name it ("" for a nil report).
func (g *githubReport) path() string {
	if g == nil {
		return ""
	}
	return g.file
}

// reject reports a rejected or refused row that starts on line of the file.
func (g *githubReport) reject(line int, address, reason string) {
	g.warn(line, "rejected", address, reason)
}

// warn reports a row that starts on line of the file and counts against the reject budget:
// verb says what happened to it ("rejected", "refused").
func (g *githubReport) warn(line int, verb, address, reason string) {
	if g == nil {
		return
	}
	g.rejects++
	key := reasonKind(reason)
	if _, ok := g.reasons[key]; ok || len(g.reasons) < maxReasonKinds {
		g.reasons[key]++
	} else {
		g.reasons["other reasons"]++
	}
	g.annotate(line, verb, address, reason)
}

// unknownOutcome reports a row of unknown outcome that starts on line: annotated as the
// rejects are, but counted apart, since the same run again settles it.
func (g *githubReport) unknownOutcome(line int, address, reason string) {
	if g == nil {
		return
	}
	g.unknown++
	g.annotate(line, "outcome unknown for", address, reason)
}

// annotate writes a row's warning, while GitHub shows them.
func (g *githubReport) annotate(line int, verb, address, reason string) {
	if g.rejects+g.unknown > maxAnnotations {
		return
	}
	fmt.Fprintf(g.w, "::warning file=%s,line=%d::%s\n", escapeProperty(g.file), line,
		escapeData(fmt.Sprintf("%s %q: %s", verb, address, reason)))
}

// rowNoun is what the rows reported are: "rejected row" unless noun says otherwise.
func (g *githubReport) rowNoun() string {
	if g.noun == "" {
		return "rejected row"
	}
	return g.noun
}

// lineNumbers matches the line numbers in a reason, so that "duplicate of line 2" and
// "duplicate of line 9" count as one reason, and so do the spans of malformed records
// ("lines 8 to 9", as listsync's reader says it).
var lineNumbers = regexp.MustCompile(`\b(lines?) \d+((-| to )\d+)?`)

// reasonKind is the reason a rejection counts under in the summary: without line numbers,
// at most 200 bytes.
func reasonKind(reason string) string {
	s := lineNumbers.ReplaceAllString(reason, "$1 N")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// githubSummary is what a command tells the step summary, beside the rejection reasons.
type githubSummary struct {
	title  string     // the heading, e.g. `sendloop sync: list 1 "Demo" from members.csv`
	table  [][]string // the counts: a header row, then rows; the first column is text, the others numbers
	result string     // one sentence: what happened, and the exit code's reason
}

// maxSummaryReasons is how many rejection reasons the summary lists.
const maxSummaryReasons = 5

// finish writes the notice for the rejected rows beyond the first maxAnnotations and
// appends the summary to $GITHUB_STEP_SUMMARY, if set.
func (g *githubReport) finish(s githubSummary) error {
	if g == nil {
		return nil
	}
	if rest := g.rejects + g.unknown - maxAnnotations; rest > 0 {
		noun := g.rowNoun()
		if g.unknown > 0 {
			noun = "row" // rejected and of unknown outcome
		}
		fmt.Fprintf(g.w, "::notice::%s\n", escapeData(fmt.Sprintf("%s not annotated (GitHub shows %d per step); the step summary counts them by reason",
			plural(rest, "more "+noun), maxAnnotations)))
	}
	if g.summaryPath == "" {
		return nil
	}
	f, err := os.OpenFile(g.summaryPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	_, werr := io.WriteString(f, g.markdown(s))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", werr)
	}
	return nil
}

// markdown is the summary: bounded (a heading, a table of a few rows, at most
// maxSummaryReasons reasons of at most 200 bytes), a few KiB at most.
func (g *githubReport) markdown(s githubSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", mdText(s.title))
	for i, row := range s.table {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdText(c)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			align := []string{"---"}
			for range row[1:] {
				align = append(align, "---:")
			}
			fmt.Fprintf(&b, "|%s|\n", strings.Join(align, "|"))
		}
	}
	if len(s.table) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s\n", mdText(s.result))
	if g.rejects > 0 {
		type kind struct {
			reason string
			rows   int
		}
		var kinds []kind
		for r, n := range g.reasons {
			kinds = append(kinds, kind{r, n})
		}
		slices.SortFunc(kinds, func(a, b kind) int {
			return cmp.Or(cmp.Compare(b.rows, a.rows), strings.Compare(a.reason, b.reason))
		})
		fmt.Fprintf(&b, "\n%s by reason:\n\n| reason | rows |\n|---|---:|\n", plural(g.rejects, g.rowNoun()))
		for i, k := range kinds {
			if i == maxSummaryReasons {
				rest := 0
				for _, k := range kinds[i:] {
					rest += k.rows
				}
				fmt.Fprintf(&b, "| %s | %d |\n", mdText(plural(len(kinds)-i, "other reason")), rest)
				break
			}
			fmt.Fprintf(&b, "| %s | %d |\n", mdText(k.reason), k.rows)
		}
	}
	if g.unknown > 0 {
		fmt.Fprintf(&b, "\n%s of unknown outcome: the same run again settles them.\n", plural(g.unknown, "row"))
	}
	b.WriteString("\n")
	return b.String()
}

// mdText makes s safe in a Markdown table cell or line: no line breaks; pipes, backslashes,
// backticks, asterisks, brackets and angle brackets escaped (GitHub's Markdown leaves an
// underscore inside a word alone).
func mdText(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*[]<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

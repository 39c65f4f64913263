package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
)

// syncOutput writes the plan and the result on stdout: a table, or one JSON document.
type syncOutput struct {
	a                  *app
	list               *sendloop.List
	csvPath            string
	dryRun             bool
	unsubscribeMissing bool
	plan               *listsync.Plan
	mapping            *listsync.Mapping
	rejects            *rejectSink
	state              bool           // the run has a state (--state): say whether it used it
	changes            int            // the changes listed
	shown              map[string]int // the changes of each kind printed as text

	// --plan: the CSV of every change (Plan.WriteCSV); planOnly when it goes to stdout,
	// instead of the text.
	planW    io.Writer
	planFile *os.File
	planPath string
	planOnly bool

	budget         rejectBudget
	outcome        *budgetOutcome // the rejects measured against the budget, once known
	unknownOutcome *budgetOutcome // the rows of unknown outcome against --max-unknown, once applied
}

func (s *syncOutput) planJSON() orderedObject {
	p := s.plan
	return orderedObject{
		{"rows", p.Rows}, {"add", p.Adds}, {"update", p.Updates}, {"unsubscribe", p.Unsubscribes},
		{"unchanged", p.Unchanged}, {"skipped_unsubscribed", p.SkippedUnsubscribed},
		{"skipped_suppressed", p.SkippedSuppressed}, {"skipped_status", p.SkippedStatus},
		{"absent", p.Absent}, {"kept_not_owned", p.KeptNotOwned}, {"unsubscribe_rule", p.UnsubscribeRule},
		{"rejected", p.Rejected},
	}
}

// begin writes what is known once the plan is made.
func (s *syncOutput) begin() error {
	w := s.a.stdout
	if s.a.json {
		head := orderedObject{{"list_id", s.list.ListID}, {"name", s.list.Name}}
		_, err := fmt.Fprintf(w, "{\n  \"list\": %s,\n  \"csv\": %s,\n  \"dry_run\": %t,\n  \"plan\": %s",
			indentJSON(head, "  "), jsonString(s.csvPath), s.dryRun, indentJSON(s.planJSON(), "  "))
		if err == nil && s.state {
			st := s.plan.State
			doc := orderedObject{{"used", st.Used}, {"reason", st.Reason}, {"drift", st.Drift}}
			_, err = fmt.Fprintf(w, ",\n  \"state\": %s", indentJSON(doc, "  "))
		}
		if err == nil && s.dryRun {
			_, err = io.WriteString(w, ",\n  \"changes\": [")
		}
		return err
	}
	if !s.dryRun {
		return nil // the table comes with the result
	}
	if s.planOnly {
		s.a.note("dry run, nothing was changed; %s", s.planCounts())
		return nil
	}
	// One line of counts: a dry run is read on a CI log, where a table of one column is
	// seven lines of nothing much (the applied run's table has its DONE and FAILED columns).
	rows := s.summaryRows()
	counts := make([]string, len(rows))
	for i, r := range rows {
		counts[i] = strconv.Itoa(r.planned) + " " + r.name
	}
	_, err := fmt.Fprintf(w, "Plan for list %d %q from %s (%s). Dry run: nothing was changed.\nPlanned: %s.\n%s",
		s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"), strings.Join(counts, ", "), s.stateLine())
	return err
}

// stateLine says whether the plan was made from the state, and why not; "" without one.
func (s *syncOutput) stateLine() string {
	if !s.state {
		return ""
	}
	st := s.plan.State
	if st.Used {
		return fmt.Sprintf("State used: the members were not read (drift %d).\n", st.Drift)
	}
	return fmt.Sprintf("State not used: %s; the members were read (a full run).\n", st.Reason)
}

// planCounts says what the plan would do, in one line.
func (s *syncOutput) planCounts() string {
	p := s.plan
	return fmt.Sprintf("plan: %d to add, %d to update, %d to unsubscribe, %d unchanged, %d skipped, %d rejected",
		p.Adds, p.Updates, p.Unsubscribes, p.Unchanged, p.SkippedUnsubscribed+p.SkippedSuppressed+p.SkippedStatus, p.Rejected)
}

type summaryRow struct {
	name            string
	planned         int
	applies         bool // done and failed apply
	showWhenNothing bool
}

func (s *syncOutput) summaryRows() []summaryRow {
	p := s.plan
	rows := []summaryRow{
		{name: "add", planned: p.Adds, applies: true, showWhenNothing: true},
		{name: "update", planned: p.Updates, applies: true, showWhenNothing: true},
		{name: "unsubscribe", planned: p.Unsubscribes, applies: true, showWhenNothing: true},
		{name: "unchanged", planned: p.Unchanged, showWhenNothing: true},
		{name: "skipped (unsubscribed)", planned: p.SkippedUnsubscribed},
		{name: "skipped (suppressed)", planned: p.SkippedSuppressed},
		{name: "skipped (status)", planned: p.SkippedStatus},
	}
	if !s.unsubscribeMissing {
		rows = append(rows, summaryRow{name: "absent (kept)", planned: p.Absent})
	} else {
		rows = append(rows, summaryRow{name: "kept: not the sync's", planned: p.KeptNotOwned})
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

// change lists a change of kind: in the document, or as text (the first maxChangesShown of
// each kind).
func (s *syncOutput) change(kind, text string, v orderedObject) error {
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
	if s.planOnly || s.shown[kind] >= maxChangesShown {
		s.changes++
		return nil
	}
	if s.shown == nil {
		s.shown = map[string]int{}
	}
	if len(s.shown) == 0 {
		if _, err := io.WriteString(w, "\nChanges:\n"); err != nil {
			return err
		}
	}
	s.changes++
	s.shown[kind]++
	_, err := fmt.Fprintf(w, "  %s\n", text)
	return err
}

func (s *syncOutput) add(row listsync.MappedRow) error {
	fields := orderedObject{}
	var text []string
	for i, f := range s.mapping.Fields {
		if row.Values[i] != "" {
			fields = append(fields, member{f.Header, row.Values[i]})
			text = append(text, fmt.Sprintf("%s=%s", f.Header, strconv.Quote(row.Values[i])))
		}
	}
	return s.change(changeAdd, fmt.Sprintf("%-11s line %-6d %s  %s", "add", row.Line, row.Email, strings.Join(text, " ")),
		orderedObject{{"action", "add"}, {"line", row.Line}, {"email", row.Email}, {"fields", fields}})
}

func (s *syncOutput) update(u listsync.Update) error {
	var changes []orderedObject
	var text []string
	for _, ch := range u.Changes {
		changes = append(changes, orderedObject{{"field", ch.Header}, {"field_id", ch.Field.ID}, {"from", ch.From}, {"to", ch.To}})
		text = append(text, fmt.Sprintf("%s: %s → %s", ch.Header, strconv.Quote(ch.From), strconv.Quote(ch.To)))
	}
	return s.change(changeUpdate, fmt.Sprintf("%-11s line %-6d %s  %s", "update", u.Line, u.Email, strings.Join(text, ", ")),
		orderedObject{{"action", "update"}, {"line", u.Line}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}, {"changes", changes}})
}

func (s *syncOutput) unsubscribe(u listsync.Unsubscribe) error {
	return s.change(changeUnsubscribe, fmt.Sprintf("%-11s %-11s %s", "unsubscribe", "", u.Email),
		orderedObject{{"action", "unsubscribe"}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}})
}

// rejectedRowsJSON writes the document's rejected_rows member.
func (s *syncOutput) rejectedRowsJSON() error {
	w := s.a.stdout
	if _, err := io.WriteString(w, ",\n  \"rejected_rows\": ["); err != nil {
		return err
	}
	n := 0
	err := s.rejects.each(func(line int, address, reason, outcome string) error {
		sep := ","
		if n == 0 {
			sep = ""
		}
		n++
		row := orderedObject{{"line", line}, {"address", address}, {"reason", reason}, {"outcome", outcome}}
		_, err := fmt.Fprintf(w, "%s\n    %s", sep, indentJSON(row, "    "))
		return err
	})
	if err != nil {
		return err
	}
	closing := "]"
	if n > 0 {
		closing = "\n  ]"
	}
	_, err = io.WriteString(w, closing)
	return err
}

// budgetJSON writes the document's reject_budget member, once the rejects are measured,
// and its unknown_budget member, once the plan is applied.
func (s *syncOutput) budgetJSON() error {
	if s.outcome == nil {
		return nil
	}
	_, err := fmt.Fprintf(s.a.stdout, ",\n  \"reject_budget\": %s", indentJSON(s.outcome.json(), "  "))
	if err == nil && s.unknownOutcome != nil {
		_, err = fmt.Fprintf(s.a.stdout, ",\n  \"unknown_budget\": %s", indentJSON(s.unknownOutcome.json(), "  "))
	}
	return err
}

// endDryRun closes a dry run's output; stopped, when not nil, says the listing stopped
// before its end: the document says so, with the changes listed and planned.
func (s *syncOutput) endDryRun(stopped *dryRunStop) error {
	w := s.a.stdout
	planned := s.plan.Adds + s.plan.Updates + s.plan.Unsubscribes
	if s.a.json {
		closing := "]"
		if s.changes > 0 {
			closing = "\n  ]"
		}
		_, err := io.WriteString(w, closing)
		if err == nil && stopped != nil {
			_, err = fmt.Fprintf(w, ",\n  \"interrupted\": %t,\n  \"changes_listed\": %d,\n  \"changes_planned\": %d",
				stopped.interrupted, s.changes, planned)
		}
		if err == nil {
			err = s.rejectedRowsJSON()
		}
		if err == nil {
			err = s.budgetJSON()
		}
		if err == nil {
			_, err = io.WriteString(w, "\n}\n")
		}
		return err
	}
	var err error
	switch {
	case s.planOnly:
	case stopped != nil && stopped.interrupted:
		_, err = fmt.Fprintf(w, "\nInterrupted: %d of the %s listed. Dry run: nothing was changed.\n", s.changes, plural(planned, "planned change"))
	case stopped != nil:
		_, err = fmt.Fprintf(w, "\nStopped: %d of the %s listed. Dry run: nothing was changed.\n", s.changes, plural(planned, "planned change"))
	case s.changes == 0:
		_, err = io.WriteString(w, "\nNo changes.\n")
	}
	return err
}

// end closes the output of a sync that applied its plan, with its result.
func (s *syncOutput) end(res *syncResult) error {
	w := s.a.stdout
	if s.a.json {
		_, err := fmt.Fprintf(w, ",\n  \"result\": %s", indentJSON(res, "  "))
		if err == nil {
			err = s.rejectedRowsJSON()
		}
		if err == nil {
			err = s.budgetJSON()
		}
		if err == nil {
			_, err = io.WriteString(w, "\n}\n")
		}
		return err
	}
	cols := []string{"ACTION", "PLANNED", "DONE", "FAILED"}
	unknown := res.RowsUnknown+res.UnsubscribeUnknown > 0
	if unknown {
		cols = append(cols, "UNKNOWN")
	}
	// A failure that stopped the run (the error says which) leaves changes not attempted too.
	stopped := res.Interrupted || res.RowsNotAttempted > 0 || res.ChangesNotAttempted > 0
	switch {
	case stopped:
		how := "Interrupted"
		if !res.Interrupted {
			how = "Stopped"
		}
		fmt.Fprintf(w, "%s: list %d %q partly synced with %s (%s: %d done, %d failed, %d of unknown outcome, %d not attempted; %s not attempted in all).\nRun the same sync again to finish.\n\n",
			how, s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"), res.RowsDone, res.RowsFailed, res.RowsUnknown, res.RowsNotAttempted,
			plural(res.ChangesNotAttempted, "change"))
		cols = append(cols, "NOT ATTEMPTED")
	case unknown:
		fmt.Fprintf(w, "Synced list %d %q with %s (%s), but %s of unknown outcome: they may have been made.\nRun the same sync again to settle them.\n\n",
			s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"), plural(res.AddUnknown+res.UpdateUnknown+res.UnsubscribeUnknown, "change"))
	default:
		fmt.Fprintf(w, "Synced list %d %q with %s (%s).\n\n", s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"))
	}
	if line := s.stateLine(); line != "" {
		fmt.Fprintf(w, "%s\n", line)
	}
	t := newTable(w, cols...)
	for _, r := range s.summaryRows() {
		c := resultCounts(res, r.name)
		cells := []string{r.name, strconv.Itoa(r.planned)}
		if r.applies {
			cells = append(cells, strconv.Itoa(c.done), strconv.Itoa(c.failed))
			if unknown {
				cells = append(cells, strconv.Itoa(c.unknown))
			}
			if stopped {
				cells = append(cells, strconv.Itoa(c.notAttempted))
			}
		}
		t.row(cells...)
	}
	return t.flush()
}

// syncSummary is the GitHub step summary of a sync: the plan's counts (and the result's,
// once applied) when the plan was made, and how the run ended.
func syncSummary(o *syncOptions, path string, out *syncOutput, res *syncResult, runErr error) githubSummary {
	s := githubSummary{title: fmt.Sprintf("sendloop sync: list %d from %s", o.listID, path)}
	if out != nil {
		s.title = fmt.Sprintf("sendloop sync: list %d %q from %s (%s)", out.list.ListID, out.list.Name, path, plural(out.plan.Rows, "row"))
		if out.dryRun {
			s.title += ", dry run"
		}
		header := []string{"action", "planned"}
		unknown := res != nil && res.RowsUnknown+res.UnsubscribeUnknown > 0
		if res != nil {
			header = append(header, "done", "failed")
		}
		if unknown {
			header = append(header, "unknown")
		}
		s.table = append(s.table, header)
		for _, r := range out.summaryRows() {
			row := []string{r.name, strconv.Itoa(r.planned)}
			if res != nil && r.applies {
				c := resultCounts(res, r.name)
				row = append(row, strconv.Itoa(c.done), strconv.Itoa(c.failed))
				if unknown {
					row = append(row, strconv.Itoa(c.unknown))
				}
			} else if res != nil {
				row = append(row, "", "")
				if unknown {
					row = append(row, "")
				}
			}
			s.table = append(s.table, row)
		}
	}
	var result []string
	if out != nil {
		if line := out.stateLine(); line != "" {
			result = append(result, strings.TrimSpace(line))
		}
	}
	switch {
	case out != nil && out.dryRun:
		result = append(result, "Dry run: nothing was changed.")
	case res != nil && res.Interrupted:
		result = append(result, "Interrupted: run the same sync again to finish.")
	case res != nil && res.RowsNotAttempted+res.ChangesNotAttempted > 0:
		result = append(result, fmt.Sprintf("Stopped: %s not attempted; run the same sync again to finish.", plural(res.ChangesNotAttempted, "change")))
	case res != nil:
		result = append(result, "Synced.")
	}
	if res != nil && res.RowsUnknown+res.UnsubscribeUnknown > 0 {
		result = append(result, fmt.Sprintf("%s of unknown outcome: run the same sync again to settle them.",
			plural(res.AddUnknown+res.UpdateUnknown+res.UnsubscribeUnknown, "change")))
	}
	if o := out.budgetOutcome(); o != nil && o.Rejects > 0 && o.given() {
		result = append(result, fmt.Sprintf("%s rejected or refused, %s.", plural(o.Rejects, "row"), o.describe()))
	} else if o != nil && o.Rejects > 0 {
		result = append(result, fmt.Sprintf("%s rejected or refused.", plural(o.Rejects, "row")))
	}
	if runErr != nil {
		result = append(result, "Failed: "+cliMessage(runErr))
	} else {
		result = append(result, "Succeeded.")
	}
	s.result = strings.Join(result, " ")
	return s
}

// budgetOutcome is the rejects measured against the budget, nil before (or without) a plan.
func (s *syncOutput) budgetOutcome() *budgetOutcome {
	if s == nil {
		return nil
	}
	return s.outcome
}

// changeCounts are the changes of a summary row by how they ended.
type changeCounts struct{ done, failed, unknown, notAttempted int }

// resultCounts returns the changes of a summary row by how they ended.
func resultCounts(res *syncResult, name string) changeCounts {
	switch name {
	case "add":
		return changeCounts{res.Added + res.AlreadyPresent, res.AddFailed, res.AddUnknown, res.AddNotAttempted}
	case "update":
		return changeCounts{res.Updated, res.UpdateFailed, res.UpdateUnknown, res.UpdateNotAttempted}
	case "unsubscribe":
		return changeCounts{res.Unsubscribed, res.UnsubscribeFailed, res.UnsubscribeUnknown, res.UnsubscribeNotAttempted}
	}
	return changeCounts{}
}

// syncResult is what applying the plan did, in the words of the --json document's
// "result": listsync.Result's tallies, counted as the document has always counted them.
type syncResult struct {
	Interrupted             bool `json:"interrupted"`
	Added                   int  `json:"added"`
	AlreadyPresent          int  `json:"already_present"`
	AddFailed               int  `json:"add_failed"`
	AddUntraced             int  `json:"add_untraced"`
	AddUnknown              int  `json:"add_unknown"`
	AddNotAttempted         int  `json:"add_not_attempted"`
	Updated                 int  `json:"updated"`
	UpdateFailed            int  `json:"update_failed"`
	UpdateUnknown           int  `json:"update_unknown"`
	UpdateNotAttempted      int  `json:"update_not_attempted"`
	Unsubscribed            int  `json:"unsubscribed"`
	UnsubscribeFailed       int  `json:"unsubscribe_failed"`
	UnsubscribeUnknown      int  `json:"unsubscribe_unknown"`
	UnsubscribeNotAttempted int  `json:"unsubscribe_not_attempted"`
	ChangesNotAttempted     int  `json:"changes_not_attempted"`
	Rejected                int  `json:"rejected"`    // rows rejected or refused that a line was found for
	RowsDone                int  `json:"rows_done"`   // changed, nothing to change, or skipped
	RowsFailed              int  `json:"rows_failed"` // rejected or refused
	RowsUnknown             int  `json:"rows_unknown"`
	RowsNotAttempted        int  `json:"rows_not_attempted"`
}

// newSyncResult maps Apply's Result to the document's: "failed" is rejected or refused,
// and a row done is one done, skipped or suppressed (nothing to do for it).
func newSyncResult(r *listsync.Result) *syncResult {
	failed := func(t job.Tally) int { return t.Rejected + t.Refused }
	return &syncResult{
		Interrupted: r.Interrupted,
		Added:       r.Adds.Done - r.AlreadyPresent, AlreadyPresent: r.AlreadyPresent, AddFailed: failed(r.Adds),
		AddUntraced: r.Untraced, AddUnknown: r.Adds.Unknown, AddNotAttempted: r.Adds.NotAttempted,
		Updated: r.Updates.Done, UpdateFailed: failed(r.Updates), UpdateUnknown: r.Updates.Unknown,
		UpdateNotAttempted: r.Updates.NotAttempted,
		Unsubscribed:       r.Unsubscribes.Done, UnsubscribeFailed: failed(r.Unsubscribes),
		UnsubscribeUnknown: r.Unsubscribes.Unknown, UnsubscribeNotAttempted: r.Unsubscribes.NotAttempted,
		ChangesNotAttempted: r.ChangesNotAttempted(),
		Rejected:            failed(r.Rows) - r.Untraced,
		RowsDone:            r.Rows.Done + r.Rows.Skipped + r.Rows.Suppressed,
		RowsFailed:          failed(r.Rows), RowsUnknown: r.Rows.Unknown, RowsNotAttempted: r.Rows.NotAttempted,
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/listsync"
)

// dryRun lists the changes of the plan and writes the rejected rows.
// runDryRun lists the plan's changes and closes the output: also when the listing stops
// (a signal, a read error), so that --json's document stays whole and says how far it got.
func runDryRun(ctx context.Context, out *syncOutput, plan *listsync.Plan, rejects *rejectSink) error {
	runErr := dryRun(ctx, out, plan, rejects)
	var stopped *dryRunStop
	if runErr != nil {
		stopped = &dryRunStop{interrupted: ctx.Err() != nil}
	}
	if err := out.endDryRun(stopped); err != nil {
		return errors.Join(runErr, err)
	}
	return rejects.finish(runErr)
}

// dryRunStop says why a dry run stopped before listing every change.
type dryRunStop struct{ interrupted bool }

func dryRun(ctx context.Context, out *syncOutput, plan *listsync.Plan, rejects *rejectSink) error {
	for _, mask := range []listsync.EventKind{listsync.EventAdd | listsync.EventReject, listsync.EventUpdate} {
		if mask == listsync.EventUpdate && plan.Updates == 0 {
			continue
		}
		// Read without ctx: a signal ends the listing below, with its reason.
		for ev, err := range plan.Events(context.WithoutCancel(ctx), mask) {
			if err == nil && ctx.Err() != nil {
				err = errors.New(stopReason(ctx))
			}
			if err == nil {
				switch ev.Kind {
				case listsync.EventReject:
					rejects.addRow(ev.Row, ev.Reason)
				case listsync.EventAdd:
					err = out.add(ev.Row)
				case listsync.EventUpdate:
					err = out.update(*ev.Update)
				}
			}
			if err != nil {
				return err
			}
		}
	}
	for u, err := range plan.ToUnsubscribe() {
		if err == nil && ctx.Err() != nil {
			err = errors.New(stopReason(ctx))
		}
		if err == nil {
			err = out.unsubscribe(u)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

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
	changes            int
}

func (s *syncOutput) planJSON() orderedObject {
	p := s.plan
	return orderedObject{
		{"rows", p.Rows}, {"add", p.Adds}, {"update", p.Updates}, {"unsubscribe", p.Unsubscribes},
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
	name                       string
	planned                    int
	done, failed, notAttempted int
	applies                    bool // done and failed apply
	showWhenNothing            bool
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

func (s *syncOutput) add(row listsync.MappedRow) error {
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

func (s *syncOutput) update(u listsync.Update) error {
	var changes []orderedObject
	var text []string
	for _, ch := range u.Changes {
		changes = append(changes, orderedObject{{"field", ch.Header}, {"field_id", ch.Field.ID}, {"from", ch.From}, {"to", ch.To}})
		text = append(text, fmt.Sprintf("%s: %s → %s", ch.Header, strconv.Quote(ch.From), strconv.Quote(ch.To)))
	}
	return s.change(fmt.Sprintf("%-11s line %-6d %s  %s", "update", u.Line, u.Email, strings.Join(text, ", ")),
		orderedObject{{"action", "update"}, {"line", u.Line}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}, {"changes", changes}})
}

func (s *syncOutput) unsubscribe(u listsync.Unsubscribe) error {
	return s.change(fmt.Sprintf("%-11s %-11s %s", "unsubscribe", "", u.Email),
		orderedObject{{"action", "unsubscribe"}, {"email", u.Email}, {"subscriber_id", u.SubscriberID}})
}

// rejectedRowsJSON writes the document's rejected_rows member.
func (s *syncOutput) rejectedRowsJSON() error {
	w := s.a.stdout
	if _, err := io.WriteString(w, ",\n  \"rejected_rows\": ["); err != nil {
		return err
	}
	n := 0
	err := s.rejects.each(func(line int, address, reason string) error {
		sep := ","
		if n == 0 {
			sep = ""
		}
		n++
		_, err := fmt.Fprintf(w, "%s\n    %s", sep, indentJSON(orderedObject{{"line", line}, {"address", address}, {"reason", reason}}, "    "))
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

// end writes the result (nil for a dry run) and closes the document.
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
			_, err = io.WriteString(w, "\n}\n")
		}
		return err
	}
	var err error
	switch {
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
			_, err = io.WriteString(w, "\n}\n")
		}
		return err
	}
	cols := []string{"ACTION", "PLANNED", "DONE", "FAILED"}
	if res.Interrupted {
		fmt.Fprintf(w, "Interrupted: list %d %q partly synced with %s (%s: %d done, %d failed, %d not attempted).\nRun the same sync again to finish.\n\n",
			s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"), res.RowsDone, res.RowsFailed, res.RowsNotAttempted)
		cols = append(cols, "NOT ATTEMPTED")
	} else {
		fmt.Fprintf(w, "Synced list %d %q with %s (%s).\n\n", s.list.ListID, s.list.Name, s.csvPath, plural(s.plan.Rows, "row"))
	}
	t := newTable(w, cols...)
	for _, r := range s.summaryRows() {
		switch r.name {
		case "add":
			r.done, r.failed, r.notAttempted = res.Added+res.AlreadyPresent, res.AddFailed, res.AddNotAttempted
		case "update":
			r.done, r.failed, r.notAttempted = res.Updated, res.UpdateFailed, res.UpdateNotAttempted
		case "unsubscribe":
			r.done, r.failed, r.notAttempted = res.Unsubscribed, res.UnsubscribeFailed, res.UnsubscribeNotAttempted
		}
		cells := []string{r.name, strconv.Itoa(r.planned)}
		if r.applies {
			cells = append(cells, strconv.Itoa(r.done), strconv.Itoa(r.failed))
			if res.Interrupted {
				cells = append(cells, strconv.Itoa(r.notAttempted))
			}
		}
		t.row(cells...)
	}
	return t.flush()
}

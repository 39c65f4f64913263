package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/go-sendloop/sendloop/listsync"
)

// maxChangesShown is how many changes of each kind a dry run prints as text; --plan FILE
// and --json hold them all.
const maxChangesShown = 20

// The kinds of change, in the order a dry run lists them.
const (
	changeAdd         = "add"
	changeUpdate      = "update"
	changeUnsubscribe = "unsubscribe"
)

// changeNouns names the changes of a kind in "… and N more additions".
var changeNouns = map[string]string{changeAdd: "addition", changeUpdate: "update", changeUnsubscribe: "unsubscription"}

// runDryRun lists the plan's changes and closes the output: also when the listing stops
// (a signal, a read error), so that --json's document stays whole and says how far it got.
func runDryRun(ctx context.Context, out *syncOutput, plan *listsync.Plan, rejects *rejectSink) error {
	runErr := dryRun(ctx, out, plan, rejects)
	var stopped *dryRunStop
	if runErr != nil {
		stopped = &dryRunStop{interrupted: ctx.Err() != nil}
	} else {
		// The budget applies to the planned rejects; a stopped listing has not seen them all.
		o := out.budget.check(rejects.count, plan.Rows)
		out.outcome, rejects.budget = &o, &o
	}
	err := out.endDryRun(stopped)
	if perr := out.closePlan(); err == nil {
		err = perr
	}
	if err != nil {
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
		kind := changeAdd
		if mask == listsync.EventUpdate {
			kind = changeUpdate
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
			if out.enough(kind) && (kind != changeAdd || rejects.count == plan.Rejected) {
				break // what is left would not be shown
			}
		}
		if err := out.endKind(kind); err != nil {
			return err
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
		if out.enough(changeUnsubscribe) {
			break
		}
	}
	return out.endKind(changeUnsubscribe)
}

// planned is the number of changes of kind the plan makes.
func (s *syncOutput) planned(kind string) int {
	switch kind {
	case changeAdd:
		return s.plan.Adds
	case changeUpdate:
		return s.plan.Updates
	}
	return s.plan.Unsubscribes
}

// enough reports that a dry run has listed all it shows of kind: only the first
// maxChangesShown are printed, and neither --json nor --plan wants the rest.
func (s *syncOutput) enough(kind string) bool {
	return !s.a.json && s.planW == nil && s.shown[kind] >= min(maxChangesShown, s.planned(kind))
}

// endKind ends the text listing of a kind: "… and N more" for the changes not shown.
func (s *syncOutput) endKind(kind string) error {
	if s.a.json || s.planOnly {
		return nil
	}
	rest := s.planned(kind) - s.shown[kind]
	if rest <= 0 || s.shown[kind] == 0 {
		return nil
	}
	hint := "--plan FILE lists every change"
	if s.planW != nil {
		hint = "all in " + s.planPath
	}
	_, err := fmt.Fprintf(s.a.stdout, "  … and %s (%s)\n", plural(rest, "more "+changeNouns[kind]), hint)
	return err
}

// planHeader is the header of --plan's CSV. Each change takes one row per field it sets or
// changes (an addition without values, and an unsubscription, one row with no field):
// action (add, update, unsubscribe), line (the record's first line in the file; empty for an
// unsubscription), email (as written in the file for an addition; as the list holds it for
// an update or an unsubscription),
// subscriber_id (of the member updated or unsubscribed), field (the column's header),
// field_id (its custom field), from (the member's value), to (the file's value).
var planHeader = []string{"action", "line", "email", "subscriber_id", "field", "field_id", "from", "to"}

// openPlan opens --plan's file ("-" for stdout) and writes the header.
func (s *syncOutput) openPlan(path string, csvInfo os.FileInfo) error {
	if path == "" {
		return nil
	}
	var w io.Writer = s.a.stdout
	if path == "-" {
		s.planOnly = true
	} else {
		if info, err := os.Stat(path); err == nil && os.SameFile(info, csvInfo) {
			return usagef("sync", "--plan names the CSV file itself")
		}
		f, err := os.Create(path)
		if err != nil {
			return usagef("sync", "--plan: %v", err)
		}
		s.planFile, w = f, f
	}
	s.planPath = path
	s.planW = csv.NewWriter(w)
	return s.planW.Write(planHeader)
}

// planRow writes a row of --plan's CSV.
func (s *syncOutput) planRow(action string, line int, email string, id int, field string, fieldID int, from, to string) error {
	if s.planW == nil {
		return nil
	}
	cell := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	return s.planW.Write([]string{action, cell(line), email, cell(id), field, cell(fieldID), from, to})
}

// closePlan flushes and closes --plan's file.
func (s *syncOutput) closePlan() error {
	if s.planW == nil {
		return nil
	}
	s.planW.Flush()
	err := s.planW.Error()
	if s.planFile != nil {
		if cerr := s.planFile.Close(); err == nil {
			err = cerr
		}
		s.planFile = nil
	}
	s.planW = nil
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.planPath, err)
	}
	return nil
}

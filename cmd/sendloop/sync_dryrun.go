package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
	if err := out.endKind(changeUnsubscribe); err != nil {
		return err
	}
	return out.writePlan(ctx)
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
// maxChangesShown are printed (none with --plan -), and --json wants the rest; --plan's
// file is written apart.
func (s *syncOutput) enough(kind string) bool {
	return !s.a.json && (s.planOnly || s.shown[kind] >= min(maxChangesShown, s.planned(kind)))
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
	if s.planPath != "" {
		hint = "all in " + s.planPath
	}
	_, err := fmt.Fprintf(s.a.stdout, "  … and %s (%s)\n", plural(rest, "more "+changeNouns[kind]), hint)
	return err
}

// openPlan opens --plan's file ("-" for stdout), which Plan.WriteCSV fills once the
// changes are listed.
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
		f, err := createPrivate(path)
		if err != nil {
			return usagef("sync", "--plan: %v", err)
		}
		s.planFile, w = f, f
	}
	s.planPath = path
	s.planW = w
	return nil
}

// writePlan writes --plan's file, when asked for. Its rows come from another reading of the
// file, in its order: the listing shows the changes kind by kind, and stops early.
func (s *syncOutput) writePlan(ctx context.Context) error {
	if s.planW == nil {
		return nil
	}
	err := s.plan.WriteCSV(ctx, s.planW)
	if err != nil && ctx.Err() != nil {
		return errors.New(stopReason(ctx))
	}
	if err != nil && !s.planOnly {
		return fmt.Errorf("writing %s: %w", s.planPath, err)
	}
	return err
}

// closePlan closes --plan's file.
func (s *syncOutput) closePlan() error {
	s.planW = nil
	if s.planFile == nil {
		return nil
	}
	err := s.planFile.Close()
	s.planFile = nil
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.planPath, err)
	}
	return nil
}

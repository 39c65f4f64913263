package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/smtp"
)

// listReport prints what a --recipients run did with each row of the file, from the
// library's result: the counts, the rows it lists, the annotations.
type listReport struct {
	*mailmerge.Result
	stop error         // the failure that stopped the run
	gh   *githubReport // GitHub Actions' annotations, nil elsewhere
}

// listRow is a row the report lists.
type listRow mailmerge.RowResult

func (r listRow) reason() string { return cliText(r.Reason) }

func (r listRow) object() orderedObject {
	o := orderedObject{}
	if r.Line > 0 {
		o = append(o, member{"line", r.Line})
	}
	o = append(o, member{"email", r.Address})
	if r.MessageID != "" {
		o = append(o, member{"message_id", r.MessageID})
	}
	if why := r.reason(); why != "" {
		o = append(o, member{"reason", why})
	}
	return o
}

func (r listRow) text() string {
	parts := []string{}
	if r.Line > 0 {
		parts = append(parts, strconv.Itoa(r.Line))
	}
	parts = append(parts, r.Address)
	for _, s := range []string{r.MessageID, r.reason()} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "  ")
}

// cliText is a library's message as the tool prints it: without the packages' prefixes,
// and naming the flags that change what it says.
func cliText(s string) string {
	for {
		out := sdkPrefix.ReplaceAllString(s, "$1")
		if out == s {
			break
		}
		s = out
	}
	s = strings.Replace(s, "not sent again without resending unknown rows", "not sent again without --resend-unknown", 1)
	return strings.Replace(s, "not sent again without resending refused rows", "not sent again without --resend-refused", 1)
}

// annotate writes the annotation of a listed row, in the file's order.
func (rep *listReport) annotate(r mailmerge.RowResult) {
	if rep.gh == nil {
		return
	}
	why := cliText(r.Reason)
	switch {
	case r.Fate == sljob.Refused:
		rep.gh.warn(r.Line, "refused", r.Address, refusal(r.Err, why))
	case r.Fate == sljob.Unknown, r.Fate == sljob.Skipped && r.Skip == mailmerge.SkipUnknown:
		rep.gh.warn(r.Line, "outcome unknown for", r.Address, why)
	case r.Fate == sljob.Skipped && r.Skip == mailmerge.SkipRefused:
		rep.gh.warn(r.Line, "refused", r.Address, why)
	case r.Fate == sljob.Rejected:
		rep.gh.warn(r.Line, "rejected", r.Address, why)
	case r.Fate == sljob.Suppressed:
		rep.gh.warn(r.Line, "suppressed, not sent:", r.Address, why)
	case r.Fate == sljob.NotSubscribed:
		rep.gh.warn(r.Line, "not subscribed, not sent:", r.Address, why)
	}
}

// refusal is the relay's refusal in err, for an annotation: the command and the reply,
// without the address, so that the summary counts one reason for many rows; else reason.
func refusal(err error, reason string) string {
	var rerr *smtp.RecipientsError
	var serr *smtp.ReplyError
	switch {
	case errors.As(err, &rerr) && len(rerr.Refused) > 0:
		serr = rerr.Refused[0]
	case errors.As(err, &serr):
	default:
		return reason
	}
	return strings.Join(strings.Fields(fmt.Sprintf("%s %d %s %s", serr.Command, serr.Code, serr.EnhancedCode, serr.Message)), " ")
}

// The names mailmerge gives its budgets in a *job.BudgetError (SendOptions.MaxRejects and
// MaxUnknown).
var sendBudgetNames = map[string]string{flagMaxRejects: "MaxRejects", flagMaxUnknown: "MaxUnknown"}

// sendBudgetOutcome renders the verdict mailmerge.Job.Send gave on budget b: over when its
// error holds the *job.BudgetError of that budget, else held. rows is the rows the budget
// counts, total the rows of the file.
func sendBudgetOutcome(b rejectBudget, rows, total int, sendErr error) budgetOutcome {
	flag := b.flag
	if flag == flagMaxRejects {
		flag = ""
	}
	o := budgetOutcome{Max: b.limit.String(), Allowed: b.limit.Allowed(total), Rejects: rows, Held: true, flag: flag}
	for _, e := range budgetErrors(sendErr) {
		if e.Budget == sendBudgetNames[b.flag] {
			o.Allowed, o.Rejects, o.Held = e.Allowed, e.Rows, false
		}
	}
	return o
}

// budgetErrors returns the *job.BudgetError values err holds, joined or not.
func budgetErrors(err error) []*sljob.BudgetError {
	var out []*sljob.BudgetError
	var be *sljob.BudgetError
	switch {
	case err == nil:
	case errors.As(err, &be) && !isJoined(err):
		out = append(out, be)
	default:
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				out = append(out, budgetErrors(e)...)
			}
		}
	}
	return out
}

func isJoined(err error) bool {
	_, ok := err.(interface{ Unwrap() []error })
	return ok
}

// write prints the report: a summary, or with --json one object whose counts add up to the
// file's rows, and the budgets.
func (rep *listReport) write(a *app, relay, journal string, outcome, unknown budgetOutcome) error {
	res := rep.Result
	lists := []struct {
		key, title string
		rows       *mailmerge.RowList
	}{{"refused_rows", "Refused", &res.RefusedRows},
		{"unknown_rows", "Outcome unknown (never sent again without --resend-unknown)", &res.UnknownRows},
		{"deferred_rows", "Deferred (sent by a rerun)", &res.DeferredRows}, {"rejected_rows", "Rejected", &res.RejectedRows},
		{"suppressed_rows", "Suppressed (never sent)", &res.SuppressedRows},
		{"not_subscribed_rows", "Not subscribed to the list (not sent)", &res.NotSubscribedRows}}
	w := bufio.NewWriter(a.stdout)
	if a.json {
		skipped := orderedObject{{"already_sent", res.SkippedSent}, {"refused", res.SkippedRefused},
			{"unknown", res.SkippedUnknown}, {"shard", res.SkippedShard}, {"continued", res.SkippedContinued}}
		head := orderedObject{{"relay", relay}, {"journal", journal}, {"rows", res.Rows},
			{"sent", res.Tally.Done}, {"skipped", skipped}, {"refused", res.Tally.Refused}, {"unknown", res.Tally.Unknown},
			{"deferred", res.Tally.Deferred}, {"rejected", res.Tally.Rejected}, {"suppressed", res.Tally.Suppressed},
			{"not_subscribed", res.Tally.NotSubscribed}, {"not_attempted", res.Tally.NotAttempted}}
		w.WriteString("{")
		for i, m := range head {
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, "\n  %s: %s", jsonString(m.key), indentJSON(m.value, "  "))
		}
		for _, l := range lists {
			fmt.Fprintf(w, ",\n  %s: [", jsonString(l.key))
			sep := ""
			if err := l.rows.Each(func(r mailmerge.RowResult) error {
				_, err := fmt.Fprintf(w, "%s\n    %s", sep, indentJSON(listRow(r).object(), "    "))
				sep = ","
				return err
			}); err != nil {
				return err
			}
			if l.rows.Len() > 0 {
				w.WriteString("\n  ")
			}
			w.WriteString("]")
		}
		fmt.Fprintf(w, ",\n  \"reject_budget\": %s", indentJSON(outcome.json(), "  "))
		fmt.Fprintf(w, ",\n  \"unknown_budget\": %s\n}\n", indentJSON(unknown.json(), "  "))
		return w.Flush()
	}
	fmt.Fprintf(w, "%s read: %d sent, %d suppressed, %d not subscribed, %d skipped (%d already sent, %d refused before, %d unknown before, %d of other shards",
		plural(res.Rows, "row"), res.Tally.Done, res.Tally.Suppressed, res.Tally.NotSubscribed, res.Skipped(), res.SkippedSent, res.SkippedRefused, res.SkippedUnknown, res.SkippedShard)
	if res.SkippedContinued > 0 {
		fmt.Fprintf(w, ", %d in the journal continued from", res.SkippedContinued)
	}
	fmt.Fprintf(w, "), %d refused, %d unknown, %d deferred, %d rejected, %d not attempted.\n",
		res.Tally.Refused, res.Tally.Unknown, res.Tally.Deferred, res.Tally.Rejected, res.Tally.NotAttempted)
	for _, l := range lists {
		if l.rows.Len() == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", l.title)
		if err := l.rows.Each(func(r mailmerge.RowResult) error {
			_, err := fmt.Fprintf(w, "  %s\n", listRow(r).text())
			return err
		}); err != nil {
			return err
		}
	}
	return w.Flush()
}

// err is the run's outcome: the failure that stopped it; or exit code 1 when rows were
// deferred or not attempted, when more rows than --max-rejects allows were rejected or
// refused, or more than --max-unknown allows are of unknown outcome (within a budget, a
// note says how many).
func (rep *listReport) err(ctx context.Context, a *app, outcome, unknown budgetOutcome) error {
	if rep.stop != nil {
		return rep.stop
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s not attempted; run again to send them", plural(rep.Tally.NotAttempted, "row"))
	}
	var msgs []string
	for _, b := range []struct {
		o    budgetOutcome
		msg  string
		held string // what a note of rows within the budget adds
		next string // the ways forward, said when the run fails for them
	}{{outcome, "not sent (refused or rejected, in this run or an earlier one)", "", ""},
		{unknown, "of unknown outcome (in this run or an earlier one): they may have been sent", ", and are never sent again without --resend-unknown",
			"; accept the listed rows with --max-unknown N, or send them again with --resend-unknown (each may get two messages)"}} {
		if b.o.Rejects == 0 {
			continue
		}
		msg := plural(b.o.Rejects, "row") + " " + b.msg
		switch {
		case b.o.Held:
			a.note("%s%s, %s", msg, b.held, b.o.describe())
		case b.o.given():
			msgs = append(msgs, msg+", "+b.o.describe()+b.next)
		default:
			msgs = append(msgs, msg+b.next)
		}
	}
	if n := rep.Tally.Deferred + rep.Tally.NotAttempted; n > 0 {
		msgs = append(msgs, fmt.Sprintf("%s not sent (deferred or not attempted): run again to send them", plural(n, "row")))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// summary is the GitHub step summary of the run.
func (rep *listReport) summary(path string, shard mailmerge.ShardSpec, outcome, unknown *budgetOutcome, runErr error) githubSummary {
	res := rep.Result
	s := githubSummary{title: "sendloop send: " + path}
	if res != nil {
		s.title += fmt.Sprintf(" (%s)", plural(res.Rows, "row"))
	}
	if shard.Count > 1 {
		s.title += fmt.Sprintf(", shard %d/%d", shard.Index+1, shard.Count)
	}
	if res == nil && runErr != nil { // refused before sending: by the check, a journal, the relay
		s.result = "Failed before sending: " + cliMessage(runErr)
		return s
	}
	if res == nil {
		res = &mailmerge.Result{}
	}
	s.table = [][]string{{"rows", "count"}}
	for _, r := range []struct {
		name string
		n    int
	}{{"sent", res.Tally.Done}, {"suppressed", res.Tally.Suppressed}, {"not subscribed", res.Tally.NotSubscribed}, {"already sent", res.SkippedSent}, {"refused before", res.SkippedRefused},
		{"unknown before", res.SkippedUnknown}, {"of other shards", res.SkippedShard}, {"refused", res.Tally.Refused},
		{"unknown", res.Tally.Unknown}, {"deferred", res.Tally.Deferred}, {"rejected", res.Tally.Rejected}, {"not attempted", res.Tally.NotAttempted}} {
		s.table = append(s.table, []string{r.name, strconv.Itoa(r.n)})
	}
	if res.SkippedContinued > 0 {
		s.table = append(s.table, []string{"in the journal continued from", strconv.Itoa(res.SkippedContinued)})
	}
	var result []string
	for _, b := range []struct {
		o    *budgetOutcome
		what string
	}{{outcome, "refused or rejected"}, {unknown, "of unknown outcome"}} {
		if b.o == nil || b.o.Rejects == 0 {
			continue
		}
		if b.o.given() {
			result = append(result, fmt.Sprintf("%s %s, %s.", plural(b.o.Rejects, "row"), b.what, b.o.describe()))
		} else {
			result = append(result, fmt.Sprintf("%s %s.", plural(b.o.Rejects, "row"), b.what))
		}
	}
	if runErr != nil {
		result = append(result, "Failed: "+cliMessage(runErr))
	} else {
		result = append(result, "Succeeded.")
	}
	s.result = strings.Join(result, " ")
	return s
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/spool"
	"github.com/go-sendloop/sendloop/smtp"
)

// listReport counts what a --recipients run did with each row of the file. Its memory does
// not grow with the file: it keeps counts, the rows between the reader and their results
// (a window of the pool's size), and the rows it lists (refused, unknown, deferred,
// rejected), the first maxRowsInMemory of each kind in memory and the rest in a temporary
// file.
type listReport struct {
	Rows, Sent, Refused, Unknown, Deferred, Rejected, NotAttempted int
	Skipped                                                        map[string]int // by reason
	RefusedRows, UnknownRows, RejectedRows, DeferredRows           rowList
	stop                                                           error // the failure that stopped the run

	gh      *githubReport // GitHub Actions' annotations, nil elsewhere
	queue   []pendingRow  // rows read and not yet reported, in the file's order
	next    int           // the index SendKeyed gives the next row yielded to it
	queuing bool          // false in a dry run: nothing is reported
}

// pendingRow is a row between the reader and its report: one yielded to SendKeyed (index
// ≥ 0), or one the CLI rejected (index -1), reported after the rows before it so that the
// report and the annotations follow the file.
type pendingRow struct {
	index int
	line  int
	raw   string // a rejected row: the address as written, and why
	why   string
}

// maxQueuedRejects bounds the rejected rows waiting behind rows in flight: beyond it they
// are reported at once, out of the file's order (a file with long runs of bad rows).
const maxQueuedRejects = 1024

// listRow is a row the report lists.
type listRow struct {
	Line      int    `json:"line,omitempty"`
	Email     string `json:"email"`
	MessageID string `json:"message_id,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

func (r listRow) object() orderedObject {
	o := orderedObject{}
	if r.Line > 0 {
		o = append(o, member{"line", r.Line})
	}
	o = append(o, member{"email", r.Email})
	if r.MessageID != "" {
		o = append(o, member{"message_id", r.MessageID})
	}
	if r.Reason != "" {
		o = append(o, member{"reason", r.Reason})
	}
	return o
}

func (r listRow) text() string {
	parts := []string{}
	if r.Line > 0 {
		parts = append(parts, strconv.Itoa(r.Line))
	}
	parts = append(parts, r.Email)
	for _, s := range []string{r.MessageID, r.Reason} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "  ")
}

// maxRowsInMemory is how many rows of one kind a rowList keeps in memory.
const maxRowsInMemory = 1000

// rowList holds listed rows in order: the first maxRowsInMemory in memory, the rest spilled
// to an unlinked temporary file (JSON lines).
type rowList struct {
	n     int
	mem   []listRow
	spill *spool.Spool
}

func (l *rowList) add(r listRow) {
	l.n++
	if len(l.mem) < maxRowsInMemory {
		l.mem = append(l.mem, r)
		return
	}
	if l.spill == nil {
		l.spill = spool.New("", "sendloop-rows-*")
	}
	b, _ := json.Marshal(r)
	_ = l.spill.Append(b) // an error is each's to report
}

// each calls fn with every row, in order.
func (l *rowList) each(fn func(listRow) error) error {
	for _, r := range l.mem {
		if err := fn(r); err != nil {
			return err
		}
	}
	if l.spill == nil {
		return nil
	}
	err := l.spill.Each(func(b []byte) error {
		var r listRow
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		return fn(r)
	})
	if err != nil {
		return fmt.Errorf("the rows beyond the first %d: %w", maxRowsInMemory, err)
	}
	return nil
}

func (l *rowList) close() {
	if l.spill != nil {
		l.spill.Close()
		l.spill = nil
	}
}

func (rep *listReport) close() {
	for _, l := range []*rowList{&rep.RefusedRows, &rep.UnknownRows, &rep.RejectedRows, &rep.DeferredRows} {
		l.close()
	}
}

// yielded records a row given to SendKeyed, starting on line of the file.
func (rep *listReport) yielded(line int) {
	if rep.queuing {
		rep.queue = append(rep.queue, pendingRow{index: rep.next, line: line})
	}
	rep.next++
}

// rejectRow rejects a row of the file before it reaches SendKeyed.
func (rep *listReport) rejectRow(line int, raw, why string) {
	if !rep.queuing {
		rep.Rejected++
		return
	}
	if len(rep.queue) == 0 || len(rep.queue) >= maxQueuedRejects {
		rep.reject(line, raw, why)
		return
	}
	rep.queue = append(rep.queue, pendingRow{index: -1, line: line, raw: raw, why: why})
}

func (rep *listReport) reject(line int, raw, why string) {
	rep.Rejected++
	rep.RejectedRows.add(listRow{Line: line, Email: raw, Reason: why})
	rep.gh.warn(line, "rejected", raw, why)
}

// lineOf reports the rejected rows queued before the row of index, and returns that row's
// line (0 if unknown).
func (rep *listReport) lineOf(index int) int {
	for len(rep.queue) > 0 {
		p := rep.queue[0]
		if p.index >= 0 && p.index > index {
			return 0
		}
		rep.queue = rep.queue[1:]
		if p.index < 0 {
			rep.reject(p.line, p.raw, p.why)
		} else if p.index == index {
			return p.line
		}
	}
	return 0
}

// flush reports the rejected rows still queued.
func (rep *listReport) flush() {
	rep.lineOf(rep.next)
	rep.queue = nil
}

// add counts one result.
func (rep *listReport) add(res smtp.KeyedResult) {
	line := rep.lineOf(res.Index)
	row := func(reason string) listRow {
		r := listRow{Line: line, Email: res.Key, MessageID: res.MessageID, Reason: reason}
		if reason == "" && res.Err != nil {
			r.Reason = cliMessage(res.Err)
		}
		return r
	}
	switch res.State {
	case smtp.KeySent:
		rep.Sent++
	case smtp.KeyRefused:
		rep.Refused++
		r := row("")
		rep.RefusedRows.add(r)
		rep.gh.warn(line, "refused", res.Key, refusal(res.Err, r.Reason))
	case smtp.KeyUnknown:
		rep.Unknown++
		r := row("")
		rep.UnknownRows.add(r)
		rep.gh.warn(line, "outcome unknown for", res.Key, r.Reason)
	case smtp.KeyDeferred:
		rep.Deferred++
		rep.DeferredRows.add(row(""))
	case smtp.KeySkipped:
		rep.Skipped[res.Skip.String()]++
		switch res.Skip {
		case smtp.SkipUnknown:
			r := row("unknown in the journal: not sent again without --resend-unknown")
			rep.UnknownRows.add(r)
			rep.gh.warn(line, "outcome unknown for", res.Key, r.Reason)
		case smtp.SkipRefused:
			why := "refused in an earlier run"
			if res.Previous != nil && res.Previous.Reply != "" {
				why += " (" + res.Previous.Reply + ")"
			}
			r := row(why + ": not sent again without --resend-refused")
			rep.RefusedRows.add(r)
			rep.gh.warn(line, "refused", res.Key, r.Reason)
		}
	case smtp.KeyInvalid:
		why := cliMessage(res.Err)
		if errors.Is(res.Err, smtp.ErrDuplicateKey) {
			why = "duplicate address: an earlier row has it"
		}
		rep.reject(line, res.Key, why)
	case smtp.KeyNotAttempted:
		rep.NotAttempted++
		if rep.stop == nil && errors.Is(res.Err, smtp.ErrRunStopped) {
			rep.stop = res.Err
		}
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

func (rep *listReport) skipped() int {
	n := 0
	for _, c := range rep.Skipped {
		n += c
	}
	return n
}

// rejects is what counts against --max-rejects: the rows rejected, and the rows refused or
// of unknown outcome in this run or an earlier one.
func (rep *listReport) rejects() int {
	return rep.Rejected + rep.Refused + rep.Unknown + rep.Skipped["refused"] + rep.Skipped["unknown"]
}

// write prints the report: a summary, or with --json one object whose counts add up to the
// file's rows, and the reject budget.
func (rep *listReport) write(a *app, relay, journal string, outcome budgetOutcome) error {
	lists := []struct {
		key, title string
		rows       *rowList
	}{{"refused_rows", "Refused", &rep.RefusedRows},
		{"unknown_rows", "Outcome unknown (never sent again without --resend-unknown)", &rep.UnknownRows},
		{"deferred_rows", "Deferred (sent by a rerun)", &rep.DeferredRows}, {"rejected_rows", "Rejected", &rep.RejectedRows}}
	w := bufio.NewWriter(a.stdout)
	if a.json {
		skipped := orderedObject{}
		for _, k := range []string{"already_sent", "refused", "unknown", "shard"} {
			skipped = append(skipped, member{k, rep.Skipped[k]})
		}
		head := orderedObject{{"relay", relay}, {"journal", journal}, {"rows", rep.Rows},
			{"sent", rep.Sent}, {"skipped", skipped}, {"refused", rep.Refused}, {"unknown", rep.Unknown},
			{"deferred", rep.Deferred}, {"rejected", rep.Rejected}, {"not_attempted", rep.NotAttempted}}
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
			if err := l.rows.each(func(r listRow) error {
				_, err := fmt.Fprintf(w, "%s\n    %s", sep, indentJSON(r.object(), "    "))
				sep = ","
				return err
			}); err != nil {
				return err
			}
			if l.rows.n > 0 {
				w.WriteString("\n  ")
			}
			w.WriteString("]")
		}
		fmt.Fprintf(w, ",\n  \"reject_budget\": %s\n}\n", indentJSON(outcome.json(), "  "))
		return w.Flush()
	}
	fmt.Fprintf(w, "%s read: %d sent, %d skipped (%d already sent, %d refused before, %d unknown before, %d of other shards), %d refused, %d unknown, %d deferred, %d rejected, %d not attempted.\n",
		plural(rep.Rows, "row"), rep.Sent, rep.skipped(), rep.Skipped["already_sent"], rep.Skipped["refused"], rep.Skipped["unknown"],
		rep.Skipped["shard"], rep.Refused, rep.Unknown, rep.Deferred, rep.Rejected, rep.NotAttempted)
	for _, l := range lists {
		if l.rows.n == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", l.title)
		if err := l.rows.each(func(r listRow) error {
			_, err := fmt.Fprintf(w, "  %s\n", r.text())
			return err
		}); err != nil {
			return err
		}
	}
	return w.Flush()
}

// err is the run's outcome: the failure that stopped it; or exit code 1 when rows were
// deferred or not attempted, or when more rows than --max-rejects allows were rejected,
// refused or of unknown outcome (within the budget, a note says how many).
func (rep *listReport) err(ctx context.Context, a *app, outcome budgetOutcome) error {
	if rep.stop != nil {
		return rep.stop
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s not attempted; run again to send them", plural(rep.NotAttempted, "row"))
	}
	var msgs []string
	if n := outcome.Rejects; n > 0 {
		msg := fmt.Sprintf("%s not sent (refused, unknown or rejected, in this run or an earlier one)", plural(n, "row"))
		switch {
		case outcome.Held:
			a.note("%s, %s", msg, outcome.describe())
		case outcome.given():
			msgs = append(msgs, msg+", "+outcome.describe())
		default:
			msgs = append(msgs, msg)
		}
	}
	if n := rep.Deferred + rep.NotAttempted; n > 0 {
		msgs = append(msgs, fmt.Sprintf("%s not sent (deferred or not attempted): run again to send them", plural(n, "row")))
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// summary is the GitHub step summary of the run.
func (rep *listReport) summary(path string, shard smtp.ShardSpec, outcome *budgetOutcome, runErr error) githubSummary {
	s := githubSummary{title: fmt.Sprintf("sendloop send: %s (%s)", path, plural(rep.Rows, "row"))}
	if shard.Count > 1 {
		s.title += fmt.Sprintf(", shard %d/%d", shard.Index+1, shard.Count)
	}
	s.table = [][]string{{"rows", "count"}}
	for _, r := range []struct {
		name string
		n    int
	}{{"sent", rep.Sent}, {"already sent", rep.Skipped["already_sent"]}, {"refused before", rep.Skipped["refused"]},
		{"unknown before", rep.Skipped["unknown"]}, {"of other shards", rep.Skipped["shard"]}, {"refused", rep.Refused},
		{"unknown", rep.Unknown}, {"deferred", rep.Deferred}, {"rejected", rep.Rejected}, {"not attempted", rep.NotAttempted}} {
		s.table = append(s.table, []string{r.name, strconv.Itoa(r.n)})
	}
	var result []string
	if outcome != nil && outcome.Rejects > 0 {
		if outcome.given() {
			result = append(result, fmt.Sprintf("%s refused, unknown or rejected, %s.", plural(outcome.Rejects, "row"), outcome.describe()))
		} else {
			result = append(result, fmt.Sprintf("%s refused, unknown or rejected.", plural(outcome.Rejects, "row")))
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

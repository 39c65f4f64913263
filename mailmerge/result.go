package mailmerge

import (
	"encoding/json"
	"fmt"

	"github.com/go-sendloop/sendloop/internal/spool"
	"github.com/go-sendloop/sendloop/job"
)

// RowResult is the fate of one row.
type RowResult struct {
	// Line is the row's line (0 for a source without lines); Index its position in the
	// source, from 0.
	Line, Index int
	// Address is the key the row was sent under (the address, lower-cased), or the
	// address as written for a rejected row.
	Address string
	// Fate is what became of the row: job.Done for a message the relay accepted.
	Fate job.Fate
	// Skip says why it was skipped.
	Skip SkipReason
	// Continued reports a row skipped for the journal of SendOptions.ContinueFrom.
	Continued bool
	// MessageID is the message's Message-ID, when one was sent or journaled.
	MessageID string
	// Reason says why a row was refused, rejected, deferred, or listed as unknown.
	Reason string
	// Err is the error behind the fate, if any (a *smtp.ReplyError for a refusal); not
	// kept in Result's lists.
	Err error
	// Previous is the journal's record from an earlier run, for a skipped row.
	Previous *JournalRecord
}

// Result counts the fates of a send's rows: Rows is the sum of the others.
type Result struct {
	// Rows is the source's rows.
	Rows int
	// Tally counts the rows by fate in this run (Tally.Done: messages the relay
	// accepted); its Total is Rows, and Tally.Skipped is the sum of the Skipped… counts.
	Tally job.Tally
	// The rows skipped: already sent by an earlier run, refused or of unknown outcome in
	// an earlier run (not sent again without ResendRefused or ResendUnknown), of another
	// shard, or (ContinueFrom) recorded by the earlier journal.
	SkippedSent, SkippedRefused, SkippedUnknown, SkippedShard, SkippedContinued int
	// The rows listed: refused (in this run or an earlier one), of unknown outcome (in
	// this run or an earlier one), deferred, and rejected, each in the source's order.
	RefusedRows, UnknownRows, DeferredRows, RejectedRows RowList
	// The rows not sent for who they are, with their reasons: suppressed (job.Suppressed),
	// and members of the send's list who are not Subscribed (job.NotSubscribed). They are
	// not rejects.
	SuppressedRows, NotSubscribedRows RowList
}

// Skipped returns the number of rows skipped, for any reason.
func (r *Result) Skipped() int {
	return r.SkippedSent + r.SkippedRefused + r.SkippedUnknown + r.SkippedShard + r.SkippedContinued
}

// Rejects returns the rows not sent for a reason of theirs: rejected, or refused in this
// run or an earlier one. Unknown rows are not among them.
func (r *Result) Rejects() int { return r.Tally.Rejected + r.Tally.Refused + r.SkippedRefused }

// Unknowns returns the rows of unknown outcome, in this run or an earlier one.
func (r *Result) Unknowns() int { return r.Tally.Unknown + r.SkippedUnknown }

// Close removes the temporary file of the listed rows, if any.
func (r *Result) Close() error {
	var first error
	for _, l := range []*RowList{&r.RefusedRows, &r.UnknownRows, &r.DeferredRows, &r.RejectedRows, &r.SuppressedRows, &r.NotSubscribedRows} {
		if err := l.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// maxRowsInMemory is how many rows of one kind a RowList keeps in memory.
const maxRowsInMemory = 1000

// RowList holds listed rows in order: the first thousand in memory, the rest in a
// temporary file removed by Result.Close.
type RowList struct {
	n     int
	mem   []RowResult
	spill *spool.Spool
}

// Len returns the number of rows.
func (l *RowList) Len() int { return l.n }

func (l *RowList) add(r RowResult) {
	l.n++
	if len(l.mem) < maxRowsInMemory {
		l.mem = append(l.mem, r)
		return
	}
	if l.spill == nil {
		l.spill = spool.New("", "sendloop-rows-*")
	}
	b, _ := json.Marshal(spooledRow{Line: r.Line, Index: r.Index, Address: r.Address, Fate: r.Fate, Skip: r.Skip,
		Continued: r.Continued, MessageID: r.MessageID, Reason: r.Reason})
	_ = l.spill.Append(b) // an error is Each's to report
}

// spooledRow is a RowResult as a RowList spills it to its temporary file: the encoding is
// the list's own, so that RowResult carries no JSON tags and a program's output of it is
// the program's. Err and Previous are not kept.
type spooledRow struct {
	Line      int        `json:"l"`
	Index     int        `json:"i"`
	Address   string     `json:"a"`
	Fate      job.Fate   `json:"f"`
	Skip      SkipReason `json:"s,omitempty"`
	Continued bool       `json:"c,omitempty"`
	MessageID string     `json:"m,omitempty"`
	Reason    string     `json:"r,omitempty"`
}

// Each calls fn with every row, in order, and stops at fn's first error; Err and Previous
// are nil.
func (l *RowList) Each(fn func(RowResult) error) error {
	for _, r := range l.mem {
		r.Err, r.Previous = nil, nil
		if err := fn(r); err != nil {
			return err
		}
	}
	if l.spill == nil {
		return nil
	}
	err := l.spill.Each(func(b []byte) error {
		var r spooledRow
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		return fn(RowResult{Line: r.Line, Index: r.Index, Address: r.Address, Fate: r.Fate, Skip: r.Skip,
			Continued: r.Continued, MessageID: r.MessageID, Reason: r.Reason})
	})
	if err != nil {
		return fmt.Errorf("the rows beyond the first %d: %w", maxRowsInMemory, err)
	}
	return nil
}

func (l *RowList) close() error {
	if l.spill == nil {
		return nil
	}
	err := l.spill.Close()
	l.spill = nil
	return err
}

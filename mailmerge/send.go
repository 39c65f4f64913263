package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"strings"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/smtp"
)

// SendOptions configures Send.
type SendOptions struct {
	// Journal is the journal file: each row is recorded in flight before its final dot and
	// with its outcome after, so that a run killed at any moment can be run again and
	// sends no row twice. Empty sends without one.
	Journal string
	// JournalStore, when set, is the journal instead of a file at Journal (which then only
	// names it in messages): a journal in a database, such as package mailmerge/pgjournal's,
	// that every run and shard of the send shares, so that a rerun on another machine sends
	// no row twice. It must be opened for Job.Binding's fingerprint; Send does not close it.
	JournalStore JournalStore
	// ContinueFrom is an earlier journal of the same shard, possibly bound to another
	// message (a typo fixed after a partial send): the rows it records (sent, refused,
	// unknown or in flight) are skipped. It is only read. It needs Journal (or
	// JournalStore: a file journal continues into a database).
	ContinueFrom string
	// ContinueFromRecords, when set, is the earlier journal's records instead of the file
	// ContinueFrom names (which then only names it in messages): a journal in a database,
	// read with pgjournal.Records. Its keys are skipped as ContinueFrom's are.
	ContinueFromRecords iter.Seq2[JournalRecord, error]
	// ResendUnknown sends again the rows the journal records unknown or in flight: their
	// recipients may get the message twice.
	ResendUnknown bool
	// ResendRefused sends again the rows the journal records refused.
	ResendRefused bool
	// MaxRejects bounds the rows rejected or refused (Result.Rejects) and MaxUnknown the
	// rows of unknown outcome (Result.Unknowns) a run may end with: over either, Send
	// returns its whole result and a *job.BudgetError (Budget "MaxRejects" or "MaxUnknown").
	// They only judge the run, never stop it midway, and do not enter the journal's
	// binding. The zero job.Budget allows none, as 0 does on the command line (the CLI's
	// default); job.Unlimited() sets no bound.
	MaxRejects, MaxUnknown job.Budget
	// Stop is how the messages in flight end once Send's context ends, which starts no new
	// row (the rows left are not attempted): they run for Stop.Grace more, and end at once
	// when Stop.Work ends. The zero Stop ends them with the context: a message cut off
	// after its final dot is then of unknown outcome.
	Stop job.Stop
	// OnRow, when set, is called with the fate of every row, in the source's order (a
	// run of over a thousand rejected rows behind a row in flight may come early).
	OnRow func(RowResult)
	// OnProgress, when set, is called after each row with the rows handled so far and
	// their fates: Kind is ProgressKind, Total is -1 (a source is read once, as it is
	// sent, so its rows are not known before the end).
	OnProgress func(job.Progress)
	// Observer, when set, is told of the send as one phase (job.Phase{Job: "send", Name:
	// "send"}): its start, the fates of every batch of rows done, and its end; the relay's
	// messages run under the context PhaseStarted returns (package otel's spans nest so).
	Observer job.Observer
}

// sendPhase is the phase a send reports to SendOptions.Observer.
var sendPhase = job.Phase{Job: "send", Name: "send"}

// observeEvery is how many rows a send reports to its Observer at once.
const observeEvery = 256

// JournalError reports a journal that cannot be used for the job: bound to another message
// or shard, unreadable, or corrupt.
type JournalError struct {
	// Path is the journal's file.
	Path string
	// MessageChanged reports a journal written for another message: a fix after a
	// partial send. Keep it, and send the corrected message to the rows it does not
	// record with a new journal and ContinueFrom.
	MessageChanged bool
	// Journal and Want are the shards of the journal and of the job, when they differ.
	Journal, Want ShardSpec
	// Err is the underlying error.
	Err error
}

// Error implements the error interface.
func (e *JournalError) Error() string {
	switch {
	case e.MessageChanged:
		return fmt.Sprintf("journal %s was written for another message (the template, variables, defaults, merge variables or custom arguments changed): keep it, and send the corrected message to the rows it does not record with a new journal continuing from it", e.Path)
	case e.Journal != e.Want:
		return fmt.Sprintf("journal %s is bound to %s, not %s", e.Path, shardText(e.Journal), shardText(e.Want))
	}
	return fmt.Sprintf("journal %s: %v", e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *JournalError) Unwrap() error { return e.Err }

func shardText(s ShardSpec) string {
	if s.Count <= 1 {
		return "no shard"
	}
	return fmt.Sprintf("shard index %d of %d", s.Index, s.Count)
}

// openJournal opens the job's journal at path, telling a changed message from a changed
// shard.
func (j *Job) openJournal(path string) (*FileJournal, error) {
	jr, err := OpenJournal(path, j.binding)
	var mm *JournalMismatchError
	switch {
	case errors.As(err, &mm):
		e := &JournalError{Path: path, Err: err, Journal: mm.Journal.Shard, Want: j.binding.Shard}
		if mm.Journal.Shard == j.binding.Shard || mm.Journal.Fingerprint != j.binding.Fingerprint {
			e.MessageChanged = mm.Journal.Fingerprint != j.binding.Fingerprint && mm.Journal.Shard == j.binding.Shard
		}
		return nil, e
	case err != nil:
		return nil, &JournalError{Path: path, Err: err, Journal: j.binding.Shard, Want: j.binding.Shard}
	}
	return jr, nil
}

// Send sends the message of every row of the source through relay (its rate and
// connections are the relay's options) and returns the fate of every row. It reads the
// source once to send, and once before when CheckEscaping has tags to check.
//
// Before sending it fails for a value the subject or text part would show HTML-escaped
// (*EscapeError, from a pass over the source: see CheckEscaping), for a send to more than
// one row without a one-click unsubscription (*UnsubscribeError, see CheckUnsubscribe) and
// for a journal that
// cannot be used (*JournalError). A failure
// that stops the run (a read error of the source, a session failure of the relay, a
// journal that cannot take a record) is returned with the result, the rows left counted
// not attempted. An interrupted ctx starts no new row (SendOptions.Stop says how the
// messages in flight end) and leaves the rows after it not attempted, and Send returns the
// result and ctx's error.
func (j *Job) Send(ctx context.Context, relay *smtp.Relay, opts SendOptions) (res *Result, err error) {
	if opts.Observer == nil {
		res, _, err = j.send(ctx, relay, opts)
		return res, err
	}
	ctx = opts.Observer.PhaseStarted(ctx, sendPhase)
	res, run, err := j.send(ctx, relay, opts)
	var all job.Tally
	if res != nil {
		all = res.Tally
	}
	if run != nil && run.observed != (job.Tally{}) {
		opts.Observer.RowsDone(ctx, sendPhase, run.observed)
	}
	opts.Observer.PhaseEnded(ctx, sendPhase, all, err)
	return res, err
}

// send is Send; it returns the run too, whose last rows an observed Send reports.
func (j *Job) send(ctx context.Context, relay *smtp.Relay, opts SendOptions) (*Result, *sendRun, error) {
	continuing := opts.ContinueFrom != "" || opts.ContinueFromRecords != nil
	if continuing && opts.Journal == "" && opts.JournalStore == nil {
		return nil, nil, errors.New("mailmerge: ContinueFrom needs a Journal")
	}
	if err := j.CheckEscaping(ctx); err != nil {
		return nil, nil, err
	}
	if err := j.CheckUnsubscribe(ctx); err != nil {
		return nil, nil, err
	}
	aud, err := j.readAudience(ctx)
	if err != nil {
		return nil, nil, err
	}
	var journal *FileJournal
	if opts.Journal != "" && opts.JournalStore == nil {
		var err error
		if journal, err = j.openJournal(opts.Journal); err != nil {
			return nil, nil, err
		}
		defer journal.Close()
	}
	var earlier *keyLines
	switch {
	case opts.ContinueFromRecords != nil:
		earlier = newKeyLines()
		for r, err := range opts.ContinueFromRecords {
			if err != nil {
				return nil, nil, &JournalError{Path: opts.ContinueFrom, Err: err, Journal: j.binding.Shard, Want: j.binding.Shard}
			}
			earlier.carry(r)
		}
	case opts.ContinueFrom != "":
		var err error
		if earlier, err = j.readEarlier(opts.ContinueFrom); err != nil {
			return nil, nil, err
		}
	}
	run := &sendRun{opts: opts, res: &Result{}, ctx: ctx, journal: opts.JournalStore}
	if journal != nil {
		run.journal = journal
	}
	rows := func(yield func(string, *smtp.Message) bool) {
		index := 0
		for row, err := range j.src.Rows(ctx) {
			if err != nil {
				run.stop = err
				return
			}
			run.res.Rows++
			i := index
			index++
			fate, msg, key := j.decide(i, row, nil, earlier, aud)
			if key == "" {
				run.early(fate)
				continue
			}
			// A row decided here (rejected for an empty value, skipped for ContinueFrom)
			// goes to sendKeyed without a message: its one set of keys then holds the
			// address, so that a later row of it is a duplicate, as Check and the
			// preview say, and sendKeyed answers it invalid without sending anything.
			raw := row.Raw
			if raw == "" {
				raw = row.Address
			}
			run.queue = append(run.queue, pending{index: run.next, row: fate, raw: raw, decided: msg == nil})
			pos := int32(min(row.Line, math.MaxInt32))
			if row.Line == 0 {
				pos = -int32(min(i+1, math.MaxInt32))
			}
			run.positions = append(run.positions, pos)
			run.next++
			if !yield(key, msg) {
				return
			}
		}
	}
	results, err := sendKeyed(ctx, relay, rows, keyedOptions{journal: run.journal, shard: j.shard,
		resendUnknown: opts.ResendUnknown, resendRefused: opts.ResendRefused, stop: opts.Stop})
	if err != nil {
		return nil, nil, err
	}
	for kr := range results {
		run.add(kr)
	}
	run.flush(run.next)
	if journal != nil {
		if cerr := journal.Close(); cerr != nil && run.stop == nil {
			run.stop = cerr
		}
	}
	if run.stop != nil {
		return run.res, run, run.stop
	}
	if ctx.Err() != nil && run.res.Tally.NotAttempted > 0 {
		return run.res, run, ctx.Err()
	}
	return run.res, run, checkBudgets(run.res, opts)
}

// decide answers a row before the relay: rejected by the source (no key), of another shard
// (left to sendKeyed to skip, as it always did), a duplicate of a row seen (with seen;
// Send leaves duplicates to sendKeyed), skipped for ContinueFrom, suppressed or not
// subscribed (by aud), or rejected for an empty value (with the key and no message); else
// it returns the row's message and key.
func (j *Job) decide(index int, row Row, seen, earlier *keyLines, aud *audience) (RowResult, *smtp.Message, string) {
	raw := row.Raw
	if raw == "" {
		raw = row.Address
	}
	fate := RowResult{Line: row.Line, Index: index, Address: raw}
	if row.Reject != "" {
		fate.Fate, fate.Reason = job.Rejected, row.Reject
		return fate, nil, ""
	}
	addr := strings.ToLower(strings.TrimSpace(row.Address))
	key := addr
	if row.Key != "" {
		key = row.Key
	}
	fate.Address = addr
	if j.shard.Count > 1 && Shard(key, j.shard.Count) != j.shard.Index {
		return fate, &smtp.Message{}, key // sendKeyed skips it (SkipShard)
	}
	if seen != nil {
		pos := int32(min(row.Line, math.MaxInt32))
		if pos == 0 {
			pos = -int32(min(index+1, math.MaxInt32))
		}
		if first, dup := seen.add(key, pos); dup {
			fate.Address = raw
			fate.Fate, fate.Reason = job.Rejected, duplicateOf(first)
			return fate, nil, ""
		}
	}
	if f, ok := earlier.fate(key); ok {
		fate.Fate, fate.Skip, fate.Continued = job.Skipped, SkipAlreadySent, true
		fate.Previous = &JournalRecord{Key: key, Fate: f}
		return fate, nil, key
	}
	if why, notSubscribed := aud.judge(addressKey(row.Address), row); why != "" || notSubscribed != "" {
		fate.Fate, fate.Reason = job.Suppressed, why
		if why == "" {
			fate.Fate, fate.Reason = job.NotSubscribed, notSubscribed
		}
		return fate, nil, key
	}
	msg, why := j.message(row)
	if why != "" {
		fate.Address = raw
		fate.Fate, fate.Reason = job.Rejected, why
		return fate, nil, key
	}
	return fate, msg, key
}

// keyLines is the set of the keys seen so far with the line of each, kept as 128-bit
// hashes (as smtp's own set of keys) so that memory does not grow with the addresses'
// length.
type keyLines struct {
	s1, s2 maphash.Seed
	m      map[[2]uint64]int32
}

func newKeyLines() *keyLines {
	return &keyLines{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), m: map[[2]uint64]int32{}}
}

func (k *keyLines) hash(key string) [2]uint64 {
	return [2]uint64{maphash.String(k.s1, key), maphash.String(k.s2, key)}
}

// add adds key, first seen at pos, and reports the pos of an earlier one.
func (k *keyLines) add(key string, pos int32) (int32, bool) {
	h := k.hash(key)
	if first, ok := k.m[h]; ok {
		return first, true
	}
	k.m[h] = pos
	return 0, false
}

// duplicateOf is the reason of a duplicate whose first row stands at pos: its line, or
// (negative) its position in a source without lines.
func duplicateOf(pos int32) string {
	if pos < 0 {
		return fmt.Sprintf("duplicate of row %d", -pos)
	}
	return fmt.Sprintf("duplicate of line %d", pos)
}

// carry keeps the fate of an earlier journal's record, the last record of a key
// superseding its earlier ones. A deferred key was not delivered: the send continuing
// from the journal sends it.
func (k *keyLines) carry(r JournalRecord) {
	h := k.hash(r.Key)
	if r.Fate == job.Deferred {
		delete(k.m, h)
		return
	}
	k.m[h] = int32(r.Fate)
}

// fate returns the fate carry kept for key; false for a nil set.
func (k *keyLines) fate(key string) (job.Fate, bool) {
	if k == nil {
		return 0, false
	}
	v, ok := k.m[k.hash(key)]
	return job.Fate(v), ok
}

// sendRun is the state of one Send: the result, and the rows between the source and
// their results, reported in the source's order.
type sendRun struct {
	opts      SendOptions
	res       *Result
	positions []int32 // of each row given to sendKeyed, by its index: a line, or -(position+1)
	stop      error
	queue     []pending // rows read and not yet reported, in the source's order
	next      int       // the index sendKeyed gives the next row yielded to it
	done      int
	tally     job.Tally // the fates of the done rows, for OnProgress
	ctx       context.Context
	observed  job.Tally    // the fates of the rows not yet told to the Observer
	journal   JournalStore // where the rows decided without sending are recorded; may be nil
}

// pending is a row waiting for its report: one yielded to sendKeyed (index ≥ 0), or one
// decided before (index -1), reported after the rows before it.
type pending struct {
	index   int
	row     RowResult
	raw     string // the address as written, for a duplicate
	decided bool   // row is its fate, unless sendKeyed finds a duplicate
}

// maxQueuedEarly bounds the rows decided early that wait behind rows in flight: beyond it
// they are reported at once, out of the source's order.
const maxQueuedEarly = 1024

func (run *sendRun) early(r RowResult) {
	if len(run.queue) == 0 || len(run.queue) >= maxQueuedEarly {
		run.report(r)
		return
	}
	run.queue = append(run.queue, pending{index: -1, row: r})
}

// flush reports the rows decided early queued before the row of index, and returns that
// row's entry.
func (run *sendRun) flush(index int) (pending, bool) {
	for len(run.queue) > 0 {
		p := run.queue[0]
		if p.index >= 0 && p.index > index {
			return pending{}, false
		}
		run.queue = run.queue[1:]
		if p.index < 0 {
			run.report(p.row)
		} else if p.index == index {
			return p, true
		}
	}
	return pending{}, false
}

// add counts the result of a row given to sendKeyed.
func (run *sendRun) add(kr keyedResult) {
	p, _ := run.flush(kr.Index)
	r := p.row
	var dup *duplicateKeyError
	if kr.Fate == job.Rejected && errors.As(kr.Err, &dup) && dup.First < len(run.positions) {
		r = RowResult{Line: r.Line, Index: r.Index, Address: p.raw, Fate: job.Rejected, Reason: duplicateOf(run.positions[dup.First])}
		run.report(r)
		return
	}
	if p.decided && (r.Fate == job.Suppressed || r.Fate == job.NotSubscribed) {
		if kr.Previous != nil && kr.Fate != job.Rejected {
			// The journal's record of an earlier run outweighs this run's reading: a row
			// sent (or of unknown outcome) before its address was suppressed stays so,
			// and a row decided before keeps that decision.
			p.decided = false
		} else if run.journal != nil {
			// Recorded as decided, so that a rerun does not decide it again.
			if err := run.journal.Decide(kr.Key, r.Fate, r.Reason); err != nil && run.stop == nil {
				run.stop = fmt.Errorf("%w: %w", errJournalFailed, err)
			}
		}
	}
	if p.decided && r.Continued && kr.Previous == nil && run.journal != nil && r.Previous != nil {
		// The new journal takes over the earlier one's record, so that a send continuing
		// from it in turn skips the row too: a chain of corrections sends no row twice.
		if err := run.carry(kr.Key, r.Previous.Fate); err != nil && run.stop == nil {
			run.stop = fmt.Errorf("%w: %w", errJournalFailed, err)
		}
	}
	if p.decided {
		run.report(r)
		return
	}
	// r.Address is the row's address already: a list's rows are keyed by subscriber.
	r.MessageID, r.Err, r.Previous, r.Skip = kr.MessageID, kr.Err, kr.Previous, kr.Skip
	if kr.Err != nil {
		r.Reason = kr.Err.Error()
	}
	r.Fate = kr.Fate
	switch kr.Fate {
	case job.Skipped:
		switch kr.Skip {
		case SkipUnknown:
			r.Reason = "unknown in the journal: not sent again without resending unknown rows"
		case SkipRefused:
			r.Reason = "refused in an earlier run"
			if kr.Previous != nil && kr.Previous.Reply != "" {
				r.Reason += " (" + kr.Previous.Reply + ")"
			}
			r.Reason += ": not sent again without resending refused rows"
		}
	case job.Suppressed, job.NotSubscribed: // decided by an earlier run, with its reason
		if kr.Previous != nil {
			r.Reason = kr.Previous.Reply
		}
	case job.NotAttempted:
		if run.stop == nil && errors.Is(kr.Err, smtp.ErrRunStopped) {
			run.stop = kr.Err
		}
	}
	run.report(r)
}

// continuedReason is the reply of a record taken over from the journal continued from.
const continuedReason = "recorded by the journal this one continued from"

// carry records in the run's journal the fate of key in the journal continued from.
func (run *sendRun) carry(key string, f job.Fate) error {
	switch f {
	case job.Suppressed, job.NotSubscribed:
		return run.journal.Decide(key, f, continuedReason)
	case job.Done, job.Refused:
		return run.journal.Record(JournalRecord{Key: key, Fate: f, Reply: continuedReason})
	}
	// In flight or unknown there: it may have been delivered.
	return run.journal.Record(JournalRecord{Key: key, Fate: job.Unknown, Reply: continuedReason})
}

// report counts a row's fate, lists it, and tells OnRow and OnProgress.
func (run *sendRun) report(r RowResult) {
	res := run.res
	res.Tally.Add(r.Fate, 1)
	switch r.Fate {
	case job.Refused:
		res.RefusedRows.add(r)
	case job.Unknown:
		res.UnknownRows.add(r)
	case job.Deferred:
		res.DeferredRows.add(r)
	case job.Rejected:
		res.RejectedRows.add(r)
	case job.Suppressed:
		res.SuppressedRows.add(r)
	case job.NotSubscribed:
		res.NotSubscribedRows.add(r)
	case job.Skipped:
		switch {
		case r.Continued:
			res.SkippedContinued++
		case r.Skip == SkipAlreadySent:
			res.SkippedSent++
		case r.Skip == SkipRefused:
			res.SkippedRefused++
			res.RefusedRows.add(r)
		case r.Skip == SkipUnknown:
			res.SkippedUnknown++
			res.UnknownRows.add(r)
		case r.Skip == SkipShard:
			res.SkippedShard++
		}
	}
	if run.opts.OnRow != nil {
		run.opts.OnRow(r)
	}
	run.done++
	run.tally.Add(r.Fate, 1)
	if run.opts.OnProgress != nil {
		run.opts.OnProgress(job.Progress{Kind: ProgressKind, Done: run.done, Total: -1, Tally: run.tally})
	}
	if run.opts.Observer != nil {
		run.observed.Add(r.Fate, 1)
		if run.observed.Total() >= observeEvery {
			run.opts.Observer.RowsDone(run.ctx, sendPhase, run.observed)
			run.observed = job.Tally{}
		}
	}
}

// readEarlier reads the journal of ContinueFrom: it must be of the job's shard, and may be
// bound to another message.
func (j *Job) readEarlier(path string) (*keyLines, error) {
	keys := newKeyLines()
	b, err := ReadJournal(path, func(r JournalRecord) { keys.carry(r) })
	if err != nil {
		return nil, &JournalError{Path: path, Err: err, Journal: j.binding.Shard, Want: j.binding.Shard}
	}
	if b.Shard != j.binding.Shard {
		return nil, &JournalError{Path: path, Err: ErrJournalMismatch, Journal: b.Shard, Want: j.binding.Shard}
	}
	return keys, nil
}

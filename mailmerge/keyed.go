package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/smtp"
)

// SkipReason says why a row was skipped.
type SkipReason int

// The reasons of a skipped row.
const (
	// SkipNone: the row was not skipped.
	SkipNone SkipReason = iota
	// SkipAlreadySent: the journal records the row sent.
	SkipAlreadySent
	// SkipRefused: the journal records the row refused.
	SkipRefused
	// SkipUnknown: the journal records the row's outcome unknown, or in flight (the
	// process died after the final dot).
	SkipUnknown
	// SkipShard: the row belongs to another shard.
	SkipShard
)

var skipReasonNames = [...]string{SkipNone: "", SkipAlreadySent: "already_sent", SkipRefused: "refused", SkipUnknown: "unknown", SkipShard: "shard"}

// String returns already_sent, refused, unknown, shard, or "" for SkipNone.
func (s SkipReason) String() string {
	if s >= 0 && int(s) < len(skipReasonNames) {
		return skipReasonNames[s]
	}
	return "SkipReason(" + strconv.Itoa(int(s)) + ")"
}

// Errors of keyed results.
var (
	// errDuplicateKey is matched by the result of a key given again.
	errDuplicateKey = errors.New("mailmerge: the key was given before in this run")
	// errInvalidKey is matched by the result of an empty key or one that is not valid
	// UTF-8.
	errInvalidKey = errors.New("mailmerge: a key must be non-empty UTF-8")
	// errJournalFailed is matched when the journal could not take a record: the run
	// stops.
	errJournalFailed = errors.New("mailmerge: the journal failed")
)

// keyedOptions configures sendKeyed.
type keyedOptions struct {
	// journal records each key's fate; a rerun with the same journal skips the keys
	// recorded sent, refused or unknown. Nil sends without one.
	journal JournalStore
	// resendUnknown sends again the keys the journal records unknown or in flight.
	resendUnknown bool
	// resendRefused sends again the keys the journal records refused.
	resendRefused bool
	// shard sends only the keys of one shard and skips the others (SkipShard). The
	// journal must be bound to the same shard.
	shard ShardSpec
	// stop is how the messages in flight end once ctx ends (which starts no new key).
	stop job.Stop
}

// keyedResult is the outcome of the message of one key.
type keyedResult struct {
	// SendResult is the relay's outcome; Index is the position of the key in the
	// sequence.
	smtp.SendResult
	// Key is the key given with the message.
	Key string
	// Fate is what was done with the message: job.Done (sent), Refused, Unknown,
	// Deferred, Skipped (for Skip), Rejected (an invalid key or message, a duplicate:
	// nothing journaled) or NotAttempted.
	Fate job.Fate
	// Skip says why, when Fate is job.Skipped.
	Skip SkipReason
	// Previous is the journal's record of the key before this run, if any.
	Previous *JournalRecord
	// JournalErr reports that the journal could not record the outcome: the run stops,
	// and a rerun reports the key unknown.
	JournalErr error
}

// sendKeyed sends the message of every key of msgs through relay (in parallel over its
// pool, retrying 4xx replies, in input order), and yields one keyedResult per key.
//
// With a journal, each message is claimed in flight, durably, before its final dot, then
// recorded sent, refused or unknown before its result is yielded; a rerun with the same
// journal skips the keys recorded sent or refused, and reports the keys recorded unknown or
// left in flight as skipped (SkipUnknown) without sending them, unless resendUnknown; a key
// recorded suppressed or not subscribed keeps that fate and is not sent.
//
// Only a verdict about one message is final: a 5xx reply to RCPT for every recipient, or
// to DATA. A failure of the session (refused credentials, a TLS failure, a 5xx greeting or
// reply to MAIL FROM, a relay that stays unreachable, a journal write that fails) stops
// the run: the messages on the wire finish, and every other key is not attempted, matching
// smtp.ErrRunStopped. A nil message is rejected without sending; a key given twice is
// rejected the second time (a *duplicateKeyError).
func sendKeyed(ctx context.Context, relay *smtp.Relay, msgs iter.Seq2[string, *smtp.Message], opts keyedOptions) (iter.Seq[keyedResult], error) {
	if err := opts.shard.validate(); err != nil {
		return nil, err
	}
	if opts.journal != nil {
		if b := opts.journal.Binding(); b.Shard != opts.shard {
			want := b
			want.Shard = opts.shard
			path := ""
			if fj, ok := opts.journal.(*FileJournal); ok {
				path = fj.Path()
			}
			return nil, &JournalMismatchError{Path: path, Journal: b, Want: want}
		}
	}
	return func(yield func(keyedResult) bool) {
		// ctx's end starts no new key (decide); the messages in flight run under work.
		work, cancelWork := opts.stop.InFlight(ctx)
		defer cancelWork()
		run := &keyedRun{opts: opts, seen: newKeySet()}
		// Every key goes to the relay, a decided one as a nil message that holds its place
		// (answered at once, without a goroutine): the relay's window then bounds the keys
		// between this queue's ends, however many are decided in a row.
		var queue []*keyedJob
		src := func(y func(*smtp.Message, *smtp.Hook) bool) {
			i := 0
			for k, m := range msgs {
				kj := &keyedJob{ctx: work, run: run, key: k, msg: m}
				kj.res, kj.decided = run.decide(ctx, i, kj)
				i++
				queue = append(queue, kj)
				if kj.decided {
					if !y(nil, nil) {
						return
					}
					continue
				}
				if !y(m, kj.hook()) {
					return
				}
			}
		}
		for sr := range relay.SendAllHooked(work, src) {
			kj := queue[0]
			queue[0] = nil
			queue = queue[1:]
			res := kj.res
			if !kj.decided {
				res = kj.result(sr)
			}
			res.Index = sr.Index
			if !yield(res) {
				return
			}
		}
	}, nil
}

// keyedRun is the state of one sendKeyed.
type keyedRun struct {
	opts keyedOptions
	seen keySet // keys given so far; used by decide only, on one goroutine

	mu   sync.Mutex
	stop error // the failure that stopped the run, once one did
}

func (run *keyedRun) stopped() error {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.stop
}

// keyedJob is a key and its message on its way: decide sets prev, the journal's record of
// the key, and the hook's Done the classified outcome.
type keyedJob struct {
	ctx     context.Context // the work in flight's
	run     *keyedRun
	key     string
	msg     *smtp.Message
	prev    *JournalRecord
	decided bool        // res is the key's result: the message goes nowhere
	sent    bool        // done classified the relay's outcome into res
	res     keyedResult // decided, or classified by Done
}

// decide answers a key that is not to be sent: invalid, of another shard, given before,
// in the journal, or after the run stopped.
func (run *keyedRun) decide(ctx context.Context, i int, j *keyedJob) (keyedResult, bool) {
	key, msg := j.key, j.msg
	res := keyedResult{Key: key, SendResult: smtp.SendResult{Index: i}}
	if key == "" || !utf8.ValidString(key) {
		res.Fate, res.Err = job.Rejected, fmt.Errorf("%w: %q", errInvalidKey, key)
		return res, true
	}
	if !run.opts.shard.includes(key) {
		res.Fate, res.Skip = job.Skipped, SkipShard
		return res, true
	}
	if first, dup := run.seen.add(key, i); dup {
		res.Fate, res.Err = job.Rejected, &duplicateKeyError{Key: key, First: first}
		return res, true
	}
	if journal := run.opts.journal; journal != nil {
		if prev, ok := journal.Lookup(key); ok {
			res.Previous, j.prev = &prev, &prev
			res.MessageID = prev.MessageID
			skip := SkipNone
			switch prev.Fate {
			case job.Done:
				skip = SkipAlreadySent
				res.Reply = parseReplyLine(prev.Reply)
			case job.Refused:
				if !run.opts.resendRefused {
					skip = SkipRefused
				}
			case job.Unknown:
				if !run.opts.resendUnknown {
					skip = SkipUnknown
				}
			case job.Suppressed, job.NotSubscribed:
				// Decided without sending by an earlier run: the row keeps its fate.
				res.Fate, res.MessageID = prev.Fate, ""
				return res, true
			}
			if skip != SkipNone {
				res.Fate, res.Skip = job.Skipped, skip
				return res, true
			}
			res.MessageID = ""
		}
	}
	if msg == nil {
		res.Fate, res.Err = job.Rejected, errors.New("mailmerge: nil message")
		return res, true
	}
	if err := run.stopped(); err != nil {
		res.Fate, res.Err = job.NotAttempted, err
		return res, true
	}
	if err := ctx.Err(); err != nil {
		res.Fate, res.Err = job.NotAttempted, fmt.Errorf("%w (%w)", smtp.ErrNotAttempted, err)
		return res, true
	}
	return res, false
}

// hook is the journal's part in sending the key's message.
func (j *keyedJob) hook() *smtp.Hook {
	journal := j.run.opts.journal
	h := &smtp.Hook{Done: j.done}
	if journal == nil {
		return h
	}
	h.BeforeDot = func(messageID string) error {
		if err := journal.Claim(j.key, messageID); err != nil {
			return fmt.Errorf("%w: %w", errJournalFailed, err)
		}
		return nil
	}
	h.Deferred = func(res *smtp.SendResult) error {
		// A 4xx reply to the final dot: not delivered, and the key may be sent again, by
		// this run or the next.
		return j.record(job.Deferred, res)
	}
	return h
}

// record records the key's outcome, with the reply or refusal of res.
func (j *keyedJob) record(fate job.Fate, res *smtp.SendResult) error {
	journal := j.run.opts.journal
	if journal == nil {
		return nil
	}
	rec := JournalRecord{Key: j.key, Fate: fate, MessageID: res.MessageID, Reply: outcomeText(res)}
	if err := journal.Record(rec); err != nil {
		return fmt.Errorf("%w: %w", errJournalFailed, err)
	}
	return nil
}

// done classifies the outcome of the key's message, journals it, and stops the run on a
// failure of the session. It runs on the goroutine that sent the message, before the relay
// takes another one from the run.
func (j *keyedJob) done(sr smtp.SendResult) error {
	res := keyedResult{SendResult: sr, Key: j.key, Previous: j.prev}
	var stop error
	res.Fate, stop = classifyKeyed(j.ctx, sr)
	if stop != nil {
		stop = runStoppedBy(stop)
		res.Err = stop
	}
	if res.Fate == job.Skipped { // claimed by another run: its record is the key's
		res.Skip, res.Previous = claimedSkip(res.Err)
		if res.Previous != nil {
			res.MessageID, res.Reply = res.Previous.MessageID, parseReplyLine(res.Previous.Reply)
		}
	}
	switch res.Fate {
	case job.Done, job.Refused, job.Unknown:
		if err := j.record(res.Fate, &res.SendResult); err != nil {
			res.JournalErr = err
			stop = runStoppedBy(err)
		}
	}
	if stop != nil {
		j.run.mu.Lock()
		if j.run.stop == nil {
			j.run.stop = stop
		}
		j.run.mu.Unlock()
	}
	j.res, j.sent = res, true
	return stop
}

// result is the key's result once the relay has yielded sr: the outcome done classified.
func (j *keyedJob) result(sr smtp.SendResult) keyedResult {
	if !j.sent {
		// The relay answered without sending (the run stopped, or ctx ended, before the
		// message took a worker): done was not called.
		res := keyedResult{SendResult: sr, Key: j.key, Previous: j.prev, Fate: job.NotAttempted}
		return res
	}
	return j.res
}

// runStoppedBy is the error of the keys a run stopped by cause does not send: it matches
// smtp.ErrRunStopped and cause.
func runStoppedBy(cause error) error {
	if errors.Is(cause, smtp.ErrRunStopped) {
		return cause
	}
	return &runStopped{cause: cause}
}

// runStopped is the error of the keys a stopped run did not send.
type runStopped struct{ cause error }

func (e *runStopped) Error() string   { return smtp.ErrRunStopped.Error() + ": " + e.cause.Error() }
func (e *runStopped) Unwrap() []error { return []error{smtp.ErrRunStopped, e.cause} }

// classifyKeyed gives the fate of a sent message, and the error that stops the run when
// the failure is one of the session rather than of the message.
func classifyKeyed(ctx context.Context, res smtp.SendResult) (job.Fate, error) {
	err := res.Err
	switch {
	case err == nil, errors.Is(err, smtp.ErrSomeRecipientsRefused):
		return job.Done, nil
	case errors.Is(err, smtp.ErrRunStopped):
		return job.NotAttempted, nil // the run stopped before (or while) this one went
	case errors.Is(err, smtp.ErrOutcomeUnknown):
		return job.Unknown, nil
	case errors.Is(err, ErrKeyClaimed):
		return job.Skipped, nil // abandoned before the final dot: another run has the key
	case errors.Is(err, errJournalFailed):
		return job.NotAttempted, err
	case errors.Is(err, smtp.ErrNotAttempted):
		return job.NotAttempted, nil
	case res.MessageID == "", refusedBeforeMail(err):
		// About the message itself, before anything was sent: the relay sets MessageID
		// as soon as the message is built.
		return job.Rejected, nil
	}
	var rerr *smtp.RecipientsError
	if errors.As(err, &rerr) {
		for _, e := range rerr.Refused {
			if !e.Permanent() {
				return job.Deferred, nil
			}
		}
		return job.Refused, nil
	}
	var serr *smtp.ReplyError
	if errors.As(err, &serr) && serr.Command == "DATA" {
		if serr.Permanent() {
			return job.Refused, nil
		}
		return job.Deferred, nil
	}
	if ctx.Err() != nil {
		// Ended during a transaction or between retries, before the final dot: nothing
		// was delivered.
		if res.Attempts > 0 {
			return job.Deferred, nil
		}
		return job.NotAttempted, nil
	}
	// The greeting, EHLO, TLS, AUTH, MAIL FROM, or a connection that keeps failing:
	// nothing this run sends next would fare better.
	return job.NotAttempted, err
}

// refusedBeforeMail reports a refusal of the relay before MAIL: a message over the size
// the server or the relay takes, or one that needs SMTPUTF8 the server lacks.
func refusedBeforeMail(err error) bool {
	var sizeErr *smtp.SizeError
	return errors.As(err, &sizeErr) || errors.Is(err, smtp.ErrSMTPUTF8Required)
}

// outcomeText is the reply recorded with an outcome: the reply to the final dot, else the
// first refusal.
func outcomeText(res *smtp.SendResult) string {
	if res.Reply.Code != 0 {
		return res.Reply.String()
	}
	var rerr *smtp.RecipientsError
	if errors.As(res.Err, &rerr) && len(rerr.Refused) > 0 {
		return replyText(rerr.Refused[0])
	}
	var serr *smtp.ReplyError
	if errors.As(res.Err, &serr) {
		return replyText(serr)
	}
	return ""
}

// replyText writes a refusal as the server did, on one line.
func replyText(e *smtp.ReplyError) string {
	return smtp.Reply{Code: e.Code, EnhancedCode: e.EnhancedCode, Message: e.Message}.String()
}

// parseReplyLine reads back a Reply written by smtp.Reply.String: "250 2.0.0 Ok".
func parseReplyLine(s string) smtp.Reply {
	code, rest, _ := strings.Cut(s, " ")
	n, err := strconv.Atoi(code)
	if err != nil || n < 200 || n > 599 {
		return smtp.Reply{Message: s}
	}
	if enh, msg, _ := strings.Cut(rest, " "); isEnhancedCode(enh) {
		return smtp.Reply{Code: n, EnhancedCode: enh, Message: msg}
	}
	return smtp.Reply{Code: n, Message: rest}
}

// isEnhancedCode reports an RFC 3463 status code (class.subject.detail), as the relay
// reads one off a reply.
func isEnhancedCode(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[0]) != 1 || !strings.ContainsAny(parts[0], "245") {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// claimedSkip says why a key another run claimed is skipped, from that run's record (nil
// when the store's error does not carry it: then the key counts as unknown).
func claimedSkip(err error) (SkipReason, *JournalRecord) {
	var c *ClaimedError
	if !errors.As(err, &c) {
		return SkipUnknown, nil
	}
	rec := c.Record
	switch rec.Fate {
	case job.Done:
		return SkipAlreadySent, &rec
	case job.Refused:
		return SkipRefused, &rec
	}
	return SkipUnknown, &rec // in flight in the other run, or of unknown outcome
}

// keySet is the set of the keys a run was given, kept as 128-bit hashes of the keys (16
// bytes and the map's overhead per key, whatever their length) so that a run of millions of
// keys stays small. Two different keys are taken for one only if both of their 64-bit
// hashes, with independent random seeds, collide: for n keys the probability that this
// happens at all is at most n²/2¹²⁹, about 10⁻²⁵ for ten million keys. The second would
// then be rejected as a duplicate (never sent twice, never skipped silently).
type keySet struct {
	s1, s2 maphash.Seed
	m      map[[2]uint64]int32 // the index of the key's first message (saturated)
}

func newKeySet() keySet {
	return keySet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), m: make(map[[2]uint64]int32)}
}

// add adds key, given at index i, and reports the index of an earlier one.
func (k keySet) add(key string, i int) (int, bool) {
	h := [2]uint64{maphash.String(k.s1, key), maphash.String(k.s2, key)}
	if first, ok := k.m[h]; ok {
		return int(first), true
	}
	k.m[h] = int32(min(i, math.MaxInt32))
	return 0, false
}

// duplicateKeyError is the error of a key given again in a run; it matches
// errDuplicateKey.
type duplicateKeyError struct {
	// Key is the key.
	Key string
	// First is the index of the key's first message in the sequence.
	First int
}

func (e *duplicateKeyError) Error() string { return fmt.Sprintf("%v: %q", errDuplicateKey, e.Key) }

func (e *duplicateKeyError) Is(target error) bool { return target == errDuplicateKey }

package smtp

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"strconv"
	"unicode/utf8"
)

// KeyState is what SendKeyed did with the message of a key.
type KeyState int

// The states of a KeyedResult.
const (
	// KeyNotAttempted: the message was not sent, and a rerun sends it. The
	// context ended first (Err matches ErrNotAttempted), or the run stopped
	// on a failure of the session (Err matches ErrRunStopped and the cause:
	// refused credentials, a TLS failure, a 5xx greeting or MAIL FROM, a
	// relay that stays unreachable, a journal that cannot be written).
	KeyNotAttempted KeyState = iota
	// KeySent: the server accepted the message, for every recipient or
	// (Err a *RecipientsError matching ErrSomeRecipientsRefused) some.
	KeySent
	// KeyRefused: the server refused the message itself, for good: a 5xx
	// reply to RCPT for every recipient, or to DATA. A rerun skips the key
	// unless SendKeyedOptions.ResendRefused.
	KeyRefused
	// KeyUnknown: the connection was lost after the final dot, before the
	// reply (Err matches ErrOutcomeUnknown). A rerun skips the key unless
	// SendKeyedOptions.ResendUnknown.
	KeyUnknown
	// KeyDeferred: the server answered 4xx until the retries ran out, or the
	// context ended between them; nothing was delivered, and a rerun sends
	// the key again.
	KeyDeferred
	// KeySkipped: not sent by this run, for the reason in Skip.
	KeySkipped
	// KeyInvalid: refused before sending: an empty key or one that is not
	// UTF-8 (ErrInvalidKey), a key given twice (ErrDuplicateKey, the later
	// ones), a nil message or one that cannot be built (*AddressError,
	// *HeaderError, *PartError, *SizeError, ...). Nothing is journaled.
	KeyInvalid
)

var keyStateNames = [...]string{
	KeyNotAttempted: "not_attempted", KeySent: "sent", KeyRefused: "refused", KeyUnknown: "unknown",
	KeyDeferred: "deferred", KeySkipped: "skipped", KeyInvalid: "invalid",
}

// String returns not_attempted, sent, refused, unknown, deferred, skipped
// or invalid.
func (s KeyState) String() string {
	if s >= 0 && int(s) < len(keyStateNames) {
		return keyStateNames[s]
	}
	return "KeyState(" + strconv.Itoa(int(s)) + ")"
}

// SkipReason says why a key was skipped.
type SkipReason int

// The reasons of a KeySkipped result.
const (
	// SkipNone: the key was not skipped.
	SkipNone SkipReason = iota
	// SkipAlreadySent: the journal records the key sent.
	SkipAlreadySent
	// SkipRefused: the journal records the key refused.
	SkipRefused
	// SkipUnknown: the journal records the key's outcome unknown, or in
	// flight (the process died after the final dot).
	SkipUnknown
	// SkipShard: the key belongs to another shard.
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

// Errors of SendKeyed results.
var (
	// ErrRunStopped is matched by the results SendKeyed did not send because
	// the run stopped on a failure of the session; the cause is wrapped too.
	ErrRunStopped = errors.New("sendloop/smtp: not attempted: the run stopped on a failure of the session")
	// ErrDuplicateKey is matched by the result of a key given again.
	ErrDuplicateKey = errors.New("sendloop/smtp: the key was given before in this run")
	// ErrInvalidKey is matched by the result of an empty key or one that is
	// not valid UTF-8.
	ErrInvalidKey = errors.New("sendloop/smtp: a key must be non-empty UTF-8")
	// ErrJournalFailed is matched when the journal could not take a record:
	// the run stops.
	ErrJournalFailed = errors.New("sendloop/smtp: the journal failed")
	// ErrKeyClaimed is matched by a shared journal's refusal of a key's
	// in-flight record, because another run holds the key or has settled it
	// since this run looked it up. The message is abandoned before its final
	// dot (nothing is delivered) and the key reported skipped, with the other
	// run's record: an error matching it should also implement
	// interface{ ClaimRecord() JournalRecord }.
	ErrKeyClaimed = errors.New("sendloop/smtp: the key is claimed by another run")
)

// SendKeyedOptions configures SendKeyed.
type SendKeyedOptions struct {
	// Journal records each key's fate; a rerun with the same journal skips
	// the keys recorded sent, refused or unknown. Nil sends without one.
	Journal Journal
	// ResendUnknown sends again the keys the journal records unknown or in
	// flight: their recipients may get the message twice.
	ResendUnknown bool
	// ResendRefused sends again the keys the journal records refused.
	ResendRefused bool
	// Shard sends only the keys of one shard (Shard(key, Count) == Index)
	// and skips the others (SkipShard). The journal must be bound to the
	// same shard.
	Shard ShardSpec
}

// KeyedResult is the outcome of the message of one key.
type KeyedResult struct {
	// SendResult is the outcome of sending, as SendAll gives it; Index is
	// the position of the key in the sequence.
	SendResult
	// Key is the key given with the message.
	Key string
	// State is what was done with the message.
	State KeyState
	// Skip says why, when State is KeySkipped.
	Skip SkipReason
	// Previous is the journal's record of the key before this run, if any
	// (State JournalInFlight, JournalSent, ...): for a skipped key it holds
	// the Message-ID and the reply of the earlier run.
	Previous *JournalRecord
	// JournalErr reports that the journal could not record the outcome:
	// the run stops, and a rerun reports the key unknown.
	JournalErr error
}

// SendKeyed sends the message of every key of msgs, as SendAll does (in
// parallel over the pool, retrying 4xx replies, in input order), and yields
// one KeyedResult per key, with its state: sent, refused, unknown,
// deferred, skipped (already in the journal, or of another shard), invalid,
// or not attempted.
//
// With a Journal, each message is recorded in flight, durably, before its
// final dot, then sent, refused or unknown before its result is yielded; a
// rerun with the same journal (after a crash, a kill, Ctrl-C) skips the
// keys recorded sent or refused, and reports the keys recorded unknown or
// left in flight as skipped (SkipUnknown) without sending them, unless
// ResendUnknown. New keys are sent. So no key is sent twice, and every key
// whose fate is unknown is named.
//
// Only a verdict about one message is final: a 5xx reply to RCPT for every
// recipient, or to DATA. A failure of the session (refused credentials, a
// TLS failure, a 5xx greeting or reply to MAIL FROM, a relay that stays
// unreachable after the retries, a journal write that fails) stops the run:
// the messages on the wire finish, and every other key is yielded
// KeyNotAttempted, matching ErrRunStopped, so that the corrected rerun sends
// them.
//
// SendKeyed returns an error, before sending anything, for an invalid
// Shard, or a Journal bound to another shard (*JournalMismatchError). A key
// given twice is KeyInvalid the second time (ErrDuplicateKey). Keys are
// compared as given: normalise addresses used as keys (trim them, lower-case
// them) so that one mailbox has one key. One run at a time may use a
// journal.
func (r *Relay) SendKeyed(ctx context.Context, msgs iter.Seq2[string, *Message], opts SendKeyedOptions) (iter.Seq[KeyedResult], error) {
	if err := opts.Shard.validate(); err != nil {
		return nil, err
	}
	if opts.Journal != nil {
		if b := opts.Journal.Binding(); b.Shard != opts.Shard {
			want := b
			want.Shard = opts.Shard
			path := ""
			if fj, ok := opts.Journal.(*FileJournal); ok {
				path = fj.Path()
			}
			return nil, &JournalMismatchError{Path: path, Journal: b, Want: want}
		}
	}
	return func(yield func(KeyedResult) bool) {
		run := &keyedRun{relay: r, opts: opts, b: &bulk{}, seen: newKeySet()}
		src := func(y func(*keyedJob) bool) {
			for k, m := range msgs {
				if !y(&keyedJob{key: k, msg: m}) {
					return
				}
			}
		}
		workers := 2 * r.maxConns
		now := func(i int, j *keyedJob) (KeyedResult, bool) { return run.decide(ctx, i, j) }
		work := func(i int, j *keyedJob) KeyedResult { return run.send(ctx, i, j) }
		runOrdered(workers, 4*workers, src, now, work, yield)
	}, nil
}

// keyedRun is the state of one SendKeyed.
type keyedRun struct {
	relay *Relay
	opts  SendKeyedOptions
	b     *bulk  // its failed() is the error that stopped the run
	seen  keySet // keys given so far; used by decide only, on one goroutine
}

// keyedJob is a key and its message; decide sets prev, the journal's
// record of the key, for send.
type keyedJob struct {
	key  string
	msg  *Message
	prev *JournalRecord
}

// decide answers a key that is not to be sent: invalid, of another shard,
// given before, in the journal, or after the run stopped.
func (run *keyedRun) decide(ctx context.Context, i int, j *keyedJob) (KeyedResult, bool) {
	key, msg := j.key, j.msg
	res := KeyedResult{Key: key, SendResult: SendResult{Index: i}}
	if key == "" || !utf8.ValidString(key) {
		res.State, res.Err = KeyInvalid, fmt.Errorf("%w: %q", ErrInvalidKey, key)
		return res, true
	}
	if !run.opts.Shard.includes(key) {
		res.State, res.Skip = KeySkipped, SkipShard
		return res, true
	}
	if first, dup := run.seen.add(key, i); dup {
		res.State, res.Err = KeyInvalid, &DuplicateKeyError{Key: key, First: first}
		return res, true
	}
	if journal := run.opts.Journal; journal != nil {
		if prev, ok := journal.Lookup(key); ok {
			res.Previous, j.prev = &prev, &prev
			res.MessageID = prev.MessageID
			skip := SkipNone
			switch prev.State {
			case JournalSent:
				skip = SkipAlreadySent
				res.Reply = parseReplyLine(prev.Reply)
			case JournalRefused:
				if !run.opts.ResendRefused {
					skip = SkipRefused
				}
			case JournalInFlight, JournalUnknown:
				if !run.opts.ResendUnknown {
					skip = SkipUnknown
				}
			}
			if skip != SkipNone {
				res.State, res.Skip = KeySkipped, skip
				return res, true
			}
			res.MessageID = ""
		}
	}
	if msg == nil {
		res.State, res.Err = KeyInvalid, errors.New("sendloop/smtp: nil message")
		return res, true
	}
	if err := run.b.failed(); err != nil {
		if !errors.Is(err, ErrRunStopped) {
			err = &runStopped{cause: err} // a setup failure the pool recorded
		}
		res.State, res.Err = KeyNotAttempted, err
		return res, true
	}
	if err := ctx.Err(); err != nil {
		res.State, res.Err = KeyNotAttempted, fmt.Errorf("%w (%w)", ErrNotAttempted, err)
		return res, true
	}
	return res, false
}

// send sends the message of key, classifies the outcome, journals it, and
// stops the run on a failure of the session.
func (run *keyedRun) send(ctx context.Context, i int, j *keyedJob) KeyedResult {
	res := KeyedResult{Key: j.key, Previous: j.prev}
	kt := &keyTx{journal: run.opts.Journal, key: j.key}
	res.SendResult = run.relay.sendOne(ctx, i, j.msg, run.b, kt)
	var stop error
	res.State, stop = classifyKeyed(ctx, res.SendResult, kt)
	if stop != nil {
		res.Err = stop
	}
	if res.State == KeySkipped { // claimed by another run: its record is the key's
		res.Skip, res.Previous = claimedSkip(res.Err)
		if res.Previous != nil {
			res.MessageID, res.Reply = res.Previous.MessageID, parseReplyLine(res.Previous.Reply)
		}
	}
	var jstate JournalState
	switch res.State {
	case KeySent:
		jstate = JournalSent
	case KeyRefused:
		jstate = JournalRefused
	case KeyUnknown:
		jstate = JournalUnknown
	}
	if jstate != 0 {
		if err := kt.record(jstate, &res.SendResult); err != nil {
			res.JournalErr = err
			stop = &runStopped{cause: err}
		}
	}
	if stop != nil {
		run.b.fail(stop)
	}
	return res
}

// keySet is the set of the keys a run was given, kept as 128-bit hashes of
// the keys (16 bytes and the map's overhead per key, whatever their length)
// so that a run of millions of keys stays small. Two different keys are
// taken for one only if both of their 64-bit hashes, with independent random
// seeds, collide: for n keys the probability that this happens at all is at
// most n²/2¹²⁹, about 10⁻²⁵ for ten million keys. The second would then be
// reported KeyInvalid as a duplicate (never sent twice, never skipped
// silently).
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

// DuplicateKeyError is the error of a key given again in a run (KeyInvalid); it matches
// ErrDuplicateKey.
type DuplicateKeyError struct {
	// Key is the key.
	Key string
	// First is the index of the key's first message in the sequence.
	First int
}

// Error implements the error interface.
func (e *DuplicateKeyError) Error() string { return fmt.Sprintf("%v: %q", ErrDuplicateKey, e.Key) }

// Is matches ErrDuplicateKey.
func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

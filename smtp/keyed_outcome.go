package smtp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// keyTx is the journal's part in sending the message of one key.
type keyTx struct {
	journal    Journal // nil: nothing is journaled
	key, msgID string
	built      bool // the message was built: a later failure is not about its content
	dotOut     bool // the final dot of the current attempt went out
}

// beforeDot records the message in flight.
func (k *keyTx) beforeDot() error { return k.record(JournalInFlight, nil) }

// record appends a record of the key, with the reply or refusal of res.
func (k *keyTx) record(state JournalState, res *SendResult) error {
	if k.journal == nil {
		return nil
	}
	rec := JournalRecord{Key: k.key, State: state, MessageID: k.msgID}
	if res != nil {
		rec.Reply = outcomeText(res)
	}
	if err := k.journal.Append(rec); err != nil {
		return fmt.Errorf("%w: %w", ErrJournalFailed, err)
	}
	return nil
}

// outcomeText is the reply recorded with a state: the reply to the final
// dot, else the first refusal.
func outcomeText(res *SendResult) string {
	if res.Reply.Code != 0 {
		return res.Reply.String()
	}
	var rerr *RecipientsError
	if errors.As(res.Err, &rerr) && len(rerr.Refused) > 0 {
		return replyText(rerr.Refused[0])
	}
	var serr *ReplyError
	if errors.As(res.Err, &serr) {
		return replyText(serr)
	}
	return ""
}

// replyText writes a refusal as the server did, on one line.
func replyText(e *ReplyError) string {
	return Reply{Code: e.Code, EnhancedCode: e.EnhancedCode, Message: e.Message}.String()
}

// parseReplyLine reads back a Reply written by Reply.String.
func parseReplyLine(s string) Reply {
	code, rest, _ := strings.Cut(s, " ")
	n, err := strconv.Atoi(code)
	if err != nil || n < 200 || n > 599 {
		return Reply{Message: s}
	}
	enhanced, msg := stripEnhancedCode("", rest)
	return Reply{Code: n, EnhancedCode: enhanced, Message: msg}
}

// claimedSkip says why a key another run claimed is skipped, from that run's record
// (nil when the journal's error does not carry it: then the key counts as unknown).
func claimedSkip(err error) (SkipReason, *JournalRecord) {
	var c interface{ ClaimRecord() JournalRecord }
	if !errors.As(err, &c) {
		return SkipUnknown, nil
	}
	rec := c.ClaimRecord()
	switch rec.State {
	case JournalSent:
		return SkipAlreadySent, &rec
	case JournalRefused:
		return SkipRefused, &rec
	}
	return SkipUnknown, &rec // in flight in the other run, or of unknown outcome
}

// runStopped is the error of the keys a stopped run did not send.
type runStopped struct{ cause error }

func (e *runStopped) Error() string   { return ErrRunStopped.Error() + ": " + e.cause.Error() }
func (e *runStopped) Unwrap() []error { return []error{ErrRunStopped, e.cause} }

// classifyKeyed gives the state of a sent message, and the error that stops
// the run when the failure is one of the session rather than of the
// message.
func classifyKeyed(ctx context.Context, res SendResult, kt *keyTx) (KeyState, error) {
	err := res.Err
	switch {
	case err == nil, errors.Is(err, ErrSomeRecipientsRefused):
		return KeySent, nil
	case errors.Is(err, ErrRunStopped):
		return KeyNotAttempted, nil // the run stopped before (or while) this one went
	case errors.Is(err, ErrOutcomeUnknown):
		return KeyUnknown, nil
	case errors.Is(err, ErrKeyClaimed):
		return KeySkipped, nil // abandoned before the final dot: another run has the key
	case errors.Is(err, ErrJournalFailed):
		return KeyNotAttempted, &runStopped{cause: err}
	case errors.Is(err, ErrNotAttempted):
		return KeyNotAttempted, nil
	case !kt.built, refusedBeforeMail(err):
		return KeyInvalid, nil // about the message itself, before anything was sent
	}
	var rerr *RecipientsError
	if errors.As(err, &rerr) {
		for _, e := range rerr.Refused {
			if !e.Permanent() {
				return KeyDeferred, nil
			}
		}
		return KeyRefused, nil
	}
	var serr *ReplyError
	if errors.As(err, &serr) && serr.Command == "DATA" {
		if serr.Permanent() {
			return KeyRefused, nil
		}
		return KeyDeferred, nil
	}
	if ctx.Err() != nil {
		// Ended during a transaction or between retries, before the final
		// dot: nothing was delivered.
		if res.Attempts > 0 {
			return KeyDeferred, nil
		}
		return KeyNotAttempted, nil
	}
	// The greeting, EHLO, TLS, AUTH, MAIL FROM, or a connection that keeps
	// failing: nothing this run sends next would fare better.
	return KeyNotAttempted, &runStopped{cause: err}
}

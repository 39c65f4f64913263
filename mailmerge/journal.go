package mailmerge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"time"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/smtp"
)

// JournalStore keeps a send's journal: per row's key (the lower-cased address), the last
// record of what a send did with it, so that a rerun after a crash, a kill or Ctrl-C sends
// no row twice. The file (OpenJournal) is one store and package mailmerge/pgjournal's
// PostgreSQL journal another; SendOptions.JournalStore takes any.
//
// A store must guarantee:
//   - Claim is durable when it returns: Send calls it before a message's final dot, so
//     that a run that dies from then on leaves the key unknown (Lookup's Fate job.Unknown),
//     never free to send again;
//   - Record is durable when it returns: Send calls it with a message's outcome before it
//     reports the row; so is Decide, with a row decided without sending;
//   - a key that another live run has claimed, or has settled since this run looked it up,
//     is refused by Claim with an error matching ErrKeyClaimed that carries the other
//     run's record (a *ClaimedError), so that two runs never send one key;
//   - a claim whose run died is never taken as free: it reads as unknown;
//   - every method is safe for concurrent use.
type JournalStore interface {
	// Binding returns the message template and the shard the journal is for: Send refuses
	// a store bound to another shard than the job's (*JournalMismatchError).
	Binding() JournalBinding
	// Lookup returns the last record of key, if any.
	Lookup(key string) (JournalRecord, bool)
	// Claim records key in flight with its message's Message-ID, before the final dot.
	Claim(key, messageID string) error
	// Record records the outcome of key's message: rec.Fate is job.Done (sent),
	// job.Refused, job.Unknown (no reply to the final dot) or job.Deferred (a 4xx reply
	// to it), with rec.MessageID and rec.Reply.
	Record(rec JournalRecord) error
	// Decide records a row decided without sending: fate is job.Suppressed or
	// job.NotSubscribed, and reason says why (Lookup returns it as the record's Reply). A
	// rerun reports the row with that fate and sends it nothing.
	Decide(key string, fate job.Fate, reason string) error
}

// JournalRecord is what a journal says of one key: its last record.
type JournalRecord struct {
	// Key identifies the row: its lower-cased address.
	Key string
	// Fate is what became of the row: job.Done (sent), job.Refused, job.Unknown (of
	// unknown outcome, or in flight when its run ended), job.Deferred, or, for a row
	// decided without sending, job.Suppressed or job.NotSubscribed.
	Fate job.Fate
	// MessageID is the Message-ID of the message, with angle brackets.
	MessageID string
	// Reply is the server's reply to the final dot (sent, deferred) or its refusal, on
	// one line; for a row decided without sending, the reason.
	Reply string
	// Time is when the record was written.
	Time time.Time
}

// ErrKeyClaimed is matched by a store's refusal to claim a key that another run holds or
// has settled since this run looked it up (a *ClaimedError). The message is abandoned
// before its final dot (nothing is delivered) and the row reported skipped, with the other
// run's record.
var ErrKeyClaimed = errors.New("mailmerge: the key is claimed by another run")

// ClaimedError is a store's refusal of a claim: Record is the other run's record of the
// key. It matches ErrKeyClaimed.
type ClaimedError struct {
	// Record is the other run's record of the key.
	Record JournalRecord
}

// Error says which key and what the other run recorded.
func (e *ClaimedError) Error() string {
	return fmt.Sprintf("mailmerge: key %q is %s in another run", e.Record.Key, e.Record.Fate)
}

// Is matches ErrKeyClaimed.
func (e *ClaimedError) Is(target error) bool { return target == ErrKeyClaimed }

// JournalBinding is what a journal is for: a journal written for another
// message template or another shard is refused, so that a rerun cannot skip
// keys that were sent a different message.
type JournalBinding struct {
	// Fingerprint identifies the message template; TemplateFingerprint
	// computes one. Any non-empty text of the caller's choosing will do.
	Fingerprint string
	// Shard is the part of the list the journal is for.
	Shard ShardSpec
}

// ErrJournalMismatch is matched by a *JournalMismatchError.
var ErrJournalMismatch = errors.New("mailmerge: the journal was written for another message or shard")

// JournalMismatchError reports a journal bound to another message template
// or shard than the run's. It matches ErrJournalMismatch.
type JournalMismatchError struct {
	// Path is the journal file; empty for a store that is not a file.
	Path string
	// Journal is the binding recorded in the journal; Want the run's.
	Journal, Want JournalBinding
}

// Error says which of the template and the shard differ.
func (e *JournalMismatchError) Error() string {
	name := "journal"
	if e.Path != "" {
		name = "journal " + strconv.Quote(e.Path)
	}
	if e.Journal.Fingerprint != e.Want.Fingerprint {
		return fmt.Sprintf("mailmerge: %s was written for another message (template %s, not %s): use a new journal for a new message", name, e.Journal.Fingerprint, e.Want.Fingerprint)
	}
	return fmt.Sprintf("mailmerge: %s was written for shard %q, not %q", name, e.Journal.Shard, e.Want.Shard)
}

// Is matches ErrJournalMismatch.
func (e *JournalMismatchError) Is(target error) bool { return target == ErrJournalMismatch }

// ErrJournalCorrupt is matched by a *JournalCorruptError.
var ErrJournalCorrupt = errors.New("mailmerge: the journal is corrupt")

// JournalCorruptError reports a journal file that is not one, or with a
// malformed record before its last one (a torn last record is tolerated).
// It matches ErrJournalCorrupt.
type JournalCorruptError struct {
	// Path is the journal file.
	Path string
	// Line is the line at fault, from 1.
	Line int
	// Err says what is wrong.
	Err error
}

// Error names the file, the line and the reason.
func (e *JournalCorruptError) Error() string {
	return fmt.Sprintf("mailmerge: journal %q, line %d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the reason.
func (e *JournalCorruptError) Unwrap() error { return e.Err }

// Is matches ErrJournalCorrupt.
func (e *JournalCorruptError) Is(target error) bool { return target == ErrJournalCorrupt }

// TemplateFingerprint returns a fingerprint of the message template, for
// JournalBinding: "sha256:" and the hex SHA-256 of From, ReplyTo, Subject,
// Text, HTML, Raw, ListUnsubscribe, ListUnsubscribeOneClick, ExtraHeaders,
// the tags and tracking switches of Headers, and the names, types and
// contents of Inline and Attachments. It leaves out what differs from one
// recipient to the next: To, Cc, Bcc, Date, MessageID, and the MergeVars
// and CustomArgs of Headers. Give it the template before personalisation,
// with its %TAG% and {{TAG}} placeholders, not a rendered message.
func TemplateFingerprint(tmpl *smtp.Message) string {
	h := sha256.New()
	str := func(s string) { writeLenPrefixed(h, []byte(s)) }
	flag := func(b bool) {
		if b {
			str("1")
		} else {
			str("0")
		}
	}
	count := func(n int) { str(strconv.Itoa(n)) }
	str("sendloop template 1")
	for _, s := range []string{tmpl.From, tmpl.ReplyTo, tmpl.Subject, tmpl.Text, tmpl.HTML, string(tmpl.Raw)} {
		str(s)
	}
	count(len(tmpl.ListUnsubscribe))
	for _, s := range tmpl.ListUnsubscribe {
		str(s)
	}
	flag(tmpl.ListUnsubscribeOneClick)
	count(len(tmpl.ExtraHeaders))
	for _, f := range tmpl.ExtraHeaders {
		str(f.Name)
		str(f.Value)
	}
	count(len(tmpl.Headers.Tags))
	for _, s := range tmpl.Headers.Tags {
		str(s)
	}
	flag(tmpl.Headers.TrackOpens)
	flag(tmpl.Headers.TrackClicks)
	flag(tmpl.Headers.TrackGA)
	count(len(tmpl.Inline))
	for _, in := range tmpl.Inline {
		str(in.ContentID)
		str(in.Filename)
		str(in.ContentType)
		writeLenPrefixed(h, in.Data)
	}
	count(len(tmpl.Attachments))
	for _, a := range tmpl.Attachments {
		str(a.Filename)
		str(a.ContentType)
		writeLenPrefixed(h, a.Data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeLenPrefixed writes b with its length first, so that no two lists of
// fields hash alike.
func writeLenPrefixed(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

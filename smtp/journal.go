package smtp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"time"
)

// Journal records, per message key, what SendKeyed did with the message, so
// that a rerun after a crash sends no key twice. OpenJournal returns the
// file-backed one; other implementations (a database table) must keep the
// same rules: Append must be durable when it returns, at least against the
// death of the process, and every method must be safe for concurrent use.
type Journal interface {
	// Binding returns the message template and the shard the journal is
	// for. SendKeyed refuses a journal bound to another shard
	// (*JournalMismatchError).
	Binding() JournalBinding
	// Lookup returns the last record of key, if any.
	Lookup(key string) (JournalRecord, bool)
	// Append records rec as the last record of rec.Key.
	Append(rec JournalRecord) error
}

// JournalState is what a journal record says of a key.
type JournalState int

// The records of a key: JournalInFlight when its final dot is about to go
// out, then one of the others.
const (
	// JournalInFlight is written, and flushed, before the final dot of the
	// message's DATA. A key whose last record it is (the process died) is
	// unknown.
	JournalInFlight JournalState = iota + 1
	// JournalSent: the server accepted the message (Message-ID and reply).
	JournalSent
	// JournalRefused: the server refused the message for good, a 5xx reply
	// to its recipient or to its DATA.
	JournalRefused
	// JournalUnknown: the connection was lost after the final dot, before
	// the reply; the message may or may not have been delivered.
	JournalUnknown
	// JournalDeferred: a 4xx reply to the final dot; nothing was delivered
	// and the key may be sent again.
	JournalDeferred
)

var journalStateNames = [...]string{
	JournalInFlight: "in_flight",
	JournalSent:     "sent",
	JournalRefused:  "refused",
	JournalUnknown:  "unknown",
	JournalDeferred: "deferred",
}

// String returns the name used in the journal file: in_flight, sent,
// refused, unknown or deferred.
func (s JournalState) String() string {
	if s > 0 && int(s) < len(journalStateNames) {
		return journalStateNames[s]
	}
	return "JournalState(" + strconv.Itoa(int(s)) + ")"
}

func parseJournalState(name string) (JournalState, bool) {
	for s, n := range journalStateNames {
		if n != "" && n == name {
			return JournalState(s), true
		}
	}
	return 0, false
}

// JournalRecord is one event of one key.
type JournalRecord struct {
	// Key identifies the message: the recipient address or a row ID.
	Key string
	// State is what happened.
	State JournalState
	// MessageID is the Message-ID of the message, with angle brackets.
	MessageID string
	// Reply is the server's reply to the final dot (JournalSent,
	// JournalDeferred) or its refusal (JournalRefused), on one line.
	Reply string
	// Time is when the record was written.
	Time time.Time
}

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
var ErrJournalMismatch = errors.New("sendloop/smtp: the journal was written for another message or shard")

// JournalMismatchError reports a journal bound to another message template
// or shard than the run's. It matches ErrJournalMismatch.
type JournalMismatchError struct {
	// Path is the journal file; empty for a Journal that is not a file.
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
		return fmt.Sprintf("sendloop/smtp: %s was written for another message (template %s, not %s): use a new journal for a new message", name, e.Journal.Fingerprint, e.Want.Fingerprint)
	}
	return fmt.Sprintf("sendloop/smtp: %s was written for shard %q, not %q", name, e.Journal.Shard, e.Want.Shard)
}

// Is matches ErrJournalMismatch.
func (e *JournalMismatchError) Is(target error) bool { return target == ErrJournalMismatch }

// ErrJournalCorrupt is matched by a *JournalCorruptError.
var ErrJournalCorrupt = errors.New("sendloop/smtp: the journal is corrupt")

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
	return fmt.Sprintf("sendloop/smtp: journal %q, line %d: %v", e.Path, e.Line, e.Err)
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
func TemplateFingerprint(tmpl *Message) string {
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

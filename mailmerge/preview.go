package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/personalize"
	"github.com/go-sendloop/sendloop/smtp"
)

// PreviewMessage is the message of one row as it would be sent, and as the relay would
// render it.
type PreviewMessage struct {
	// Line is the row's line (0 for a source without lines); Index its position in the
	// source, from 0.
	Line, Index int
	// Address is the row's key (its address, lower-cased).
	Address string
	// Message is the message as Send would give it to the relay: To, the merge
	// variables, the extra headers and List-Unsubscribe rendered; subject and bodies with
	// their tags, which the relay renders.
	Message *smtp.Message
	// Subject, Text and HTML are rendered as package personalize renders them (the
	// specification's personalization rules, which the relay applies).
	Subject, Text, HTML string
}

// Name is the preview's file name: "<line>.eml", or "<index+1>.eml" for a source without
// lines.
func (p *PreviewMessage) Name() string {
	n := p.Line
	if n == 0 {
		n = p.Index + 1
	}
	return strconv.Itoa(n) + ".eml"
}

// EML returns the message as a file a mail reader opens: the rendered subject and bodies,
// and the headers as they would be sent, X-SL-* included.
func (p *PreviewMessage) EML() ([]byte, error) {
	m := *p.Message
	m.Subject, m.Text, m.HTML = p.Subject, p.Text, p.HTML
	return m.Bytes()
}

// Preview returns the messages of the first n rows of the job's shard that would be sent
// (rows rejected are passed over). It sends nothing and touches no journal.
func (j *Job) Preview(ctx context.Context, n int) ([]PreviewMessage, error) {
	var out []PreviewMessage
	err := j.firstMessages(ctx, n, func(p PreviewMessage) { out = append(out, p) })
	return out, err
}

// WritePreview writes the messages of Preview(ctx, n) to dir, creating it, one file each
// (PreviewMessage.Name), and returns the files' paths.
func (j *Job) WritePreview(ctx context.Context, dir string, n int) ([]string, error) {
	msgs, err := j.Preview(ctx, n)
	if err != nil {
		return nil, err
	}
	// 0700 and 0600: a preview holds the first rows' addresses and merged data.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var paths []string
	for i := range msgs {
		b, err := msgs[i].EML()
		if err != nil {
			return paths, fmt.Errorf("line %d: %w", msgs[i].Line, err)
		}
		path := filepath.Join(dir, msgs[i].Name())
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// firstMessages yields the rendered messages of the first n sendable rows of the shard.
func (j *Job) firstMessages(ctx context.Context, n int, fn func(PreviewMessage)) error {
	if n <= 0 {
		return nil
	}
	seen := newKeyLines()
	index := -1
	for row, err := range j.src.Rows(ctx) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		index++
		fate, msg, key := j.decide(index, row, seen, nil, nil)
		if msg == nil || j.shard.Count > 1 && Shard(key, j.shard.Count) != j.shard.Index {
			continue
		}
		p := PreviewMessage{Line: fate.Line, Index: index, Address: key, Message: msg}
		if p.Subject, err = personalize.Render(msg.Subject, msg.Headers.MergeVars); err == nil {
			if p.Text, err = personalize.Render(msg.Text, msg.Headers.MergeVars); err == nil {
				p.HTML, err = personalize.Render(msg.HTML, msg.Headers.MergeVars)
			}
		}
		if err != nil {
			return err // New parsed every part: not expected
		}
		fn(p)
		if n--; n == 0 {
			return nil
		}
	}
	return nil
}

// CheckResult is what a pass over the source found, before sending.
type CheckResult struct {
	// Rows is the source's rows; Sendable those of the shard that would be sent;
	// OtherShards those of other shards.
	Rows, Sendable, OtherShards int
	// SkippedSent, SkippedRefused and SkippedUnknown count the rows the journal
	// (CheckOptions) records sent, refused or of unknown outcome, which Send would skip.
	SkippedSent, SkippedRefused, SkippedUnknown int
	// Rejected counts the rows that would be rejected; Duplicates and Empty are among
	// them.
	Rejected, Duplicates int
	// Empty counts the rows rejected for an empty value, by tag and place
	// ("{{FIRST}} (subject)").
	Empty map[string]int
	// FirstRejected are the first rejected rows (at most MaxFirstRejected), with the
	// reasons Send gives them.
	FirstRejected []RowResult
	// Suppressed and NotSubscribed count the rows Send would not send for who they are
	// (see Options.API and Options.ListID).
	Suppressed, NotSubscribed int
	// FirstSuppressed are the first rows of either (at most MaxFirstRejected), with their
	// fates and reasons.
	FirstSuppressed []RowResult
	// AudienceUnread reports a check of more than one row without Options.API: who may be
	// mailed was not read, Suppressed and NotSubscribed are 0, and Send would fail with
	// ErrNoAPI.
	AudienceUnread bool
}

// CheckOptions says what Check reads besides the source: the journal Send would use, so
// that the rows it records are counted as Send would skip them.
type CheckOptions struct {
	// Journal is the journal file, only read (a file that does not exist records
	// nothing); a journal of another message or shard fails Check as it fails Send. With
	// JournalRecords it only names the journal in errors.
	Journal string
	// JournalRecords, when set, are the journal's records instead of a file's: a journal
	// in a database, read without writing (pgjournal.Records; the caller checks its
	// binding, as pgjournal.Fingerprint lets it). A dry run must not bind a journal to a
	// message the real run may correct.
	JournalRecords iter.Seq2[JournalRecord, error]
	// ResendUnknown and ResendRefused count the rows the journal records unknown or
	// refused as Send would with the same options: sendable.
	ResendUnknown, ResendRefused bool
}

// journalLookup returns how Check finds a key's record in the journal of opts, nil
// without one. A file is read whole, its keys kept as 128-bit hashes.
func (j *Job) journalLookup(opts CheckOptions) (func(string) (JournalRecord, bool), error) {
	seeds := [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	hash := func(key string) [2]uint64 {
		return [2]uint64{maphash.String(seeds[0], key), maphash.String(seeds[1], key)}
	}
	type record struct {
		fate   job.Fate
		reason string // of a row decided without sending
	}
	records := map[[2]uint64]record{}
	keep := func(r JournalRecord) {
		rec := record{fate: r.Fate}
		if r.Fate == job.Suppressed || r.Fate == job.NotSubscribed {
			rec.reason = r.Reply
		}
		records[hash(r.Key)] = rec
	}
	switch {
	case opts.JournalRecords != nil:
		for r, err := range opts.JournalRecords {
			if err != nil {
				return nil, &JournalError{Path: opts.Journal, Err: err, Journal: j.binding.Shard, Want: j.binding.Shard}
			}
			keep(r)
		}
	case opts.Journal == "":
		return nil, nil
	default:
		if _, err := os.Stat(opts.Journal); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		b, err := ReadJournal(opts.Journal, keep)
		if err != nil {
			return nil, &JournalError{Path: opts.Journal, Err: err, Journal: j.binding.Shard, Want: j.binding.Shard}
		}
		if b.Shard != j.binding.Shard || b.Fingerprint != j.binding.Fingerprint {
			return nil, &JournalError{Path: opts.Journal, Err: ErrJournalMismatch, Journal: b.Shard, Want: j.binding.Shard,
				MessageChanged: b.Shard == j.binding.Shard}
		}
	}
	return func(key string) (JournalRecord, bool) {
		r, ok := records[hash(key)]
		return JournalRecord{Key: key, Fate: r.fate, Reply: r.reason}, ok
	}, nil
}

// MaxFirstRejected is how many rejected rows CheckResult.FirstRejected holds.
const MaxFirstRejected = 10

// Check reads the whole source once and counts what Send would do with its rows before
// the relay: rejected (no address, a duplicate, an empty value), suppressed, not
// subscribed, or sendable. It reads who may be mailed as Send does and sends nothing;
// without Options.API it counts no row suppressed and says so (CheckResult.AudienceUnread).
func (j *Job) Check(ctx context.Context, opts CheckOptions) (*CheckResult, error) {
	res := &CheckResult{Empty: map[string]int{}}
	look, err := j.journalLookup(opts)
	if err != nil {
		return nil, err
	}
	aud, err := j.readAudience(ctx)
	switch {
	case errors.Is(err, ErrNoAPI):
		res.AudienceUnread = true
	case err != nil:
		return nil, err
	}
	seen := newKeyLines()
	index := -1
	for row, err := range j.src.Rows(ctx) {
		index++
		if err != nil {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.Rows++
		fate, msg, key := j.decide(index, row, seen, nil, aud)
		otherShard := msg != nil && j.shard.Count > 1 && Shard(key, j.shard.Count) != j.shard.Index
		if look != nil && !otherShard && key != "" && (msg != nil || fate.Fate == job.Suppressed || fate.Fate == job.NotSubscribed) {
			// As Send: the journal's record of an earlier run outweighs this reading.
			if rec, ok := look(key); ok {
				switch {
				case rec.Fate == job.Done:
					res.SkippedSent++
					continue
				case rec.Fate == job.Refused && !opts.ResendRefused:
					res.SkippedRefused++
					continue
				case rec.Fate == job.Unknown && !opts.ResendUnknown:
					res.SkippedUnknown++
					continue
				case rec.Fate == job.Suppressed || rec.Fate == job.NotSubscribed:
					fate.Fate, fate.Reason, msg = rec.Fate, rec.Reply, nil
				}
			}
		}
		switch {
		case otherShard:
			res.OtherShards++
		case msg != nil:
			res.Sendable++
		case fate.Fate == job.Suppressed:
			res.Suppressed++
			if len(res.FirstSuppressed) < MaxFirstRejected {
				res.FirstSuppressed = append(res.FirstSuppressed, fate)
			}
		case fate.Fate == job.NotSubscribed:
			res.NotSubscribed++
			if len(res.FirstSuppressed) < MaxFirstRejected {
				res.FirstSuppressed = append(res.FirstSuppressed, fate)
			}
		default:
			res.Rejected++
			if len(res.FirstRejected) < MaxFirstRejected {
				res.FirstRejected = append(res.FirstRejected, fate)
			}
			if strings.HasPrefix(fate.Reason, "duplicate of") {
				res.Duplicates++
			} else if tag, ok := strings.CutPrefix(fate.Reason, emptyPrefix); ok {
				res.Empty[tag]++
			}
		}
	}
	return res, nil
}

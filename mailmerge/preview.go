package mailmerge

import (
	"context"
	"errors"
	"fmt"
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
	// Rows is the source's rows; Sendable those of the shard that would be sent (or
	// skipped by a journal); OtherShards those of other shards.
	Rows, Sendable, OtherShards int
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

// MaxFirstRejected is how many rejected rows CheckResult.FirstRejected holds.
const MaxFirstRejected = 10

// Check reads the whole source once and counts what Send would do with its rows before
// the relay: rejected (no address, a duplicate, an empty value), suppressed, not
// subscribed, or sendable. It reads who may be mailed as Send does and sends nothing;
// without Options.API it counts no row suppressed and says so (CheckResult.AudienceUnread).
func (j *Job) Check(ctx context.Context) (*CheckResult, error) {
	res := &CheckResult{Empty: map[string]int{}}
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
		switch {
		case msg != nil && j.shard.Count > 1 && Shard(key, j.shard.Count) != j.shard.Index:
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

package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/personalize"
)

// escapedChars are the characters a double-mustache tag HTML-escapes (personalize): a
// value holding none of them escapes to itself.
const escapedChars = `&<>"'`

// escapedTag is a double-mustache tag in a part that is not HTML (the subject, the text
// part): the relay HTML-escapes its value there, which a reader of plain text sees as
// "O&#39;Brien &amp; Sons".
type escapedTag struct {
	tag, name, where string
}

// EscapeProblem is one double-mustache tag of a part that is not HTML whose value, in some
// rows, holds a character the relay would HTML-escape.
type EscapeProblem struct {
	// Tag is the tag as written ("{{FIRST}}"), Name the name it looks up, Where the part
	// (and line) it stands in ("subject", "text line 3").
	Tag, Name, Where string
	// Rows counts the rows whose value would be escaped.
	Rows int
	// Line is the source line of the first such row (0 when the source has no lines).
	Line int
	// Value is that row's value, as the relay would escape it.
	Value string
}

// Fix is the tag written so that its value is inserted as it is: "{{{FIRST}}}".
func (p EscapeProblem) Fix() string { return "{{{" + p.Name + "}}}" }

// String returns the problem as a sentence.
func (p EscapeProblem) String() string {
	at := ""
	if p.Line > 0 {
		at = fmt.Sprintf(" (first on line %d: %q)", p.Line, p.Value)
	} else {
		at = fmt.Sprintf(" (first: %q)", p.Value)
	}
	return fmt.Sprintf("%s (%s) would be HTML-escaped in %s%s, for the %s is not HTML: write %s or %%%s%% to insert the value as it is",
		p.Tag, p.Where, plural(p.Rows, "row"), at, partOf(p.Where), p.Fix(), p.Name)
}

func partOf(where string) string {
	part, _, _ := strings.Cut(where, " line ")
	if part == "text" {
		return "text part"
	}
	return part
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// EscapeError is Send's refusal, before the first message, of a template whose
// double-mustache tags in the subject or text part would show escaped characters to the
// reader. Options.KeepEscaping keeps the escaping of a tag that wants it.
type EscapeError struct {
	// Problems are the tags refused, in the template's order.
	Problems []EscapeProblem
}

// Error implements the error interface.
func (e *EscapeError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// ErrEscape is matched by an *EscapeError.
var ErrEscape = errors.New("mailmerge: a value would be HTML-escaped in a part that is not HTML")

// Is matches ErrEscape.
func (e *EscapeError) Is(target error) bool { return target == ErrEscape }

// escapedTags returns the double-mustache tags of the subject and text part that the
// escaping check looks at: those naming a column or variable, not kept escaped. Extra
// headers and List-Unsubscribe are rendered here, unescaped (URL-encoded in a URL), and
// the HTML part wants the escaping.
func (j *Job) escapedTags() []escapedTag {
	var out []escapedTag
	seen := map[string]bool{}
	for _, p := range j.parts {
		if p.kind != partBody || p.name == "HTML" {
			continue
		}
		for _, t := range p.tags {
			if t.Kind != personalize.TagEscaped || j.keepEscaping[t.Name] || !j.nameSet[t.Name] {
				continue
			}
			where := p.where(t.Line)
			if k := p.name + "\x00" + t.Name; !seen[k] {
				seen[k] = true
				out = append(out, escapedTag{tag: p.src[t.Offset:t.End], name: t.Name, where: where})
			}
		}
	}
	return out
}

// CheckEscaping reads the source once and returns an *EscapeError when a double-mustache
// tag in the subject or text part has, in any row, a value the relay would HTML-escape.
// Send runs it before the first message; it reads no row when no such tag stands there.
func (j *Job) CheckEscaping(ctx context.Context) error {
	tags := j.escapedTags()
	if len(tags) == 0 {
		return nil
	}
	problems := make([]EscapeProblem, len(tags))
	for i, t := range tags {
		problems[i] = EscapeProblem{Tag: t.tag, Name: t.name, Where: t.where}
	}
	note := func(i int, line int, v string) {
		if !strings.ContainsAny(v, escapedChars) {
			return
		}
		if problems[i].Rows == 0 {
			problems[i].Line, problems[i].Value = line, v
		}
		problems[i].Rows++
	}
	for row, err := range j.src.Rows(ctx) {
		if err != nil {
			return err
		}
		if row.Reject != "" {
			continue
		}
		for i, t := range tags {
			if v, ok := j.vars[t.name]; ok {
				note(i, row.Line, v)
				continue
			}
			v := row.Values[t.name]
			if d, ok := j.defaults[t.name]; ok && v == "" {
				v = d
			}
			note(i, row.Line, v)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var out []EscapeProblem
	for _, p := range problems {
		if p.Rows > 0 {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return &EscapeError{Problems: out}
	}
	return nil
}

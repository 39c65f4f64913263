package mailmerge

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/go-sendloop/sendloop/personalize"
)

// partKind is how a part of the template is rendered.
type partKind uint8

const (
	partBody   partKind = iota // the subject and bodies: rendered by the relay
	partHeader                 // an extra header: rendered here
	partURL                    // a List-Unsubscribe value: rendered here, URL-encoded
)

// part is one piece of the template that may hold tags.
type part struct {
	name  string // "subject", "text", "HTML", "header X-Campaign", "List-Unsubscribe"
	kind  partKind
	lines bool // a multi-line part: places name the line
	src   string
	tags  []personalize.Tag
}

// where names the place of a tag: "subject", "HTML line 3".
func (p *part) where(line int) string {
	if p.lines {
		return fmt.Sprintf("%s line %d", p.name, line)
	}
	return p.name
}

// Problem is one reason the check refuses a template.
type Problem struct {
	// Part is the part of the template: "subject", "text", "HTML", "header NAME" or
	// "List-Unsubscribe"; Where adds the line of a multi-line part ("HTML line 3").
	Part, Where string
	// Line is the line in the part, from 1.
	Line int
	// Tag is the tag as written ("{{FRIST}}", "%CODE%"); empty for a syntax error.
	Tag string
	// Name is the name the tag looks up.
	Name string
	// Suggest is the column or variable nearest to Name, if one is near.
	Suggest string
	// Msg says what is wrong.
	Msg string
}

// String returns the problem as a sentence: `{{FRIST}} (subject): no column or variable
// of that name; did you mean FIRST?`.
func (p Problem) String() string {
	if p.Tag == "" {
		return fmt.Sprintf("%s does not parse: %s", p.Where, p.Msg)
	}
	s := fmt.Sprintf("%s (%s): %s", p.Tag, p.Where, p.Msg)
	if p.Suggest != "" {
		s += "; did you mean " + p.Suggest + "?"
	}
	return s
}

// msgNoName is Problem.Msg for a tag that names nothing.
const msgNoName = "no column or variable of that name"

// CheckError is New's refusal of a template: every problem found, and the names a tag
// may use.
type CheckError struct {
	// Problems are every problem found, in the template's order.
	Problems []Problem
	// Names are the columns and constant variables there are, sorted; Columns the
	// source's columns among them, in the source's order.
	Names, Columns []string
}

// Error implements the error interface.
func (e *CheckError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.String())
	}
	if len(e.Names) > 0 {
		fmt.Fprintf(&b, "\nthe columns and variables: %s", strings.Join(e.Names, ", "))
	} else {
		b.WriteString("\nthere are no columns or variables")
	}
	return b.String()
}

// ErrCheck is matched by a *CheckError.
var ErrCheck = errors.New("mailmerge: the template does not check")

// Is matches ErrCheck.
func (e *CheckError) Is(target error) bool { return target == ErrCheck }

// Note is a %…% the check leaves as written, for the user to look at: a percent-encoding,
// a number, or a candidate inside a URL.
type Note struct {
	// Where is the part (and line) it stands in; Text the candidate as written.
	Where, Text string
	// Why says why it is not a tag.
	Why string
}

// String returns the note as a sentence.
func (n Note) String() string { return fmt.Sprintf("%s (%s): not a tag, %s", n.Text, n.Where, n.Why) }

// interp is a name whose value is written into the message outside a section testing it:
// an empty value for it rejects a row.
type interp struct {
	name, tag, where string
}

var (
	// hrefValue is an href or src attribute's value in HTML.
	hrefValue = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+)`)
	// bareURL is a URL written out in text.
	bareURL = regexp.MustCompile(`(?i)\b(?:https?://|mailto:)[^\s"'<>]+`)
	// twoHex is a percent-encoded byte: %E2%80%99 holds the candidates %E2% and %99%.
	twoHex = regexp.MustCompile(`^[0-9A-Fa-f]{2}$`)
)

// urlSpans returns the byte ranges of p's source that are URLs.
func (p *part) urlSpans() [][2]int {
	if p.kind == partURL {
		return [][2]int{{0, len(p.src)}}
	}
	var out [][2]int
	if p.name == "HTML" {
		for _, m := range hrefValue.FindAllStringSubmatchIndex(p.src, -1) {
			out = append(out, [2]int{m[2], m[3]})
		}
	}
	for _, m := range bareURL.FindAllStringIndex(p.src, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

func inSpans(spans [][2]int, off int) bool {
	for _, s := range spans {
		if s[0] <= off && off < s[1] {
			return true
		}
	}
	return false
}

// check parses every part and checks its tags against the known names; it fills j.parts,
// j.interps and j.notes, and returns a *CheckError for what it refuses.
func (j *Job) check() error {
	m := j.tmpl
	add := func(name string, kind partKind, lines bool, src string) {
		if src != "" {
			j.parts = append(j.parts, &part{name: name, kind: kind, lines: lines, src: src})
		}
	}
	add("subject", partBody, false, m.Subject)
	add("text", partBody, true, m.Text)
	add("HTML", partBody, true, m.HTML)
	for _, f := range m.ExtraHeaders {
		add("header "+f.Name, partHeader, false, f.Value)
	}
	for _, u := range m.ListUnsubscribe {
		add("List-Unsubscribe", partURL, false, u)
	}
	var problems []Problem
	seen := map[string]bool{}
	for _, p := range j.parts {
		t, err := personalize.Parse(p.src)
		if err != nil {
			pr := Problem{Part: p.name, Where: p.name, Line: 1, Msg: err.Error()}
			var se *personalize.SyntaxError
			if errors.As(err, &se) {
				pr.Line, pr.Msg = se.Line, fmt.Sprintf("%s (column %d)", se.Msg, se.Col)
				pr.Where = p.where(se.Line)
			}
			problems = append(problems, pr)
			continue
		}
		p.tags = t.Tags()
		urls := p.urlSpans()
		for _, tag := range p.tags {
			text := p.src[tag.Offset:tag.End]
			where := p.where(tag.Line)
			problem := func(msg string) {
				pr := Problem{Part: p.name, Where: where, Line: tag.Line, Tag: text, Name: tag.Name, Msg: msg}
				if msg == msgNoName {
					pr.Suggest = nearest(tag.Name, j.names)
				}
				problems = append(problems, pr)
			}
			if j.allowTag[tag.Name] && !j.known(tag.Name) {
				continue // kept as written; a known name is still checked for empty values
			}
			switch tag.Kind {
			case personalize.TagMerge:
				switch {
				case j.known(tag.Name):
				case inSpans(urls, tag.Offset):
					j.notes = append(j.notes, Note{Where: where, Text: text, Why: "it stands inside a URL"})
					continue
				case twoHex.MatchString(tag.Name):
					j.notes = append(j.notes, Note{Where: where, Text: text, Why: "a percent-encoded byte"})
					continue
				case tag.Name[0] >= '0' && tag.Name[0] <= '9':
					j.notes = append(j.notes, Note{Where: where, Text: text, Why: "its name starts with a digit"})
					continue
				default:
					problem(msgNoName)
					continue
				}
			case personalize.TagPartial:
				problem("a partial, which a send has none of")
				continue
			case personalize.TagSection, personalize.TagInverted:
				if p.kind != partBody {
					problem("a section, rendered only in the subject and bodies")
					continue
				}
				fallthrough
			default:
				if tag.Name == "." {
					continue
				}
				if !j.known(tag.Name) {
					problem(msgNoName)
					continue
				}
			}
			if tag.Kind == personalize.TagSection || tag.Kind == personalize.TagInverted || j.isVar(tag.Name) {
				continue
			}
			tested := false
			for _, s := range tag.Sections {
				tested = tested || s == tag.Name
			}
			if !tested && !seen[tag.Name] {
				seen[tag.Name] = true
				j.interps = append(j.interps, interp{name: tag.Name, tag: text, where: where})
			}
		}
	}
	if len(problems) > 0 {
		return &CheckError{Problems: problems, Names: j.names, Columns: j.columns}
	}
	return nil
}

// known reports whether name is a column or a variable; a dotted name by its whole or its
// first part.
func (j *Job) known(name string) bool {
	if j.nameSet[name] {
		return true
	}
	first, _, dotted := strings.Cut(name, ".")
	return dotted && j.nameSet[first]
}

func (j *Job) isVar(name string) bool {
	_, ok := j.vars[name]
	return ok || j.constant[name]
}

// nearest returns the name of names nearest to name (case ignored), if it is at most two
// edits away and closer than the name's length.
func nearest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		if d < bestD && d < len(name) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions, deletions,
// substitutions and transpositions of adjacent characters (FRIST → FIRST is one).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for k := range d[0] {
		d[0][k] = k
	}
	for i := 1; i <= len(ra); i++ {
		for k := 1; k <= len(rb); k++ {
			cost := 1
			if ra[i-1] == rb[k-1] {
				cost = 0
			}
			d[i][k] = min(d[i-1][k]+1, d[i][k-1]+1, d[i-1][k-1]+cost)
			if i > 1 && k > 1 && ra[i-1] == rb[k-2] && ra[i-2] == rb[k-1] {
				d[i][k] = min(d[i][k], d[i-2][k-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

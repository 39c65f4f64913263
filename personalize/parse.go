package personalize

import (
	"fmt"
	"strings"
)

type nodeKind uint8

const (
	nodeText     nodeKind = iota // literal text, with %KEY% candidates in merges
	nodeIndent                   // start of a line in a partial: writes the current indentation
	nodeEscaped                  // {{name}}
	nodeRaw                      // {{{name}}} and {{&name}}
	nodeSection                  // {{#name}}children{{/name}}
	nodeInverted                 // {{^name}}children{{/name}}
	nodePartial                  // {{>name}}
)

// span is the byte range [start, end) of a %KEY% candidate in a text node,
// percent signs included, so that text[start:end] is the vars key.
type span struct{ start, end int }

type node struct {
	kind nodeKind
	// text is the literal text of a nodeText, or the partial name of a
	// nodePartial.
	text string
	// indent is the whitespace before a standalone partial tag.
	indent string
	// name is the dotted name split on '.'; nil stands for the implicit
	// iterator ".".
	name     []string
	merges   []span
	children []node
	// off is the byte offset in the source of the tag, or of a text node's
	// first byte, and end the offset just past the tag (the opening tag of
	// a section), for Tags.
	off, end int
}

type openSection struct {
	kind   nodeKind
	name   string // as written, to match the closing tag
	parts  []string
	off    int // of the opening tag, for "unclosed section" errors
	end    int // just past the opening tag
	parent []node
}

type parser struct {
	src      string
	partial  string
	indented bool // emit nodeIndent at line starts (partials only)
	cur      []node
	open     []openSection
}

// parse turns src into a node tree in one left-to-right scan. Literal text
// is split into text nodes whose %KEY% candidates are recorded here, so
// rendering never scans text for tags and never rescans inserted values.
func parse(src, partial string, indented bool) ([]node, error) {
	p := &parser{src: src, partial: partial, indented: indented}
	otag, ctag := "{{", "}}"
	text := 0 // start of literal text not yet turned into nodes
	pos := 0  // where to look for the next tag
	for {
		i := strings.Index(src[pos:], otag)
		if i < 0 {
			break
		}
		start := pos + i
		c := start + len(otag)
		var sigil byte
		closer := ctag
		if c < len(src) {
			switch s := src[c]; s {
			case '{':
				sigil, closer = s, "}"+ctag
				c++
			case '=':
				sigil, closer = s, "="+ctag
				c++
			case '&', '#', '^', '/', '!', '>':
				sigil = s
				c++
			}
		}
		j := strings.Index(src[c:], closer)
		if j < 0 {
			return nil, p.errorf(start, "unclosed tag: %q has no closing %q", otag, closer)
		}
		content := src[c : c+j]
		end := c + j + len(closer)

		// A standalone tag owns its whole line: the indentation before it
		// and the line ending after it are removed.
		textEnd, next, indent := start, end, ""
		standalone := false
		switch sigil {
		case '#', '^', '/', '!', '>', '=':
			if ls, ok := p.lineStart(text, start); ok {
				if le, ok := p.lineEnd(end); ok {
					textEnd, next, indent = ls, le, src[ls:start]
					standalone = true
				}
			}
		}
		p.addText(text, textEnd)
		if !standalone {
			p.markLineStart(start)
		}

		switch sigil {
		case 0, '{', '&':
			parts, _, err := p.name(content, start)
			if err != nil {
				return nil, err
			}
			kind := nodeRaw
			if sigil == 0 {
				kind = nodeEscaped
			}
			p.cur = append(p.cur, node{kind: kind, name: parts, off: start, end: end})
		case '#', '^':
			parts, raw, err := p.name(content, start)
			if err != nil {
				return nil, err
			}
			if len(p.open) >= maxNesting {
				return nil, p.errorf(start, "sections nested more than %d deep", maxNesting)
			}
			kind := nodeSection
			if sigil == '^' {
				kind = nodeInverted
			}
			p.open = append(p.open, openSection{kind: kind, name: raw, parts: parts, off: start, end: end, parent: p.cur})
			p.cur = nil
		case '/':
			_, raw, err := p.name(content, start)
			if err != nil {
				return nil, err
			}
			if len(p.open) == 0 {
				return nil, p.errorf(start, "section close %q without an open section", raw)
			}
			top := p.open[len(p.open)-1]
			if top.name != raw {
				line := newSyntaxError(src, "", top.off, "").Line
				return nil, p.errorf(start, "section close %q does not match open section %q (line %d)", raw, top.name, line)
			}
			p.open = p.open[:len(p.open)-1]
			n := node{kind: top.kind, name: top.parts, children: p.cur, off: top.off, end: top.end}
			p.cur = append(top.parent, n)
		case '!':
			// Comments render nothing.
		case '>':
			name := strings.TrimSpace(content)
			if name == "" || hasSpace(name) {
				return nil, p.errorf(start, "invalid partial name %q", name)
			}
			p.cur = append(p.cur, node{kind: nodePartial, text: name, indent: indent, off: start, end: end})
		case '=':
			f := strings.Fields(content)
			if len(f) != 2 || strings.Contains(f[0], "=") || strings.Contains(f[1], "=") {
				return nil, p.errorf(start, "bad delimiter change %q: want two delimiters without '=' separated by space, as in {{=<%% %%>=}}", content)
			}
			otag, ctag = f[0], f[1]
		}
		text, pos = next, next
	}
	p.addText(text, len(src))
	if len(p.open) > 0 {
		top := p.open[len(p.open)-1]
		return nil, p.errorf(top.off, "unclosed section %q", top.name)
	}
	return p.cur, nil
}

func (p *parser) errorf(off int, format string, args ...any) error {
	return newSyntaxError(p.src, p.partial, off, fmt.Sprintf(format, args...))
}

// name validates the content of a tag that names data: non-empty, no
// whitespace, and no empty part between dots.
func (p *parser) name(content string, off int) (parts []string, raw string, err error) {
	raw = strings.TrimSpace(content)
	switch {
	case raw == "":
		return nil, raw, p.errorf(off, "empty tag name")
	case hasSpace(raw):
		return nil, raw, p.errorf(off, "tag name %q contains whitespace", raw)
	case raw == ".":
		return nil, raw, nil
	}
	parts = strings.Split(raw, ".")
	for _, s := range parts {
		if s == "" {
			return nil, raw, p.errorf(off, "invalid dotted name %q", raw)
		}
	}
	return parts, raw, nil
}

// lineStart reports whether only blanks separate the tag at start from the
// beginning of its line, and no other tag is on that line before it; it
// returns the offset of the line start. text is the start of the pending
// literal text, i.e. the end of the previous tag.
func (p *parser) lineStart(text, start int) (int, bool) {
	k := start
	for k > text && isBlank(p.src[k-1]) {
		k--
	}
	return k, k == 0 || p.src[k-1] == '\n'
}

// lineEnd reports whether only blanks follow the tag ending at end up to the
// end of its line; it returns the offset just past the line ending.
func (p *parser) lineEnd(end int) (int, bool) {
	k := end
	for k < len(p.src) && isBlank(p.src[k]) {
		k++
	}
	switch {
	case k == len(p.src):
		return k, true
	case p.src[k] == '\n':
		return k + 1, true
	case p.src[k] == '\r' && k+1 < len(p.src) && p.src[k+1] == '\n':
		return k + 2, true
	}
	return 0, false
}

// addText appends src[from:to] as text nodes. In partials it is cut at line
// starts so that indentation can be written before each line.
func (p *parser) addText(from, to int) {
	for from < to {
		p.markLineStart(from)
		end := to
		if p.indented {
			if i := strings.IndexByte(p.src[from:to], '\n'); i >= 0 {
				end = from + i + 1
			}
		}
		s := p.src[from:end]
		p.cur = append(p.cur, node{kind: nodeText, text: s, merges: mergeSpans(s), off: from})
		from = end
	}
}

// markLineStart records, in partials, that something is output at the start
// of a line, where the indentation of a standalone partial tag belongs.
func (p *parser) markLineStart(off int) {
	if p.indented && (off == 0 || p.src[off-1] == '\n') {
		p.cur = append(p.cur, node{kind: nodeIndent})
	}
}

// mergeSpans finds every %NAME% with NAME made of [A-Za-z0-9_]. Candidates
// may overlap ("%A%B%" has %A% and %B%): which ones apply depends on the
// vars, so the choice is made at render time.
func mergeSpans(s string) []span {
	var spans []span
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '%')
		if j < 0 {
			break
		}
		j += i
		k := j + 1
		for k < len(s) && isNameChar(s[k]) {
			k++
		}
		if k > j+1 && k < len(s) && s[k] == '%' {
			spans = append(spans, span{j, k + 1})
		}
		i = j + 1
	}
	return spans
}

func isNameChar(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func hasSpace(s string) bool {
	return strings.ContainsAny(s, " \t\r\n\v\f")
}

package personalize

import "strings"

// TagKind is the kind of a Tag.
type TagKind uint8

// The kinds of tags Tags reports.
const (
	// TagEscaped is {{name}}.
	TagEscaped TagKind = iota + 1
	// TagRaw is {{{name}}} or {{& name}}.
	TagRaw
	// TagSection is the opening tag of {{#name}}...{{/name}}.
	TagSection
	// TagInverted is the opening tag of {{^name}}...{{/name}}.
	TagInverted
	// TagPartial is {{>name}}.
	TagPartial
	// TagMerge is a %NAME% candidate of the literal text.
	TagMerge
)

// String returns the kind as a template shows it: "{{}}", "{{{}}}", "{{#}}", "{{^}}",
// "{{>}}" or "%%".
func (k TagKind) String() string {
	switch k {
	case TagEscaped:
		return "{{}}"
	case TagRaw:
		return "{{{}}}"
	case TagSection:
		return "{{#}}"
	case TagInverted:
		return "{{^}}"
	case TagPartial:
		return "{{>}}"
	case TagMerge:
		return "%%"
	}
	return "unknown"
}

// Tag is one tag of a parsed template, as the renderer sees it: the check a sender runs
// before sending and the rendering agree on what a tag is because both come from the one
// parse.
type Tag struct {
	// Kind is what the tag does.
	Kind TagKind
	// Name is the name as written, dotted names joined by '.' and "." for the implicit
	// iterator; for TagMerge, the NAME between the percent signs; for TagPartial, the
	// partial's name.
	Name string
	// Offset is the byte offset of the tag's first byte (its first percent sign for
	// TagMerge) in the template's text.
	Offset int
	// Line and Col locate the tag, from 1, Col in runes.
	Line, Col int
	// End is the byte offset just past the tag (the closing percent sign of TagMerge, the
	// opening tag of a section).
	End int
	// Sections names the sections and inverted sections the tag stands in, outermost
	// first, as written.
	Sections []string
}

// Tags returns the tags of t's main template (not of its partials) in the order they
// stand in the text. A %NAME% candidate is reported wherever the renderer would look it
// up, overlapping candidates ("%A%B%") both; which one applies depends on the values.
// Tags is the basis of a check that every tag names a value before a template is
// rendered for many recipients.
func (t *Template) Tags() []Tag {
	if t == nil {
		return nil
	}
	var out []Tag
	var walk func(nodes []node, sections []string)
	walk = func(nodes []node, sections []string) {
		for i := range nodes {
			n := &nodes[i]
			switch n.kind {
			case nodeText:
				for _, sp := range n.merges {
					out = append(out, t.tag(TagMerge, n.text[sp.start+1:sp.end-1], n.off+sp.start, n.off+sp.end, sections))
				}
			case nodeEscaped, nodeRaw, nodeSection, nodeInverted:
				kind := map[nodeKind]TagKind{nodeEscaped: TagEscaped, nodeRaw: TagRaw, nodeSection: TagSection, nodeInverted: TagInverted}[n.kind]
				name := "."
				if n.name != nil {
					name = strings.Join(n.name, ".")
				}
				out = append(out, t.tag(kind, name, n.off, n.end, sections))
				if n.kind == nodeSection || n.kind == nodeInverted {
					walk(n.children, append(sections[:len(sections):len(sections)], name))
				}
			case nodePartial:
				out = append(out, t.tag(TagPartial, n.text, n.off, n.end, sections))
			}
		}
	}
	walk(t.nodes, nil)
	return out
}

func (t *Template) tag(kind TagKind, name string, off, end int, sections []string) Tag {
	e := newSyntaxError(t.src, "", off, "")
	return Tag{Kind: kind, Name: name, Offset: off, End: end, Line: e.Line, Col: e.Col, Sections: sections}
}

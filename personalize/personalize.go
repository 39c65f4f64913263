package personalize

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Limits that keep a hostile or broken template from exhausting the stack.
// Go cannot recover from a stack overflow, so these are hard errors.
const (
	maxNesting      = 256 // sections open at the same time while parsing
	maxPartialDepth = 100 // partials rendered inside partials
)

// errPartialDepth is returned when partials recurse without end.
var errPartialDepth = fmt.Errorf("personalize: partials nested more than %d deep (a partial that includes itself unconditionally?)", maxPartialDepth)

// Render renders template with vars, applying both tag styles of the service.
//
// It is Parse followed by Template.Render; parse once with Parse when the same
// template is sent to many recipients. Errors from a malformed template are of
// type *SyntaxError.
func Render(template string, vars map[string]any) (string, error) {
	// Without '{' there is no Mustache tag and without '%' no merge tag:
	// the common case of a plain-text snippet costs nothing.
	if strings.IndexByte(template, '{') < 0 && strings.IndexByte(template, '%') < 0 {
		return template, nil
	}
	t, err := Parse(template)
	if err != nil {
		return "", err
	}
	return t.Render(vars)
}

// Template is a parsed template. It is immutable, so one Template may be
// rendered by many goroutines at once.
type Template struct {
	src      string // for the lines and columns of Tags
	nodes    []node
	partials map[string][]node
}

// Parse parses text into a Template. Partial tags ({{>name}}) render as
// the empty string; use ParseWithPartials to supply them.
func Parse(text string) (*Template, error) {
	return ParseWithPartials(text, nil)
}

// ParseWithPartials parses text together with the partial templates it may
// include by name with {{>name}}. Every partial is parsed up front, so a
// syntax error in any of them, used or not, is reported here; its
// SyntaxError names the partial. A partial that is not in the map renders as
// the empty string, as the Mustache specification asks.
func ParseWithPartials(text string, partials map[string]string) (*Template, error) {
	nodes, err := parse(text, "", false)
	if err != nil {
		return nil, err
	}
	t := &Template{src: text, nodes: nodes}
	if len(partials) > 0 {
		t.partials = make(map[string][]node, len(partials))
		// In name order, so that the error reported is always the same.
		names := make([]string, 0, len(partials))
		for name := range partials {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			// Partials get line-start markers so that a standalone
			// {{>name}} can indent every line of them.
			pn, err := parse(partials[name], name, true)
			if err != nil {
				return nil, err
			}
			t.partials[name] = pn
		}
	}
	return t, nil
}

// Render renders t with vars and returns the result.
func (t *Template) Render(vars map[string]any) (string, error) {
	return t.render(vars)
}

// Execute renders t with vars and writes the result to w in a single Write,
// so nothing is written when rendering fails.
func (t *Template) Execute(w io.Writer, vars map[string]any) error {
	if t == nil {
		return errNilTemplate
	}
	r := getRenderer(vars, t.partials)
	defer r.release()
	if err := r.run(t.nodes); err != nil {
		return err
	}
	_, err := w.Write(r.buf)
	return err
}

var errNilTemplate = errors.New("personalize: nil *Template")

// render takes the root context as any so that tests can exercise the
// Mustache rules with the non-object roots used by the specification.
func (t *Template) render(data any) (string, error) {
	if t == nil {
		return "", errNilTemplate
	}
	r := getRenderer(data, t.partials)
	defer r.release()
	if err := r.run(t.nodes); err != nil {
		return "", err
	}
	return string(r.buf), nil
}

// Renderers, with their output buffer, are pooled: a mass mailing renders
// the same template thousands of times and the buffer is the biggest
// allocation.
var rendererPool = sync.Pool{New: func() any {
	return &renderer{buf: make([]byte, 0, 4096), stack: make([]any, 0, 8)}
}}

// maxPooledBuf keeps one huge rendering from pinning its buffer forever.
const maxPooledBuf = 1 << 20

func getRenderer(root any, partials map[string][]node) *renderer {
	r := rendererPool.Get().(*renderer)
	r.root, r.partials = root, partials
	return r
}

// release returns r to the pool without references to the caller's data.
func (r *renderer) release() {
	if cap(r.buf) > maxPooledBuf {
		return
	}
	clear(r.stack[:cap(r.stack)])
	*r = renderer{buf: r.buf[:0], stack: r.stack[:0]}
	rendererPool.Put(r)
}

// SyntaxError reports a malformed template: an unclosed tag or section, a
// mismatched section close, an invalid tag name or a bad delimiter change.
type SyntaxError struct {
	// Partial is the name of the partial template in which the error was
	// found, or "" for the main template.
	Partial string
	// Line and Col locate the offending tag, both counted from 1; Col
	// counts characters (runes), not bytes.
	Line, Col int
	// Msg describes the problem.
	Msg string
}

// Error implements the error interface.
func (e *SyntaxError) Error() string {
	if e.Partial != "" {
		return fmt.Sprintf("personalize: syntax error in partial %q at line %d, col %d: %s", e.Partial, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("personalize: syntax error at line %d, col %d: %s", e.Line, e.Col, e.Msg)
}

// newSyntaxError locates byte offset off in src; positions are computed only
// on failure so that parsing does not track lines.
func newSyntaxError(src, partial string, off int, msg string) *SyntaxError {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + strings.Count(src[:off], "\n")
	ls := strings.LastIndexByte(src[:off], '\n') + 1
	return &SyntaxError{Partial: partial, Line: line, Col: utf8.RuneCountInString(src[ls:off]) + 1, Msg: msg}
}

package sendloop_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// leakedMarker finds a comment marker left inside the text of a paragraph: "…http(s).//
// Nothing…" once a paragraph break was written at the end of a line. A URL's "://" is no
// marker.
var leakedMarker = regexp.MustCompile(`(^|[^:/])//(\s|$)`)

// markerLeaks returns the lines of a doc text (comments' markers removed, as go doc
// shows them) that hold a comment marker. Code blocks (indented lines) may hold Go
// comments, so there only ".//" counts.
func markerLeaks(text string) []string {
	var leaks []string
	for _, line := range strings.Split(text, "\n") {
		code := strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")
		if strings.Contains(line, ".//") || !code && leakedMarker.MatchString(line) {
			leaks = append(leaks, line)
		}
	}
	return leaks
}

func TestMarkerLeaks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		leak bool
	}{
		{"a webhook URL that is not http(s).//\nNothing to change: …", true},
		{"integers (ErrInvalidParameterValue).// Nothing to change", true},
		{"a sentence// and the next", true},
		{"// a marker doubled at the start", true},
		{"the host, https://acme.sendloop.com, only", false},
		{"a path such as a/b/c, or a//b inside a word", false},
		{"Example:\n\n\tx := 1 // a Go comment in a code block\n\t// Output: 1", false},
		{"\tcd ./dir.//x", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.leak, len(markerLeaks(tt.text)) > 0, "%q", tt.text)
	}
}

// TestDocCommentsHoldNoMarker reads the doc comments of every package of the module as go
// doc -all shows them (the package, its exported names, their methods, fields and the
// names of const and var blocks) and fails on a comment marker that leaked into the text.
func TestDocCommentsHoldNoMarker(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs := map[string]map[string][]*ast.File{} // directory → package name → files
	err := testkit.WalkGoTree(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if pkgs[dir] == nil {
			pkgs[dir] = map[string][]*ast.File{}
		}
		pkgs[dir][f.Name.Name] = append(pkgs[dir][f.Name.Name], f)
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, pkgs, ".", "the walk found no root package")

	var leaks []string
	for dir, byName := range pkgs {
		for name, files := range byName {
			p, err := doc.NewFromFiles(fset, files, "github.com/go-sendloop/sendloop/"+filepath.ToSlash(dir))
			require.NoError(t, err, "%s (package %s)", dir, name)
			for _, d := range docTexts(p) {
				where := dir + " (package doc)"
				if d.at.IsValid() {
					where = fset.Position(d.at).String()
				}
				for _, line := range markerLeaks(d.text) {
					leaks = append(leaks, where+": "+strings.TrimSpace(line))
				}
			}
		}
	}
	sort.Strings(leaks)
	assert.Empty(t, leaks, "doc comments with a comment marker inside their text (a paragraph break is a line holding only //)")
}

// docText is one doc comment's text and where it is.
type docText struct {
	text string
	at   token.Pos // NoPos for the package's doc, which may join several files' comments
}

// docTexts returns what go doc -all shows of p: the package's doc, and the doc of every
// exported const, var, type, func and method, and of the specs and fields of their
// declarations. (go/doc moves a declaration's doc out of the AST into the Doc fields.)
func docTexts(p *doc.Package) []docText {
	out := []docText{{p.Doc, token.NoPos}}
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, docText{cg.Text(), cg.Pos()})
		}
	}
	specs := func(d *ast.GenDecl) {
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.ValueSpec:
				add(s.Doc)
				add(s.Comment)
			case *ast.TypeSpec:
				add(s.Doc)
				add(s.Comment)
				ast.Inspect(s.Type, func(n ast.Node) bool {
					if f, ok := n.(*ast.Field); ok {
						add(f.Doc)
						add(f.Comment)
					}
					return true
				})
			}
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			out = append(out, docText{v.Doc, v.Decl.Pos()})
			specs(v.Decl)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			out = append(out, docText{f.Doc, f.Decl.Pos()})
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, t := range p.Types {
		out = append(out, docText{t.Doc, t.Decl.Pos()})
		specs(t.Decl)
		values(t.Consts)
		values(t.Vars)
		funcs(t.Funcs)
		funcs(t.Methods)
	}
	return out
}

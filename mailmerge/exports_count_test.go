package mailmerge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxExported bounds the send job's public surface: its exported top-level identifiers
// (functions, types, variables and constants; not methods or fields), the journal, keys and
// shards it took from smtp included. The shared words (budgets, fates, tallies, stop) are
// package job's.
const maxExported = 70

// TestExportedIdentifiers fails when package mailmerge exports more than maxExported
// top-level identifiers: a new one replaces an old one, or the bound is raised on purpose.
func TestExportedIdentifiers(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NotEmpty(t, files)
	var names []string
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	assert.LessOrEqual(t, len(names), maxExported, "mailmerge exports %d top-level identifiers: %v", len(names), names)
	t.Logf("%d exported: %s", len(names), strings.Join(names, " "))
}

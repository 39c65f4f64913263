package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// TestNoCommandNameOutsideTheRegistry: the code spells a command through the registry's
// constants, never as a string literal of its own. It walks the module's non-test Go files
// outside this package (test files may spell names: they check what goes on the wire).
func TestNoCommandNameOutsideTheRegistry(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, spec := range All() {
		names[strings.ToLower(spec.Name)] = true
	}
	root := filepath.Join("..", "..")
	err := testkit.WalkGoTree(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && filepath.Clean(path) == filepath.Join(root, "internal", "commands"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[strings.ToLower(s)] {
					t.Errorf("%s: the command name %s as a literal: use the internal/commands constant", fset.Position(lit.Pos()), lit.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

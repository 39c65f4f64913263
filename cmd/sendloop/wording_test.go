package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// countedPlural finds a format verb for a number followed by a plural noun, such as
// "%d rows" or "%d/%d changes", which reads "1 rows" for a count of one: plural writes
// those.
var countedPlural = regexp.MustCompile(`%[-+ #0-9]*[dv](/%[-+ #0-9]*[dv])? (planned |unique |custom )?([a-z]{2,}s)\b`)

// verbs are words in s that follow a number as a verb ("column %d has no name").
var verbs = map[string]bool{"has": true, "is": true, "was": true, "does": true, "names": true, "holds": true, "allows": true}

// alwaysPlural lists the messages whose count is never one, with why.
var alwaysPlural = map[string]string{
	"column %q names %d custom fields (%s): use one of those keys": "an ambiguous column names two fields or more",
}

// TestCountsUsePlural checks the CLI's messages: a count before a noun goes through plural,
// so that one is "1 row" and not "1 rows".
func TestCountsUsePlural(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	err := testkit.WalkGoTree(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if _, ok := alwaysPlural[s]; !ok {
				for _, m := range countedPlural.FindAllStringSubmatch(s, -1) {
					if !verbs[m[3]] {
						t.Errorf("%s: %q: write the count with plural", fset.Position(lit.Pos()), m[0])
					}
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

func TestPlural(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		noun string
		want string
	}{
		{0, "row", "0 rows"},
		{1, "row", "1 row"},
		{2, "planned change", "2 planned changes"},
	}
	for _, tt := range tests {
		if got := plural(tt.n, tt.noun); got != tt.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

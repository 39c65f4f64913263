package sendloop_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/legacy"
)

// TestRootDeclarationsDoNotGoThroughLegacy: no type alias, constant or variable of the root
// package is declared from package legacy, so that go doc never sends a root user there,
// but for the retry classes and call options, which both clients take and which are
// declared once, in legacy (the root's comments list them, see below).
func TestRootDeclarationsDoNotGoThroughLegacy(t *testing.T) {
	fromLegacy := map[string]bool{"RetryClass": true, "CallOption": true, "RetryRead": true, "RetryIdempotent": true, "RetryOneShot": true}
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok == token.IMPORT {
				continue
			}
			for _, spec := range gen.Specs {
				var name string
				var exprs []ast.Expr
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Assign.IsValid() {
						continue
					}
					name, exprs = s.Name.Name, []ast.Expr{s.Type}
				case *ast.ValueSpec:
					name, exprs = s.Names[0].Name, append([]ast.Expr{s.Type}, s.Values...)
				}
				for _, e := range exprs {
					if e == nil {
						continue
					}
					ast.Inspect(e, func(n ast.Node) bool {
						if sel, ok := n.(*ast.SelectorExpr); ok {
							if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "legacy" && !fromLegacy[name] {
								t.Errorf("%s: %s is declared from legacy.%s", file, name, sel.Sel.Name)
							}
						}
						return true
					})
				}
			}
		}
	}
}

// TestRetryClassAndCallOptionDocs: go doc shows an alias's comment, not the constants and
// functions of the type it names, so the comments list them.
func TestRetryClassAndCallOptionDocs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want []string
	}{
		{"RetryClass", []string{"RetryRead", "RetryIdempotent", "RetryOneShot", "WithRetryClass"}},
		{"CallOption", []string{"WithRetryClass"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := aliasDoc(t, "client.go", tt.name)
			for _, w := range tt.want {
				assert.Contains(t, doc, w)
			}
		})
	}
}

// TestRetryClassesAndCallOptionsAreInterchangeable: the root's and legacy's classes and
// call options are the same types and values, so either package's may be given to the
// other's Call.
func TestRetryClassesAndCallOptionsAreInterchangeable(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []legacy.RetryClass{legacy.RetryRead, legacy.RetryIdempotent, legacy.RetryOneShot},
		[]sendloop.RetryClass{sendloop.RetryRead, sendloop.RetryIdempotent, sendloop.RetryOneShot})
	assert.Equal(t, []string{"read", "idempotent", "one-shot"},
		[]string{sendloop.RetryRead.String(), sendloop.RetryIdempotent.String(), sendloop.RetryOneShot.String()})

	c, srv := newTestClient(t)
	var rootOpts []sendloop.CallOption = []legacy.CallOption{legacy.WithRetryClass(legacy.RetryRead)}
	require.NoError(t, c.Call(context.Background(), commands.SystemSystemDateGet, nil, nil, rootOpts...))
	err := c.Call(context.Background(), commands.SystemSystemDateGet, nil, nil, legacy.WithRetryClass(legacy.RetryClass(9)))
	var ve *sendloop.ValidationError
	require.ErrorAs(t, err, &ve, "a legacy option read by the root's Call")
	assert.Contains(t, ve.Reason, "unknown retry class 9")

	lc, err := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = lc.Call(context.Background(), legacy.CommandMediaBrowse, nil, sendloop.WithRetryClass(sendloop.RetryClass(9)))
	require.ErrorContains(t, err, "unknown retry class 9", "a root option read by legacy's Call")
}

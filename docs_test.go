package sendloop_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
)

// TestEveryExportedFieldIsDocumented walks the importable packages (not internal/, cmd/ or
// examples/) and fails on an exported field of an exported struct with neither a doc
// comment nor a line comment: pkg.go.dev shows fields, and a field without words leaves
// its reader to guess the wire name, the unit or what zero means.
func TestEveryExportedFieldIsDocumented(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var missing []string
	err := testkit.WalkGoTree(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "cmd", "examples", "scripts":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.Name.IsExported() {
					missing = append(missing, undocumentedFields(fset, ts.Name.Name, ts.Type)...)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("exported field without a doc or line comment: %s", m)
	}
}

// undocumentedFields lists the exported fields of typ, and of the struct types written
// inside it, that carry no comment.
func undocumentedFields(fset *token.FileSet, owner string, typ ast.Expr) []string {
	var missing []string
	ast.Inspect(typ, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		for _, field := range st.Fields.List {
			if field.Doc != nil || field.Comment != nil {
				continue
			}
			for _, name := range fieldNames(field) {
				if ast.IsExported(name) {
					missing = append(missing, fset.Position(field.Pos()).String()+": "+owner+"."+name)
				}
			}
		}
		return true
	})
	return missing
}

// fieldNames gives a field's names, or for an embedded field the name of its type.
func fieldNames(field *ast.Field) []string {
	if len(field.Names) > 0 {
		names := make([]string, len(field.Names))
		for i, n := range field.Names {
			names[i] = n.Name
		}
		return names
	}
	typ := field.Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch t := typ.(type) {
	case *ast.Ident:
		return []string{t.Name}
	case *ast.SelectorExpr:
		return []string{t.Sel.Name}
	}
	return nil
}

// TestAliasDocsListTheFields checks that the doc comment of each exported alias of a struct
// declared in internal/ lists every field of the struct with its type, as a Go declaration
// indented in the comment: go doc shows an alias's comment but not the fields of the type
// it names, so the comment is the only place a reader finds them.
func TestAliasDocsListTheFields(t *testing.T) {
	t.Parallel()
	aliases := []struct {
		file, name string
		typ        reflect.Type
	}{
		{file: "client.go", name: "RetryPolicy", typ: reflect.TypeFor[sendloop.RetryPolicy]()},
		{file: "errors.go", name: "HTTPError", typ: reflect.TypeFor[sendloop.HTTPError]()},
		{file: "errors.go", name: "TransportError", typ: reflect.TypeFor[sendloop.TransportError]()},
		{file: "legacy/client.go", name: "RetryPolicy", typ: reflect.TypeFor[legacy.RetryPolicy]()},
		{file: "legacy/errors.go", name: "HTTPError", typ: reflect.TypeFor[legacy.HTTPError]()},
		{file: "legacy/errors.go", name: "TransportError", typ: reflect.TypeFor[legacy.TransportError]()},
		{file: "errors.go", name: "OutcomeUnknownError", typ: reflect.TypeFor[sendloop.OutcomeUnknownError]()},
		{file: "legacy/errors.go", name: "OutcomeUnknownError", typ: reflect.TypeFor[legacy.OutcomeUnknownError]()},
	}
	for _, a := range aliases {
		t.Run(a.file+":"+a.name, func(t *testing.T) {
			t.Parallel()
			doc := aliasDoc(t, a.file, a.name)
			if !strings.Contains(doc, "\ttype "+a.name+" struct {\n") {
				t.Errorf("the doc comment of %s does not declare type %s struct { … }", a.name, a.name)
			}
			for i := range a.typ.NumField() {
				f := a.typ.Field(i)
				if !f.IsExported() {
					continue
				}
				typ := strings.ReplaceAll(f.Type.String(), "transport.", "")
				if !strings.Contains(doc, "\t\t"+f.Name+" "+typ+"\n") || !strings.Contains(doc, "\t\t// "+f.Name+" ") {
					t.Errorf("the doc comment of %s does not document the field %s %s", a.name, f.Name, typ)
				}
			}
		})
	}
}

// aliasDoc returns the doc comment of the type name declared in file.
func aliasDoc(t *testing.T, file, name string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			if ts := spec.(*ast.TypeSpec); ts.Name.Name == name && ts.Assign.IsValid() {
				doc := ts.Doc
				if doc == nil {
					doc = gen.Doc
				}
				return doc.Text()
			}
		}
	}
	t.Fatalf("no alias %s in %s", name, file)
	return ""
}

package sendloop_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEveryExportedFieldIsDocumented walks the importable packages (not internal/, cmd/ or
// examples/) and fails on an exported field of an exported struct with neither a doc
// comment nor a line comment: pkg.go.dev shows fields, and a field without words leaves
// its reader to guess the wire name, the unit or what zero means.
func TestEveryExportedFieldIsDocumented(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var missing []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "internal", "cmd", "examples", "testdata", "scripts":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
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

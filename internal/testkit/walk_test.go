package testkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// TestWalkGoTreeSkipsWhatTheGoCommandIgnores walks a synthetic tree: the _ and . files and
// directories and the testdata directories, at any depth, are left out with what they
// hold; a root named like one of them is walked all the same.
func TestWalkGoTreeSkipsWhatTheGoCommandIgnores(t *testing.T) {
	t.Parallel()
	files := []string{
		"a.go",
		"_a.go",
		".a.go",
		"testdata.go", // a file named like the directory is a file like any other
		"pkg/b.go",
		"pkg/_b.go",
		"pkg/nested/c.go",
		"pkg/nested/testdata/c.go",
		"pkg/nested/_x/c.go",
		"pkg/nested/.y/c.go",
		"_readme_x/snippets.go",
		".y/d.go",
		"testdata/e.go",
		"testdata/deeper/e.go",
		"_x/inner/f.go",
	}
	tests := []struct {
		name string
		root string // under the tree
		want []string
	}{
		{"the module", ".", []string{"a.go", "testdata.go", "pkg/b.go", "pkg/nested/c.go"}},
		{"a package", "pkg/nested", []string{"pkg/nested/c.go"}},
		{"a root the go command would skip", "_x", []string{"_x/inner/f.go"}},
		{"testdata as the root", "testdata", []string{"testdata/e.go", "testdata/deeper/e.go"}},
	}
	tree := t.TempDir()
	for _, f := range files {
		path := filepath.Join(tree, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte("package p\n"), 0o644))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(tree, filepath.FromSlash(tt.root))
			var got []string
			err := testkit.WalkGoTree(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(tree, path)
				got = append(got, filepath.ToSlash(rel))
				return err
			})
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

// TestWalkGoTreeKeepsWalkDirsControls: fn's SkipDir and errors work as in filepath.WalkDir.
func TestWalkGoTreeKeepsWalkDirsControls(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	for _, f := range []string{"a/x.go", "b/y.go"} {
		path := filepath.Join(tree, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, nil, 0o644))
	}
	var seen []string
	err := testkit.WalkGoTree(tree, func(path string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == "a" {
			return filepath.SkipDir
		}
		seen = append(seen, filepath.Base(path))
		return err
	})
	require.NoError(t, err)
	assert.NotContains(t, seen, "x.go")
	assert.Contains(t, seen, "y.go")

	err = testkit.WalkGoTree(filepath.Join(tree, "missing"), func(_ string, _ fs.DirEntry, err error) error { return err })
	assert.ErrorIs(t, err, fs.ErrNotExist, "a root that cannot be read is fn's error, as in filepath.WalkDir")
}

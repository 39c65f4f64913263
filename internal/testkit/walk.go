package testkit

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// WalkGoTree walks the tree at root as the go command sees it: like filepath.WalkDir, but
// it leaves out what the go command ignores, the files and directories whose names start
// with _ or . and the directories named testdata, with everything under them. root itself
// is walked whatever its name. Every test that walks the module goes through it, so that
// what another test writes under a _ or . directory (or a testdata one) cannot change what
// a walk sees, nor vanish under it mid-walk.
func WalkGoTree(root string, fn fs.WalkDirFunc) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if d != nil && path != root && goIgnores(d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(path, d, err)
	})
}

// goIgnores reports whether the go command leaves d out of packages and patterns.
func goIgnores(d fs.DirEntry) bool {
	name := d.Name()
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || d.IsDir() && name == "testdata"
}

//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportFilesArePrivateUnderAnOpenUmask: --rejects and --plan name the list's
// addresses, so they are created 0600 even under umask 000, and an older file is made
// private too. Not parallel: the umask is the process's, and the parallel tests wait until
// this one has restored it.
func TestReportFilesArePrivateUnderAnOpenUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tc := range []struct {
		name, flag string
		extra      []string
		code       int
		preexist   bool
	}{
		{name: "rejects", flag: "--rejects", code: exitFailure},
		{name: "rejects over an older file", flag: "--rejects", code: exitFailure, preexist: true},
		{name: "plan", flag: "--plan", extra: []string{"--dry-run"}, code: exitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "m.csv", "EmailAddress,First name,Plan\nnot an address,X,free\n")
			out := filepath.Join(dir, "report.csv")
			if tc.preexist {
				require.NoError(t, os.WriteFile(out, []byte("old"), 0o666))
			}
			args := append([]string{"sync", "--list", "1", "--csv", csvPath, tc.flag, out}, tc.extra...)
			r := f.sendloop(t, args...)
			assert.Equal(t, tc.code, r.code, "stderr: %s", r.stderr)
			info, err := os.Stat(out)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		})
	}
}

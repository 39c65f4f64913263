//go:build unix

package mailmerge_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreviewIsPrivateUnderAnOpenUmask: preview files hold the first rows' addresses and
// merged data, so the directory is created 0700 and every file 0600 even when the umask
// would let anyone read them. Not parallel: the umask is the process's, and no parallel
// test runs while a sequential top-level test does.
func TestPreviewIsPrivateUnderAnOpenUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir, src := listFile(t, 4)
	tmpl := newsTemplate
	job, err := mailmerge.New(src, &tmpl, mailmerge.Options{NoUnsubscribe: true})
	require.NoError(t, err)
	out := filepath.Join(dir, "preview")
	paths, err := job.WritePreview(testContext(t), out, 2)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{out, 0o700},
		{paths[0], 0o600},
		{paths[1], 0o600},
	} {
		info, err := os.Stat(tc.path)
		require.NoError(t, err)
		assert.Equal(t, tc.want, info.Mode().Perm(), tc.path)
	}
}

//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package listsync

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStateLockWaitsOutAMomentaryHolder: a lock released while lockState waits is taken,
// as one held by a child process between its fork and its exec is.
func TestStateLockWaitsOutAMomentaryHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state")
	held, err := lockState(path)
	require.NoError(t, err)
	retries := 0
	unlock, err := lockStateWithin(path, time.Minute, func() {
		if retries++; retries == 1 {
			held() // released once the first attempt has found it held
		}
	})
	require.NoError(t, err)
	require.Equal(t, 1, retries, "taken at the attempt after the release")
	unlock()
}

// TestStateLockLeavesNothingAndMakesItsFolder: the first night's state folder need not
// exist (it is made 0700), and a run leaves no lock file for a CI cache to keep.
func TestStateLockLeavesNothingAndMakesItsFolder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".cache", "sendloop")
	path := filepath.Join(dir, "list-12.state")
	unlock, err := lockState(path)
	require.NoError(t, err)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	_, err = lockStateWithin(path, 0, nil)
	require.ErrorIs(t, err, errStateLocked, "a second run is refused while the first holds it")
	unlock()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no lock file is left behind")
}

// TestStateLockHeldByOneAtATime: runs that take and release the lock, removing its file
// each time, never hold it two at once.
func TestStateLockHeldByOneAtATime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state")
	var holders, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				unlock, err := lockStateWithin(path, time.Minute, runtime.Gosched)
				if !assert.NoError(t, err) {
					return
				}
				n := holders.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				for range 200 { // hold it a moment, so that others open the file meanwhile
					runtime.Gosched()
				}
				holders.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), most.Load())
}

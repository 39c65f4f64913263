//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package listsync

import (
	"path/filepath"
	"testing"
	"time"

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

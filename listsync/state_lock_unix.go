//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package listsync

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockWait is how long lockState waits out a lock held elsewhere. A child process that this
// program is starting holds a copy of its open files from its fork to its exec, the lock's
// file included: a lock this program has just released may stay held for that moment.
const lockWait = 250 * time.Millisecond

// lockState takes the lock of the state at path (the file path.lock, kept), waiting at most
// lockWait; the system drops it when the process ends, however it ends.
func lockState(path string) (unlock func(), err error) {
	return lockStateWithin(path, lockWait, nil)
}

// lockStateWithin is lockState waiting at most wait, calling retry (if not nil) before
// each new attempt.
func lockStateWithin(path string, wait time.Duration, retry func()) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { f.Close() }, nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, err
		case time.Now().After(deadline):
			f.Close()
			return nil, errStateLocked
		}
		if retry != nil {
			retry()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

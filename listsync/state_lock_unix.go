//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package listsync

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// sameFile reports whether name still leads to the open file f.
func sameFile(f *os.File, name string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(name)
	return err == nil && os.SameFile(held, now)
}

// lockWait is how long lockState waits out a lock held elsewhere. A child process that this
// program is starting holds a copy of its open files from its fork to its exec, the lock's
// file included: a lock this program has just released may stay held for that moment.
const lockWait = 250 * time.Millisecond

// lockState takes the lock of the state at path (the file path.lock, removed again by
// unlock), waiting at most lockWait; the system drops it when the process ends, however it
// ends. A missing folder of the state is made, mode 0700: the state is personal data.
func lockState(path string) (unlock func(), err error) {
	return lockStateWithin(path, lockWait, nil)
}

// lockStateWithin is lockState waiting at most wait, calling retry (if not nil) before
// each new attempt.
//
// The lock file is removed while its lock is held, so a run leaves nothing behind for a CI
// cache to keep. A run that waited on the file may then hold a lock on a name that is gone,
// while a third run makes the file anew: so a lock counts only when the name still leads
// to the locked file, else it is taken again.
func lockStateWithin(path string, wait time.Duration, retry func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	name := path + ".lock"
	deadline := time.Now().Add(wait)
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil && sameFile(f, name):
			return func() { os.Remove(name); f.Close() }, nil
		case err == nil: // removed by the holder we waited for: lock the new one
			f.Close()
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, err
		case time.Now().After(deadline):
			f.Close()
			return nil, errStateLocked
		}
		f.Close()
		if retry != nil {
			retry()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

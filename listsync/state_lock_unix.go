//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package listsync

import (
	"errors"
	"os"
	"syscall"
)

// lockState takes the lock of the state at path (the file path.lock, kept), without
// waiting; the system drops it when the process ends, however it ends.
func lockState(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errStateLocked
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

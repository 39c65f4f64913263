//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package listsync

import (
	"errors"
	"os"
	"path/filepath"
)

// lockState takes the lock of the state at path by creating path.lock, removed when the
// run ends; a run killed on these systems leaves it, to be removed by hand.
func lockState(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, errStateLocked
	}
	if err != nil {
		return nil, err
	}
	f.Close()
	return func() { os.Remove(name) }, nil
}

package listsync

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// stateStore keeps the bytes of a sync's state. The format (state_file.go) and the job's
// use of the state (state.go) go through it alone, so that a state can live elsewhere than
// in a local file (a row of a database, say) without touching either: fileStore is the
// local file.
type stateStore interface {
	// lock keeps other runs from using the state until unlock is called.
	lock() (unlock func(), err error)
	// open returns the state's bytes from their start, or an error matching
	// fs.ErrNotExist when the store holds none.
	open() (io.ReadCloser, error)
	// create starts a new version of the state, which replaces the one held at commit.
	create() (stateSink, error)
	// mark sets the state's in-use byte (at stateMarkOffset of the bytes, outside their
	// seal) in place, durably; a store that holds no state, or bytes that are no state, is
	// left as it is.
	mark(b byte) error
}

// stateSink is a new version of a state being written.
type stateSink interface {
	io.Writer
	// commit makes the version the store's state, durably.
	commit() error
	// abort forgets the version.
	abort()
}

// fileStore is a state in a local file: written to a temporary file beside it (mode 0600)
// renamed into place, locked by path.lock.
type fileStore struct {
	path string
	sync bool // sync files and the directory: off only in tests of many runs
}

func (s fileStore) lock() (func(), error) { return lockState(s.path) }

func (s fileStore) open() (io.ReadCloser, error) { return os.Open(s.path) }

func (s fileStore) create() (stateSink, error) {
	f, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &fileSink{f: f, store: s}, nil
}

func (s fileStore) mark(mark byte) error {
	f, err := os.OpenFile(s.path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing to distrust: the run writes a state from scratch
	}
	if err != nil {
		return fmt.Errorf("marking the state in use: %w", err)
	}
	defer f.Close()
	var magic [len(stateMagic)]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != stateMagic {
		return nil // not a state: not trusted anyway
	}
	if _, err := f.WriteAt([]byte{mark}, stateMarkOffset); err != nil {
		return fmt.Errorf("marking the state in use: %w", err)
	}
	if !s.sync {
		return nil
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("marking the state in use: %w", err)
	}
	return nil
}

// fileSink is a new version of a fileStore's state: a temporary file beside it.
type fileSink struct {
	f     *os.File
	store fileStore
}

func (w *fileSink) Write(b []byte) (int, error) { return w.f.Write(b) }

func (w *fileSink) commit() error {
	var err error
	if w.store.sync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.store.path)
	}
	if err != nil {
		os.Remove(w.f.Name())
		return err
	}
	if w.store.sync {
		syncDir(filepath.Dir(w.store.path))
	}
	return nil
}

func (w *fileSink) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

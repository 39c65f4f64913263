package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
)

// rowSpool keeps the rows a --json document lists beyond memory (a sync's rejected rows),
// one JSON document per line in a temporary file, to be read back in order. The file is
// made on the first append and its name removed at once where the OS allows it (Unix), so
// that a killed run leaves nothing behind; elsewhere Close removes it. It is output
// plumbing of the CLI, not a rule of a job: the library reports rows through its hooks.
type rowSpool struct {
	pattern string
	f       *os.File
	w       *bufio.Writer
	name    string // the file's name while it still has one (Windows), else ""
	size    int64
	err     error // the first write error: the spool is then incomplete
}

func newRowSpool(pattern string) *rowSpool { return &rowSpool{pattern: pattern} }

// Append adds one record, which must hold no newline (encoding/json writes none).
func (s *rowSpool) Append(rec []byte) error {
	if s.err == nil && bytes.IndexByte(rec, '\n') >= 0 {
		s.err = errors.New("a spooled row holds a newline")
	}
	if s.err == nil && s.f == nil {
		s.f, s.err = os.CreateTemp("", s.pattern)
		if s.err == nil {
			s.w = bufio.NewWriter(s.f)
			if os.Remove(s.f.Name()) != nil {
				s.name = s.f.Name()
			}
		}
	}
	if s.err != nil {
		return s.err
	}
	n, err := s.w.Write(append(rec, '\n'))
	s.size += int64(n)
	s.err = err
	return err
}

// Each calls fn with every record in order; rec is valid until fn returns.
func (s *rowSpool) Each(fn func(rec []byte) error) error {
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReader(io.NewSectionReader(s.f, 0, s.size))
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := fn(bytes.TrimSuffix(line, []byte{'\n'})); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Close releases the file, and removes it where its name was kept.
func (s *rowSpool) Close() {
	if s.f == nil {
		return
	}
	_ = s.f.Close()
	if s.name != "" {
		_ = os.Remove(s.name)
	}
	s.f = nil
}

// createPrivate creates (or truncates) the report file path, mode 0600 whatever the umask:
// a rejects file or a plan names the list's addresses, which are personal data.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) { // a file made before, by another umask
		f.Close()
		return nil, err
	}
	return f, nil
}

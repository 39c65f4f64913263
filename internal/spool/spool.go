// Package spool keeps records on disk to be read back in order: the rows a long job lists
// (rejected rows, rows of a send report) that must not grow its memory with the input.
//
// A Spool's file is created on the first Append, in a temporary directory, and its name is
// removed at once where the OS allows it (Unix), so that even a killed process leaves
// nothing behind; where it does not (Windows), Close removes it.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Spool is an append-only list of records on disk. It is not safe for concurrent use.
type Spool struct {
	dir, pattern string
	f            *os.File
	w            *bufio.Writer
	name         string // the file's name while it still has one (Windows), else ""
	n            int
	err          error // the first error of a write: the spool is then incomplete
}

// New returns an empty spool whose file, once needed, is made in dir (os.TempDir() when
// "") with a name of pattern (see os.CreateTemp).
func New(dir, pattern string) *Spool {
	return &Spool{dir: dir, pattern: pattern}
}

// Len returns the number of records appended.
func (s *Spool) Len() int { return s.n }

// Append adds a record. It returns the spool's first error, and later calls do nothing
// once one happened: Each reports it too.
func (s *Spool) Append(rec []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		if s.err = s.create(); s.err != nil {
			return s.err
		}
	}
	var head [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(head[:binary.PutUvarint(head[:], uint64(len(rec)))]); err != nil {
		s.err = err
		return err
	}
	if _, err := s.w.Write(rec); err != nil {
		s.err = err
		return err
	}
	s.n++
	return nil
}

func (s *Spool) create() error {
	f, err := os.CreateTemp(s.dir, s.pattern)
	if err != nil {
		return err
	}
	s.f, s.w = f, bufio.NewWriter(f)
	if os.Remove(f.Name()) != nil {
		s.name = f.Name() // an open file cannot be removed here: Close does it
	}
	return nil
}

// Each calls fn with every record, in the order they were appended; rec is valid until fn
// returns. It stops at fn's first error, and returns it. Records may be appended after
// Each returns.
func (s *Spool) Each(fn func(rec []byte) error) error {
	if s.err != nil {
		return fmt.Errorf("spool: %w", s.err)
	}
	if s.f == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		s.err = err
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	defer s.f.Seek(0, io.SeekEnd)
	r := bufio.NewReader(s.f)
	var buf []byte
	for range s.n {
		size, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("spool: reading back: %w", unexpected(err))
		}
		if uint64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("spool: reading back: %w", unexpected(err))
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close closes the file and removes it if it still has a name. The spool is empty after.
func (s *Spool) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		if rerr := os.Remove(s.name); err == nil {
			err = rerr
		}
	}
	s.f, s.w, s.name, s.n, s.err = nil, nil, "", 0, nil
	return err
}

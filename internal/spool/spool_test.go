package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func records(s *Spool) ([][]byte, error) {
	var out [][]byte
	err := s.Each(func(rec []byte) error {
		out = append(out, bytes.Clone(rec))
		return nil
	})
	return out, err
}

func TestSpoolReplaysInOrder(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), 70000) // longer than the reader's buffer
	tests := []struct {
		name string
		recs [][]byte
	}{
		{"none", nil},
		{"one", [][]byte{[]byte("line,email,reason")}},
		{"empty and binary", [][]byte{{}, {0, '\n', '\r', 0xff}, []byte("é,\"x\"")}},
		{"large", [][]byte{big, []byte("after"), big}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := New(dir, "spool-*")
			t.Cleanup(func() { s.Close() })
			for _, r := range tt.recs {
				require.NoError(t, s.Append(r))
			}
			assert.Equal(t, len(tt.recs), s.Len())
			for range 2 { // Each leaves the spool as it was
				got, err := records(s)
				require.NoError(t, err)
				assert.Equal(t, len(tt.recs), len(got))
				for i := range got {
					assert.True(t, bytes.Equal(tt.recs[i], got[i]), "record %d", i)
				}
			}
			require.NoError(t, s.Append([]byte("later")))
			got, err := records(s)
			require.NoError(t, err)
			assert.Equal(t, "later", string(got[len(got)-1]))
		})
	}
}

// TestSpoolLeavesNoFile: the file has no name once made (Unix), or loses it on Close.
func TestSpoolLeavesNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := New(dir, "spool-*")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file before the first record")
	require.NoError(t, s.Append([]byte("a")))
	if runtime.GOOS != "windows" {
		entries, err = os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "the file is unlinked as soon as made")
	}
	require.NoError(t, s.Close())
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Zero(t, s.Len())
	require.NoError(t, s.Close(), "a second Close does nothing")
}

func TestSpoolErrors(t *testing.T) {
	t.Parallel()
	t.Run("the directory does not exist", func(t *testing.T) {
		t.Parallel()
		s := New(t.TempDir()+"/missing", "spool-*")
		require.Error(t, s.Append([]byte("a")))
		require.Error(t, s.Append([]byte("b")), "the first error stays")
		_, err := records(s)
		require.Error(t, err)
	})
	t.Run("fn's error stops the replay", func(t *testing.T) {
		t.Parallel()
		s := New(t.TempDir(), "spool-*")
		t.Cleanup(func() { s.Close() })
		for i := range 5 {
			require.NoError(t, s.Append([]byte(fmt.Sprint(i))))
		}
		stop := errors.New("stop")
		n := 0
		err := s.Each(func([]byte) error {
			n++
			if n == 2 {
				return stop
			}
			return nil
		})
		require.ErrorIs(t, err, stop)
		assert.Equal(t, 2, n)
		got, err := records(s)
		require.NoError(t, err)
		assert.Len(t, got, 5, "a stopped replay leaves the records")
	})
}

// FuzzSpool appends the records that data splits into (at each 0xff) and reads them back.
func FuzzSpool(f *testing.F) {
	f.Add([]byte("a\xffb\xff\xff"))
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0x80}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New(t.TempDir(), "spool-*")
		defer s.Close()
		want := bytes.Split(data, []byte{0xff})
		for _, r := range want {
			require.NoError(t, s.Append(r))
		}
		got, err := records(s)
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for i := range want {
			require.True(t, bytes.Equal(want[i], got[i]))
		}
	})
}

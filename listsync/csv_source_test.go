package listsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReopen: a sync reads the CSV several times; a file whose size or modification time
// changed since OpenCSV is refused.
func TestReopen(t *testing.T) {
	t.Parallel()
	const content = "EmailAddress\nann@example.com\n"
	tests := []struct {
		name   string
		change func(path string) error
		ok     bool
	}{
		{"unchanged", func(string) error { return nil }, true},
		{"appended", func(path string) error {
			return os.WriteFile(path, []byte(content+"bob@example.com\n"), 0o644)
		}, false},
		{"same size, rewritten", func(path string) error {
			if err := os.WriteFile(path, []byte(strings.Replace(content, "ann", "bob", 1)), 0o644); err != nil {
				return err
			}
			return os.Chtimes(path, time.Time{}, time.Now().Add(time.Hour))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "m.csv")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := OpenCSV(path, CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.change(path); err != nil {
				t.Fatal(err)
			}
			r, err := f.Reopen()
			if err == nil {
				r.Close()
			}
			if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), "changed during the sync") {
				t.Errorf("error %v, want ok=%t", err, tt.ok)
			}
		})
	}
}

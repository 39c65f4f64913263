package csvsync

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func TestRawLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f.csv")
	content := "\uFEFFEmailAddress;Plan\n" +
		"ann@example.com;pro\n" +
		"\"bo\"b@example.com;free\r\n" + // 3
		"\"unterminated@example.com;x\n" + // 4
		"\n" + // 5
		";only\n" // 6
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRawLines(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tt := range []struct {
		line, col int
		want      string
	}{
		{1, 0, "EmailAddress"},
		{3, 0, `"bo"b@example.com`},
		{4, 0, `"unterminated@example.com`},
		{4, 5, `"unterminated@example.com;x`}, // no such column: the line
		{5, 0, ""},
		{6, 0, ";only"}, // an empty address column: the line
		{2, 0, ""},      // gone by
		{9, 0, ""},      // past the end
	} {
		if got := r.Field(tt.line, tt.col, ';'); got != tt.want {
			t.Errorf("Field(%d, %d) = %q, want %q", tt.line, tt.col, got, tt.want)
		}
	}
}

func writeTestFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

func utf8Valid(s string) bool { return utf8.ValidString(s) }

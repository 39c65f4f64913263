package testkit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

func TestExportedNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{name: "top-level names only", files: map[string]string{"a.go": `package p
type T struct{ Field int }
func (T) Method() {}
func F() {}
func f() {}
const C, c = 1, 2
var (V int; v int)`}, want: []string{"C", "F", "T", "V"}},
		{name: "test files left out", files: map[string]string{"a.go": "package p\nfunc A() {}\n", "a_test.go": "package p\nfunc TestX() {}\n"},
			want: []string{"A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, src := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600))
			}
			got, err := testkit.ExportedNames(dir)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

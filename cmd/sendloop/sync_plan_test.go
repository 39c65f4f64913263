package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sendloop/sendloop/listsync"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanFileMatchesWriteCSV: the file `sync --dry-run --plan` writes (to a file and to
// stdout) is byte for byte what a Go program's Plan.WriteCSV writes for the same file and
// list.
func TestPlanFileMatchesWriteCSV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		content     string
		unsubscribe bool
	}{
		{name: "every kind of row", content: membersCSV, unsubscribe: true},
		{name: "updates and additions only", content: "EmailAddress,First name,Plan\nann@example.com,Annie,team\nnew@example.com,,\nbob@example.com,Bob,free\nbad-address,,\n"},
		{
			name:    "semicolons, a byte-order mark, quoted line breaks and commas",
			content: "\ufeffE-mail;Plan\r\nann@example.com;\"two\r\nlines\"\r\n\"new@example.com\";\"a, b; \"\"c\"\"\"\r\nbad;x\r\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c := syncFake(t)
			dir := t.TempDir()
			path := writeFile(t, dir, "members.csv", tt.content)
			planPath := filepath.Join(dir, "plan.csv")
			args := []string{"sync", "--list", "1", "--csv", path, "--dry-run"}
			if tt.unsubscribe {
				args = append(args, "--unsubscribe-missing", "--max-unsubscribe", "100%")
			}
			toFile := f.sendloop(t, append(args, "--plan", planPath)...)
			require.Contains(t, []int{0, 1}, toFile.code, "stderr:\n%s", toFile.stderr)
			fromCLI, err := os.ReadFile(planPath)
			require.NoError(t, err)
			toStdout := f.sendloop(t, append(args, "--plan", "-")...)
			require.Contains(t, []int{0, 1}, toStdout.code, "stderr:\n%s", toStdout.stderr)

			src, err := listsync.OpenCSV(path, listsync.CSVOptions{})
			require.NoError(t, err)
			job, err := listsync.New(testContext(t), c, demoListID, src, listsync.Options{UnsubscribeMissing: tt.unsubscribe, TempDir: t.TempDir()})
			require.NoError(t, err)
			plan, err := job.Plan(testContext(t))
			require.NoError(t, err)
			defer plan.Close()
			var fromGo bytes.Buffer
			require.NoError(t, plan.WriteCSV(testContext(t), &fromGo))

			assert.Equal(t, fromGo.String(), string(fromCLI), "--plan FILE")
			assert.Equal(t, fromGo.String(), toStdout.stdout, "--plan -")
			assert.Contains(t, fromGo.String(), "\nreject,", "the file holds its rejected rows")
		})
	}
}

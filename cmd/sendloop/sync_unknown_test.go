package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestSyncOutcomeUnknown: every import and update runs but loses its answer, on every
// attempt. The rows are reported as of unknown outcome, apart from the rejects: never
// failed, never against --max-rejects; the run exits 1 with the hint that the same sync
// settles them, unless --max-unknown allows them; and the same sync run again converges.
func TestSyncOutcomeUnknown(t *testing.T) {
	t.Parallel()
	const content = "EmailAddress,Plan\nbob@example.com,team\nnew1@example.com,free\nnew2@example.com,free\nnew3@example.com,free\n"
	tests := []struct {
		name       string
		maxUnknown string
		code       int
		stderrHas  string
	}{
		{"no budget", "0", exitFailure, `"error":"4 rows of unknown outcome (listed in REJECTS): the same sync run again settles them"`},
		{"over the budget", "3", exitFailure, `"error":"4 rows of unknown outcome (listed in REJECTS), over --max-unknown 3: the same sync run again settles them"`},
		{"within the budget", "100%", exitOK, "sendloop: 4 rows of unknown outcome (listed in REJECTS), within --max-unknown 100%\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _ := syncFake(t)
			lost := sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution, Times: 100}
			f.srv.InjectFault("subscriber.import", lost)
			f.srv.InjectFault("subscriber.update", lost)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "members.csv", content)
			rejectsPath := filepath.Join(dir, "rejects.csv")
			r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--rejects", rejectsPath, "--max-unknown", tt.maxUnknown)
			require.Equal(t, tt.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, strings.ReplaceAll(tt.stderrHas, "REJECTS", rejectsPath))
			assert.NotContains(t, r.stderr, "rejected (")
			assert.NotContains(t, r.stderr, "for usage")

			var doc struct {
				Result        syncResult     `json:"result"`
				RejectBudget  map[string]any `json:"reject_budget"`
				UnknownBudget map[string]any `json:"unknown_budget"`
				RejectedRows  []struct {
					Outcome string `json:"outcome"`
				} `json:"rejected_rows"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			res := doc.Result
			assert.Equal(t, 3, res.AddUnknown)
			assert.Equal(t, 1, res.UpdateUnknown)
			assert.Equal(t, 4, res.RowsUnknown)
			assert.Zero(t, res.AddFailed+res.UpdateFailed+res.RowsFailed+res.Rejected)
			assert.Equal(t, 4, res.RowsDone+res.RowsFailed+res.RowsUnknown+res.RowsNotAttempted)
			assert.EqualValues(t, 0, doc.RejectBudget["rejects"])
			assert.EqualValues(t, 4, doc.UnknownBudget["unknown"])
			assert.Equal(t, tt.code == exitOK, doc.UnknownBudget["held"])
			require.Len(t, doc.RejectedRows, 4)
			for _, row := range doc.RejectedRows {
				assert.Equal(t, "unknown", row.Outcome)
			}

			b, err := os.ReadFile(rejectsPath)
			require.NoError(t, err)
			recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
			require.NoError(t, err)
			require.Len(t, recs, 5)
			assert.Equal(t, []string{"line", "email", "reason", "outcome"}, recs[0])
			for _, rec := range recs[1:] {
				assert.Equal(t, "unknown", rec[3])
				assert.Contains(t, rec[2], "(run the sync again to know)")
			}

			// The lost answers' changes were made: the same sync again finds nothing to do.
			f.srv.ClearFaults()
			again := f.sendloop(t, "sync", "--list", "1", "--csv", csvPath)
			expect(t, again, exitOK, []string{"Synced"}, []string{"plan: 0 to add, 0 to update"})
		})
	}
}

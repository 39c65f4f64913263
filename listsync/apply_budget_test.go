package listsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestApplyJudgesItsBudgets: Apply judges the reject and unknown budgets once, at the end,
// and returns the verdict as *job.BudgetError beside its whole Result: a Go program gets
// the verdict `sendloop sync` prints.
func TestApplyJudgesItsBudgets(t *testing.T) {
	t.Parallel()
	// 4 rows: one invalid address (rejected by the plan), one duplicate, two new members.
	rows := []Row{{Email: "new1@example.com"}, {Email: "not an address"}, {Email: "new1@example.com"}, {Email: "new2@example.com"}}
	for _, tc := range []struct {
		name              string
		rejects, unknown  job.Budget
		lose              bool // the import's answer is lost: its rows are of unknown outcome
		wantRejects       bool // a verdict on MaxRejects
		wantUnknown       bool
		rejectsAllowedOf4 int
	}{
		{name: "zero allows none", wantRejects: true, rejectsAllowedOf4: 0},
		{name: "a count that holds", rejects: job.Rows(2), rejectsAllowedOf4: 2},
		{name: "a share beyond", rejects: job.Percent(25), wantRejects: true, rejectsAllowedOf4: 1},
		{name: "unknown rows over none", rejects: job.Unlimited(), lose: true, wantUnknown: true, rejectsAllowedOf4: -1},
		{name: "unknown rows within", rejects: job.Unlimited(), unknown: job.Percent(50), lose: true, rejectsAllowedOf4: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, c := demoList(t)
			pl := planRows(t, c, Rows(rows), Options{})
			if tc.lose {
				srv.InjectFault(commands.SubscriberImport, sendlooptest.Fault{Status: 504, Times: 1000})
			}
			res, err := pl.Apply(testContext(t), ApplyOptions{MaxRejects: tc.rejects, MaxUnknown: tc.unknown})
			require.NotNil(t, res, "the whole result comes with the verdict")
			checkIdentities(t, pl, res)
			verdicts := map[string]*job.BudgetError{}
			for _, e := range unjoin(err) {
				var be *job.BudgetError
				require.ErrorAs(t, e, &be, "only budget verdicts: %v", e)
				verdicts[be.Budget] = be
			}
			assert.Equal(t, tc.wantRejects, verdicts["MaxRejects"] != nil, "%v", err)
			assert.Equal(t, tc.wantUnknown, verdicts["MaxUnknown"] != nil, "%v", err)
			if be := verdicts["MaxRejects"]; be != nil {
				assert.Equal(t, res.RowsFailed, be.Rows)
				assert.Equal(t, pl.Rows, be.Total)
				assert.Equal(t, tc.rejectsAllowedOf4, be.Allowed)
			}
			if be := verdicts["MaxUnknown"]; be != nil {
				assert.Equal(t, res.RowsUnknown, be.Rows)
			}
		})
	}
}

// unjoin lists the errors err joins (err itself when it joins none).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

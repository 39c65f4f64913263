package listsync

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
)

// TestApplyJudgesTheRejectBudget: Apply gives the verdict of MaxRejects beside its whole
// Result, so that a Go program and the CLI judge a run alike.
func TestApplyJudgesTheRejectBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		budget job.Budget
		over   bool
	}{
		{name: "zero allows none", over: true},
		{name: "a count that holds", budget: job.Rows(1)},
		{name: "a share rounded up", budget: job.Percent(1)},
		{name: "unlimited", budget: job.Unlimited()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t)
			src := Rows([]Row{{Email: "new@example.com"}, {Email: "not an address"}})
			pl := planRows(t, c, src, Options{})
			res, err := pl.Apply(testContext(t), ApplyOptions{MaxRejects: tc.budget})
			require.NotNil(t, res, "the Result comes with the verdict")
			assert.Equal(t, 1, res.Rows.Rejected+res.Rows.Refused)
			assert.Equal(t, 1, res.Adds.Done)
			var be *job.BudgetError
			if !tc.over {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.As(err, &be), "%v", err)
			assert.Equal(t, "MaxRejects", be.Budget)
			assert.Equal(t, 1, be.Rows)
			assert.Equal(t, 2, be.Total)
		})
	}
}

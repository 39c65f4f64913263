package sendqueue_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
)

func TestStatusVerdict(t *testing.T) {
	t.Parallel()
	st := &sendqueue.Status{Rows: 10, Fates: map[string]int{sendqueue.FateDone: 5, sendqueue.FateRefused: 1,
		sendqueue.FateRejected: 1, sendqueue.FateUnknown: 1, sendqueue.FateSuppressed: 2}}
	tests := []struct {
		name                string
		maxRejects, maxUnkn job.Budget
		wantOver            []string
	}{
		{name: "the zero budgets allow none", wantOver: []string{"MaxRejects", "MaxUnknown"}},
		{name: "within both", maxRejects: job.Rows(2), maxUnkn: job.Rows(1)},
		{name: "suppressed rows are no rejects", maxRejects: job.Percent(20), maxUnkn: job.Unlimited()},
		{name: "one reject too many", maxRejects: job.Rows(1), maxUnkn: job.Unlimited(), wantOver: []string{"MaxRejects"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := st.Verdict(tt.maxRejects, tt.maxUnkn)
			var over []string
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range joined.Unwrap() {
					var be *job.BudgetError
					require.ErrorAs(t, e, &be)
					over = append(over, be.Budget)
				}
			}
			if len(tt.wantOver) == 0 {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tt.wantOver, over)
		})
	}
}

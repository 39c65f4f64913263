package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	sljob "github.com/go-sendloop/sendloop/job"
)

// TestSendBudgetOutcomeRendersTheLibrarysVerdict: send's reject_budget and unknown_budget
// say "over" exactly when mailmerge's Send returned the *job.BudgetError of that budget,
// alone or joined with the other's; the command judges nothing itself.
func TestSendBudgetOutcomeRendersTheLibrarysVerdict(t *testing.T) {
	t.Parallel()
	rejects := rejectBudget{limit: sljob.Rows(2), flag: flagMaxRejects}
	unknown := rejectBudget{limit: sljob.Percent(10), flag: flagMaxUnknown}
	overRejects := &sljob.BudgetError{Budget: "MaxRejects", What: "rejected or refused", Rows: 3, Total: 20, Allowed: 2, Limit: sljob.Rows(2)}
	overUnknown := &sljob.BudgetError{Budget: "MaxUnknown", What: "of unknown outcome", Rows: 5, Total: 20, Allowed: 2, Limit: sljob.Percent(10)}
	tests := []struct {
		name             string
		err              error
		rejectsHeld      bool
		unknownHeld      bool
		rejectsAllowed   int
		unknownAllowedIs int
	}{
		{"no verdict", nil, true, true, 2, 2},
		{"rejects over", overRejects, false, true, 2, 2},
		{"unknown over", overUnknown, true, false, 2, 2},
		{"both over, joined", errors.Join(overRejects, overUnknown), false, false, 2, 2},
		{"wrapped", fmt.Errorf("send: %w", overUnknown), true, false, 2, 2},
		{"a stopped run: no verdict", errors.New("relay down"), true, true, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := sendBudgetOutcome(rejects, 3, 20, tt.err)
			u := sendBudgetOutcome(unknown, 5, 20, tt.err)
			assert.Equal(t, tt.rejectsHeld, r.Held)
			assert.Equal(t, tt.unknownHeld, u.Held)
			assert.Equal(t, tt.rejectsAllowed, r.Allowed)
			assert.Equal(t, tt.unknownAllowedIs, u.Allowed)
			assert.Equal(t, flagMaxRejects, r.flagName())
			assert.Equal(t, flagMaxUnknown, u.flagName())
		})
	}
}

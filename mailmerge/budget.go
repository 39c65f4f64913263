package mailmerge

import (
	"errors"

	"github.com/go-sendloop/sendloop/job"
)

// ProgressKind is the job.Progress.Kind of a send's progress: one kind of work, a message
// per row.
const ProgressKind = "send"

// The names a *job.BudgetError from Send gives its budget (job.BudgetError.Budget) and the
// rows it counts (job.BudgetError.What).
const (
	budgetRejects = "MaxRejects"
	budgetUnknown = "MaxUnknown"
	whatRejects   = "rejected or refused"
	whatUnknown   = "of unknown outcome"
)

// checkBudgets returns the *job.BudgetError of each budget res exceeds, joined: judged once,
// here, by job.Judge, so that every caller reads the same verdict.
func checkBudgets(res *Result, opts SendOptions) error {
	var errs []error
	for _, c := range []struct {
		name, what string
		rows       int
		limit      job.Budget
	}{
		{budgetRejects, whatRejects, res.Rejects(), opts.MaxRejects},
		{budgetUnknown, whatUnknown, res.Unknowns(), opts.MaxUnknown},
	} {
		if err := job.Judge(c.name, c.what, c.limit, c.rows, res.Rows); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

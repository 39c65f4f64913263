package mailmerge

import (
	"errors"
	"fmt"

	"github.com/go-sendloop/sendloop/internal/share"
)

// Budget is how many rows of a kind a send may end with and still succeed: a number of
// rows, or a share of the source's rows rounded up. The zero Budget sets no bound: Send
// reports every row and leaves the judging to the caller.
type Budget struct {
	l   share.Limit
	set bool
}

// MaxRows is a budget of n rows; MaxRows(0) allows none.
func MaxRows(n int) Budget { return Budget{l: share.Count(n), set: true} }

// MaxPercent is a budget of p % of the source's rows (0 to 100; MaxPercent(100) allows
// every row).
func MaxPercent(p float64) Budget { return Budget{l: share.Of(p), set: true} }

// ParseBudget reads a budget as `--max-rejects` and `--max-unknown` take it: "N" rows, or
// "N%" of the source's rows.
func ParseBudget(s string) (Budget, error) {
	l, err := share.Parse(s)
	if err != nil {
		return Budget{}, fmt.Errorf("budget %q: %w", s, err)
	}
	return Budget{l: l, set: true}, nil
}

// Of returns how many of rows the budget allows, or -1 for any number (the zero Budget,
// and 100 %).
func (b Budget) Of(rows int) int {
	if !b.set {
		return -1
	}
	return b.l.Allowed(rows)
}

// String writes the budget as ParseBudget reads it, or "none" for the zero Budget.
func (b Budget) String() string {
	if !b.set {
		return "none"
	}
	return b.l.String()
}

// BudgetError reports a send that ended with more rows of a kind than its budget allows:
// rejected or refused rows over SendOptions.MaxRejects, or rows of unknown outcome over
// SendOptions.MaxUnknown. The run itself went through: Send returns its whole result.
type BudgetError struct {
	// Unknown reports the budget of rows of unknown outcome; else it is the budget of
	// rows rejected or refused.
	Unknown bool
	// Rows is how many rows of the kind the run ended with (this run's and those an
	// earlier run left in the journal).
	Rows int
	// Allowed is how many the budget allows for this source.
	Allowed int
	// Budget is the budget as given.
	Budget Budget
}

// Error implements the error interface.
func (e *BudgetError) Error() string {
	what, option := "rejected or refused", "MaxRejects"
	if e.Unknown {
		what, option = "of unknown outcome", "MaxUnknown"
	}
	s := fmt.Sprintf("mailmerge: %d rows %s, over the %s budget of %s", e.Rows, what, option, e.Budget)
	if e.Budget.String() != fmt.Sprint(e.Allowed) {
		s += fmt.Sprintf(", which allows %d", e.Allowed)
	}
	return s
}

// checkBudgets returns the *BudgetError of each budget res exceeds, joined.
func checkBudgets(res *Result, opts SendOptions) error {
	var errs []error
	for _, c := range []struct {
		unknown bool
		rows    int
		b       Budget
	}{{false, res.Rejects(), opts.MaxRejects}, {true, res.Unknowns(), opts.MaxUnknown}} {
		if allowed := c.b.Of(res.Rows); allowed >= 0 && c.rows > allowed {
			errs = append(errs, &BudgetError{Unknown: c.unknown, Rows: c.rows, Allowed: allowed, Budget: c.b})
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

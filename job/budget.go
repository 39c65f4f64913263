package job

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Budget bounds how many rows of a kind a run may end with: a number of rows, or a share
// of a total rounded up. The zero Budget allows none.
type Budget struct {
	n       float64 // a count, or a share from 0 to 100 when percent
	percent bool
}

// Rows is a budget of n rows (none for a negative n).
func Rows(n int) Budget { return Budget{n: float64(max(n, 0))} }

// Percent is a budget of p % of the total, rounded up (p is clamped to 0–100; a NaN is
// 0). Percent(100) allows every row.
func Percent(p float64) Budget {
	if math.IsNaN(p) {
		p = 0
	}
	return Budget{n: math.Max(0, math.Min(p, 100)), percent: true}
}

// Unlimited is a budget that allows every row: Percent(100).
func Unlimited() Budget { return Percent(100) }

// The defaults that the jobs' Default…Options functions and the CLI's flags use. They are
// values to copy, never to assign.
var (
	// DefaultMaxUnsubscribe bounds the members a sync may unsubscribe: 10 % of the list.
	DefaultMaxUnsubscribe = Percent(10)
	// DefaultMaxDrift bounds how far a list may have drifted from a sync's state before
	// the run reads the list in full: 5 % of the state's members.
	DefaultMaxDrift = Percent(5)
)

// ErrBudgetSyntax reports text that ParseBudget cannot read.
var ErrBudgetSyntax = errors.New("want N or N% (0% to 100%)")

// ParseBudget reads a budget as a user writes it: "N" (a whole number of rows, from 0) or
// "N%" (a share from 0 to 100, fractions allowed), with spaces around either. Its error
// matches ErrBudgetSyntax and quotes the text.
func ParseBudget(s string) (Budget, error) {
	text := strings.TrimSpace(s)
	if pct, isPct := strings.CutSuffix(text, "%"); isPct {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			return Budget{}, fmt.Errorf("budget %q: %w", s, ErrBudgetSyntax)
		}
		return Percent(v), nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return Budget{}, fmt.Errorf("budget %q: %w", s, ErrBudgetSyntax)
	}
	return Rows(n), nil
}

// Allowed returns how many rows of total the budget allows, or -1 when it allows any
// number (100 %).
func (b Budget) Allowed(total int) int {
	switch {
	case !b.percent:
		return int(b.n)
	case b.n >= 100:
		return -1
	}
	// Exactly, in decimal: 1.1 % of 3,000 is 33, where float64 makes it 33.000000000000004,
	// which rounds up to 34.
	pct, _ := new(big.Rat).SetString(strconv.FormatFloat(b.n, 'f', -1, 64)) // a finite number always reads
	part := pct.Mul(pct, big.NewRat(int64(max(total, 0)), 100))
	q, r := new(big.Int).QuoRem(part.Num(), part.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return int(q.Int64())
}

// Allows reports whether count rows of total are within the budget.
func (b Budget) Allows(count, total int) bool {
	allowed := b.Allowed(total)
	return allowed < 0 || count <= allowed
}

// IsPercent reports whether the budget is a share of the total rather than a count.
func (b Budget) IsPercent() bool { return b.percent }

// String writes the budget as ParseBudget reads it: "0" for the zero Budget.
func (b Budget) String() string {
	s := strconv.FormatFloat(b.n, 'f', -1, 64)
	if b.percent {
		s += "%"
	}
	return s
}

// MarshalText writes the budget as String does, so that a budget reads back from JSON
// or a flag as it was written.
func (b Budget) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads a budget as ParseBudget does.
func (b *Budget) UnmarshalText(text []byte) error {
	v, err := ParseBudget(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Set reads a budget as ParseBudget does: a *Budget is a flag.Value.
func (b *Budget) Set(s string) error { return b.UnmarshalText([]byte(s)) }

// BudgetError reports a run that ended with more rows of a kind than its budget allows.
// The run itself went through: the job returns its whole result beside the error.
type BudgetError struct {
	// Budget names the budget as the job's options do, e.g. "MaxRejects".
	Budget string
	// What names the rows it counts, e.g. "rejected or refused".
	What string
	// Rows is how many rows of the kind the run ended with.
	Rows int
	// Total is how many rows the share was taken of.
	Total int
	// Allowed is how many the budget allows of Total.
	Allowed int
	// Limit is the budget as given.
	Limit Budget
}

// Error says how many rows of the kind the run ended with and what the budget allows.
func (e *BudgetError) Error() string {
	rows := "rows"
	if e.Rows == 1 {
		rows = "row"
	}
	s := fmt.Sprintf("%d %s %s, over the %s budget of %s", e.Rows, rows, e.What, e.Budget, e.Limit)
	if e.Limit.IsPercent() {
		s += fmt.Sprintf(" of %d, which allows %d", e.Total, e.Allowed)
	}
	return s
}

// Judge returns a *BudgetError when rows of total exceed limit, else nil. name and what
// fill the error's Budget and What.
func Judge(name, what string, limit Budget, rows, total int) error {
	if limit.Allows(rows, total) {
		return nil
	}
	return &BudgetError{Budget: name, What: what, Rows: rows, Total: total, Allowed: limit.Allowed(total), Limit: limit}
}

// Package share reads and applies the limits a user writes as "N" or "N%": a count, or a
// share of a total rounded up. listsync's unsubscription limit and mailmerge's budgets are
// both such limits; each package keeps its own type and default over this one rule.
package share

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Limit is a count, or (Percent) a share from 0 to 100 of a total.
type Limit struct {
	N       float64
	Percent bool
}

// Count is a limit of n (0 for a negative n).
func Count(n int) Limit { return Limit{N: float64(max(n, 0))} }

// Of is a limit of p % (clamped to 0–100; a NaN is 0).
func Of(p float64) Limit {
	if math.IsNaN(p) {
		p = 0
	}
	return Limit{N: math.Max(0, math.Min(p, 100)), Percent: true}
}

// ErrSyntax reports text that is neither "N" nor "N%" with N from 0 to 100.
var ErrSyntax = errors.New("want N or N% (0% to 100%)")

// Parse reads "N" (a whole number from 0) or "N%" (0 to 100, fractions allowed), with
// spaces around either.
func Parse(s string) (Limit, error) {
	text := strings.TrimSpace(s)
	if pct, isPct := strings.CutSuffix(text, "%"); isPct {
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			return Limit{}, ErrSyntax
		}
		return Of(v), nil
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return Limit{}, ErrSyntax
	}
	return Count(n), nil
}

// Allowed returns how many of total the limit allows, or -1 for 100 %: any number.
func (l Limit) Allowed(total int) int {
	switch {
	case !l.Percent:
		return int(l.N)
	case l.N >= 100:
		return -1
	}
	// Exactly, in decimal: 1.1 % of 3,000 is 33, where float64 makes it 33.000000000000004,
	// which rounds up to 34.
	pct, _ := new(big.Rat).SetString(strconv.FormatFloat(l.N, 'f', -1, 64)) // a finite number always reads
	part := pct.Mul(pct, big.NewRat(int64(total), 100))
	q, r := new(big.Int).QuoRem(part.Num(), part.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return int(q.Int64())
}

// String writes the limit as Parse reads it.
func (l Limit) String() string {
	s := strconv.FormatFloat(l.N, 'f', -1, 64)
	if l.Percent {
		s += "%"
	}
	return s
}

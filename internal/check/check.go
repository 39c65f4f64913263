// Package check holds the input rules that the root and legacy packages share, so that the
// same value is judged alike whichever package sends it.
package check

import "math"

// IDProblem is what is wrong with an ID parameter.
type IDProblem int

// The verdicts of ID.
const (
	IDValid      IDProblem = iota // 1..2147483647
	IDMissing                     // 0: not given
	IDOutOfRange                  // negative, or over the int32 range the specification types IDs with
)

// ID judges an ID parameter: the specification types every ID as int32, and no record has
// an ID under 1.
func ID(id int) IDProblem {
	switch {
	case id == 0:
		return IDMissing
	case id < 0 || id > math.MaxInt32:
		return IDOutOfRange
	}
	return IDValid
}

package check

import (
	"math"
	"testing"
)

func TestID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   int
		want IDProblem
	}{
		{1, IDValid},
		{math.MaxInt32, IDValid},
		{0, IDMissing},
		{-1, IDOutOfRange},
		{math.MaxInt32 + 1, IDOutOfRange},
		{1 << 40, IDOutOfRange},
		{math.MinInt, IDOutOfRange},
	}
	for _, tt := range tests {
		if got := ID(tt.id); got != tt.want {
			t.Errorf("ID(%d) = %d, want %d", tt.id, got, tt.want)
		}
	}
}

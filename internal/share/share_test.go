package share

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAndAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		total   int
		allowed int
		text    string
	}{
		{"0", 100, 0, "0"},
		{" 7 ", 3, 7, "7"},
		{"10%", 95, 10, "10%"}, // 9.5 rounds up
		{"1.1%", 3000, 33, "1.1%"},
		{"0%", 1000, 0, "0%"},
		{"100%", 5, -1, "100%"},
		{"50 %", 0, 0, "50%"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			l, err := Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.allowed, l.Allowed(tt.total))
			assert.Equal(t, tt.text, l.String())
			back, err := Parse(l.String())
			require.NoError(t, err)
			assert.Equal(t, l, back)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "-1", "101%", "-1%", "NaN%", "five", "5%%", "1e3", "2.5"} {
		_, err := Parse(in)
		assert.ErrorIs(t, err, ErrSyntax, in)
	}
}

func TestConstructorsClamp(t *testing.T) {
	t.Parallel()
	assert.Equal(t, Limit{N: 0}, Count(-3))
	assert.Equal(t, Limit{N: 100, Percent: true}, Of(250))
	assert.Equal(t, Limit{N: 0, Percent: true}, Of(-1))
	assert.Equal(t, Limit{N: 0, Percent: true}, Of(math.NaN()))
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "10%", "1.1%", "100%", " 3 ", "x", "1e2%"} {
		f.Add(s, 1000)
	}
	f.Fuzz(func(t *testing.T, s string, total int) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		total = max(total%10_000_000, 0)
		back, err := Parse(l.String())
		require.NoError(t, err)
		require.Equal(t, l, back)
		a := l.Allowed(total)
		if l.Percent && l.N < 100 {
			require.GreaterOrEqual(t, a, 0)
			require.LessOrEqual(t, a, total)
		}
	})
}

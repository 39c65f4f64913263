package job_test

import (
	"context"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
)

func TestParseBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    job.Budget
		allowed int // of 3000
		err     bool
	}{
		{in: "0", want: job.Rows(0), allowed: 0},
		{in: " 12 ", want: job.Rows(12), allowed: 12},
		{in: "1.1%", want: job.Percent(1.1), allowed: 33},
		{in: "10 %", want: job.Percent(10), allowed: 300},
		{in: "0%", want: job.Percent(0), allowed: 0},
		{in: "100%", want: job.Unlimited(), allowed: -1},
		{in: "-1", err: true},
		{in: "101%", err: true},
		{in: "NaN%", err: true},
		{in: "1.5", err: true},
		{in: "", err: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := job.ParseBudget(tc.in)
			if tc.err {
				require.ErrorIs(t, err, job.ErrBudgetSyntax)
				assert.Contains(t, err.Error(), "budget \""+tc.in+"\"")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.allowed, got.Allowed(3000))
			back, err := job.ParseBudget(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "String reads back")
		})
	}
}

func TestBudgetZeroAllowsNone(t *testing.T) {
	t.Parallel()
	var b job.Budget
	assert.Equal(t, 0, b.Allowed(1000))
	assert.True(t, b.Allows(0, 1000))
	assert.False(t, b.Allows(1, 1000))
	assert.Equal(t, "0", b.String())
	assert.Equal(t, job.Rows(0), b)
}

func TestBudgetIsAFlagAndText(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := job.DefaultMaxUnsubscribe
	fs.Var(&b, "max", "")
	require.NoError(t, fs.Parse([]string{"-max", "3"}))
	assert.Equal(t, job.Rows(3), b)
	require.Error(t, fs.Parse([]string{"-max", "x"}))
	text, err := job.Percent(2.5).MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "2.5%", string(text))
	assert.Equal(t, "10%", job.DefaultMaxUnsubscribe.String())
	assert.Equal(t, "5%", job.DefaultMaxDrift.String())
}

func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		limit       job.Budget
		rows, total int
		msg         string
	}{
		{name: "within", limit: job.Rows(2), rows: 2, total: 10},
		{name: "over a count", limit: job.Rows(2), rows: 3, total: 10, msg: "3 rows rejected, over the MaxRejects budget of 2"},
		{name: "over a share", limit: job.Percent(10), rows: 2, total: 10, msg: "2 rows rejected, over the MaxRejects budget of 10% of 10, which allows 1"},
		{name: "zero allows none", rows: 1, total: 10, msg: "1 row rejected, over the MaxRejects budget of 0"},
		{name: "unlimited", limit: job.Unlimited(), rows: 10, total: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := job.Judge("MaxRejects", "rejected", tc.limit, tc.rows, tc.total)
			if tc.msg == "" {
				require.NoError(t, err)
				return
			}
			var be *job.BudgetError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tc.rows, be.Rows)
			assert.Equal(t, tc.msg, err.Error())
		})
	}
}

func TestFates(t *testing.T) {
	t.Parallel()
	var zero job.Fate
	assert.False(t, zero.Valid())
	assert.Equal(t, "invalid fate", zero.String())
	names := map[string]bool{}
	for _, f := range job.Fates() {
		require.True(t, f.Valid())
		assert.NotContains(t, names, f.String())
		names[f.String()] = true
	}
	assert.Len(t, names, 9)
	assert.True(t, job.Suppressed.Settled())
	assert.False(t, job.Unknown.Settled())
	assert.False(t, zero.Settled())
}

func TestTallyAddsUp(t *testing.T) {
	t.Parallel()
	var a, b job.Tally
	for i, f := range job.Fates() {
		a.Add(f, i+1)
		b.Add(f, 1)
	}
	assert.Equal(t, 45, a.Total())
	assert.Equal(t, 9, b.Total())
	sum := a.Plus(b)
	assert.Equal(t, 54, sum.Total())
	assert.Equal(t, 2, sum.Done)
	assert.Equal(t, 10, sum.NotSubscribed)
	assert.Equal(t, 0, sum.Of(job.Fate(0)))
	assert.Panics(t, func() { a.Add(job.Fate(0), 1) })
}

func TestStopInFlight(t *testing.T) {
	t.Parallel()
	type key struct{}
	t.Run("no grace ends with the context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
		inFlight, done := job.Stop{}.InFlight(ctx)
		defer done()
		assert.Equal(t, "v", inFlight.Value(key{}))
		cancel()
		<-inFlight.Done()
	})
	t.Run("grace outlives the context", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		inFlight, done := job.Stop{Grace: time.Hour}.InFlight(ctx)
		cancel()
		assert.NoError(t, inFlight.Err())
		done()
		<-inFlight.Done()
	})
	t.Run("grace over", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		inFlight, done := job.Stop{Grace: time.Millisecond}.InFlight(ctx)
		defer done()
		cancel()
		<-inFlight.Done()
		assert.True(t, errors.Is(context.Cause(inFlight), job.ErrGraceOver))
	})
	t.Run("work ends it at once", func(t *testing.T) {
		t.Parallel()
		work, stopWork := context.WithCancel(context.Background())
		inFlight, done := job.Stop{Grace: time.Hour, Work: work}.InFlight(context.Background())
		defer done()
		stopWork()
		<-inFlight.Done()
		assert.ErrorIs(t, context.Cause(inFlight), context.Canceled)
	})
}

package testkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

func TestEndingContextEndsWhenTold(t *testing.T) {
	t.Parallel()
	for _, want := range []error{context.DeadlineExceeded, context.Canceled} {
		t.Run(want.Error(), func(t *testing.T) {
			t.Parallel()
			ctx := testkit.NewEndingContext(want)
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			require.NoError(t, ctx.Err())
			select {
			case <-ctx.Done():
				t.Fatal("ended before End")
			default:
			}
			_, ok := ctx.Deadline()
			assert.False(t, ok, "no deadline for connection deadlines to see")

			ctx.End()
			ctx.End() // a second End does nothing
			<-ctx.Done()
			assert.ErrorIs(t, ctx.Err(), want)
			assert.ErrorIs(t, context.Cause(ctx), want)
			<-child.Done()
			assert.ErrorIs(t, child.Err(), want, "a derived context ends with it")
		})
	}
}

func TestEventually(t *testing.T) {
	t.Parallel()
	n := 0
	assert.True(t, testkit.Eventually(func() bool { n++; return n == 3 }, time.Minute), "holds on the third poll")
	assert.Equal(t, 3, n)
	assert.False(t, testkit.Eventually(func() bool { return false }, 0), "never holds: false at the deadline")
}

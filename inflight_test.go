package sendloop_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestCallsInFlightFallOnPushBackAndGrowBack: ImportAll's workers and BrowseIter's pages
// read ahead, 8 at a time, are answered 429 or 503 in their first round; the retries go out
// at most 4 at a time (half the 8 in flight), and the window grows back to 8 as answers
// come. BrowseIter asks for its first page alone: the round is the one after it.
func TestCallsInFlightFallOnPushBackAndGrowBack(t *testing.T) {
	t.Parallel()
	const n = 8
	tests := []struct {
		name    string
		command string
		status  int
		members int // in the list before the run
		alone   int // the calls sent alone before the first round
		run     func(ctx context.Context, c *sendloop.Client, id int, round func()) error
	}{
		{"ImportAll", "subscriber.import", 429, 0, 0, func(ctx context.Context, c *sendloop.Client, id int, round func()) error {
			round()
			rows := func(yield func(sendloop.ImportSubscriber) bool) {
				for i := range 800 {
					if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("i%04d@example.com", i)}) {
						return
					}
				}
			}
			report, err := c.Subscribers.ImportAll(ctx, id, rows, sendloop.ImportOptions{BatchSize: 10, Concurrency: n})
			if err == nil && report.Imported != 800 {
				err = fmt.Errorf("imported %d of 800", report.Imported)
			}
			return err
		}},
		{"BrowseIter", "subscriber.browse", 503, 8000, 1, func(ctx context.Context, c *sendloop.Client, id int, round func()) error {
			read := 0
			for _, err := range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{Concurrency: n}) {
				if err != nil {
					return err
				}
				read++
				if read == 1 {
					round() // the first page is read; the round after it is not asked for yet
				}
			}
			if read != 8000 {
				return fmt.Errorf("read %d of 8000", read)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv, pt, id := browseFixture(t, tt.members)
			pt.mu.Lock()
			pt.starts = nil
			pt.mu.Unlock()
			// Long enough for the n calls of a round to be sent before the first answer
			// comes, even on a busy machine: the assertions count calls in flight.
			srv.SetLatency(100*time.Millisecond, 0)
			require.NoError(t, tt.run(context.Background(), c, id, func() {
				srv.InjectFault(tt.command, sendlooptest.Fault{Status: tt.status, RetryAfter: "0", Times: n})
			}))

			starts, _ := pt.startsAndPeak()
			starts = starts[tt.alone:]
			require.Greater(t, len(starts), 70)
			assert.Equal(t, int64(n), slices.Max(starts[:n]), "the first round: %v", starts[:n])
			assert.LessOrEqual(t, slices.Max(starts[n:2*n]), int64(n/2), "after the push-back: %v", starts[n:2*n])
			assert.Equal(t, int64(n), slices.Max(starts[len(starts)-20:]), "grown back: %v", starts)
		})
	}
}

// TestLegacyCallsShareTheWindow: Client.Legacy sends through the root client's window of
// calls in flight. A legacy call answered 503 leaves the window at two calls (half of the
// one in flight, then one more for its retry's answer), and the pages BrowseIter then reads
// 8 at a time go out at most 3 at once while the window grows back; with a window of its
// own the legacy client would leave the root's at 1,024, and the 8 pages would go at once.
func TestLegacyCallsShareTheWindow(t *testing.T) {
	t.Parallel()
	const n = 8
	c, srv, pt, id := browseFixture(t, 1600)
	srv.InjectFault(legacy.CommandMediaBrowse, sendlooptest.Fault{Status: 503, RetryAfter: "0"})
	_, err := c.Legacy().MediaBrowse(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, srv.Executions(legacy.CommandMediaBrowse), "answered 503, then served")
	pt.mu.Lock()
	pt.starts = nil
	pt.mu.Unlock()
	// Long enough for the calls the window allows to be sent before the first answer comes.
	srv.SetLatency(100*time.Millisecond, 0)
	got, errs := browseAll(c, id, sendloop.SubscriberBrowseParams{Concurrency: n})
	require.Empty(t, errs)
	require.Len(t, got, 1600)
	starts, _ := pt.startsAndPeak()
	require.Greater(t, len(starts), n)
	assert.LessOrEqual(t, slices.Max(starts[:n]), int64(3), "the window the legacy call left: %v", starts[:n])
}

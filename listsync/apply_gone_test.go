package listsync

import (
	"github.com/go-sendloop/sendloop/job"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// TestUnsubscribeOfAnAddressGoneSinceThePlan: an address the plan unsubscribes that left
// the list meanwhile is answered "not in the list" (sendloop.ErrNotInList): the list is as
// wanted, and the unsubscription counts as done, not as a failure.
func TestUnsubscribeOfAnAddressGoneSinceThePlan(t *testing.T) {
	t.Parallel()
	srv, c := demoList(t)
	ctx := testContext(t)
	pl := planRows(t, c, Rows([]Row{{Email: "ann@example.com"}, {Email: "bob@example.com"}}), Options{UnsubscribeMissing: true})
	require.Equal(t, 1, pl.Unsubscribes)
	_, err := c.Subscribers.Unsubscribe(ctx, 1, sendloop.SubscriberUnsubscribeParams{EmailAddress: "gone@example.com", UnsubscriptionIP: unsubscriptionIP})
	require.NoError(t, err, "gone before the plan is applied")

	res, err := pl.Apply(ctx, ApplyOptions{MaxUnsubscribe: job.Percent(100),
		OnRow: func(r RowResult) {
			if r.Fate != job.Done {
				t.Errorf("%s: %v %s", r.Address, r.Fate, r.Reason)
			}
		}})
	require.NoError(t, err)
	assert.Equal(t, job.Tally{Done: 1}, res.Unsubscribes)
	status, _ := srv.SubscriberStatus(1, "gone@example.com")
	assert.Equal(t, "Unsubscribed", status)
}

package legacy_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// v3Subscriber reads a subscriber through the v3 API.
func v3Subscriber(t *testing.T, root *sendloop.Client, listID int, email string) map[string]any {
	t.Helper()
	var out struct{ Subscriber map[string]any }
	require.NoError(t, root.Call(context.Background(), "subscriber.get",
		map[string]string{"ListID": strconv.Itoa(listID), "EmailAddress": email}, &out))
	return out.Subscriber
}

// TestStateSharedWithV3 checks that both APIs act on the same subscribers.
func TestStateSharedWithV3(t *testing.T) {
	t.Parallel()
	for _, form := range allForms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := sendlooptest.NewServer(t)
			root, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
			require.NoError(t, err)
			c := newClient(t, srv, form)
			double := createList(t, srv, "Double")
			single := createList(t, srv, "Single")

			// Legacy → v3: the pending subscription is the v3 'Confirmation Pending'.
			res, err := c.SubscriberAdd(ctx, double, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "192.0.2.1"})
			require.NoError(t, err)
			require.Equal(t, legacy.StatusWaitingForOptIn, res.Status)
			sub := v3Subscriber(t, root, double, "ann@example.com")
			assert.Equal(t, "Confirmation Pending", sub["SubscriptionStatus"])
			assert.Equal(t, strconv.Itoa(res.SubscriberID), sub["SubscriberID"])
			assert.Equal(t, "192.0.2.1", sub["SubscriptionIP"])
			status, _ := srv.SubscriberStatus(double, "ann@example.com")
			assert.Equal(t, "Confirmation Pending", status)
			require.Len(t, srv.Outbox(), 1, "the opt-in confirmation email was sent")

			// Confirmation, then legacy sees 'Subscribed'.
			require.NoError(t, srv.Confirm(double, "ann@example.com"))
			st, err := c.Call(ctx, "Subscriber.Get", map[string]string{"ListID": strconv.Itoa(double), "EmailAddress": "ann@example.com"})
			require.NoError(t, err)
			assert.Equal(t, "Subscribed", st.Text("SubscriptionStatus"))

			// v3 → legacy: an address subscribed through v3 exists for Subscriber.Add and
			// can be unsubscribed through legacy, which v3 then sees.
			require.NoError(t, root.Call(ctx, "subscriber.subscribe", map[string]string{"ListID": strconv.Itoa(single),
				"EmailAddress": "bob@example.com", "SubscriptionIP": "192.0.2.2"}, nil))
			_, err = c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "bob@example.com", SubscriptionIP: "192.0.2.3"})
			assert.ErrorIs(t, err, legacy.ErrEmailExists)
			_, err = c.SubscriberUnsubscribe(ctx, single, legacy.SubscriberUnsubscribeParams{EmailAddress: "bob@example.com", UnsubscriptionIP: "192.0.2.4"})
			require.NoError(t, err)
			sub = v3Subscriber(t, root, single, "bob@example.com")
			assert.Equal(t, "Unsubscribed", sub["SubscriptionStatus"])
			assert.Equal(t, "192.0.2.4", sub["UnsubscriptionIP"])

			// The unsubscribed address may come back through legacy: same record.
			again, err := c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "bob@example.com", SubscriptionIP: "192.0.2.5"})
			require.NoError(t, err)
			assert.Equal(t, legacy.StatusSubscribed, again.Status)
			assert.Equal(t, sub["SubscriberID"], strconv.Itoa(again.SubscriberID))
			assert.Equal(t, 1, srv.SubscriberCount(single))
		})
	}
}

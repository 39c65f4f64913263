package sendloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSubscriberSearch(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	a := newList(t, c, sendloop.OptInSingle)
	b := newList(t, c, sendloop.OptInDouble)
	field, _ := srv.DefineCustomField(a, sendlooptest.CustomField{Name: "Name"})
	_, err := c.Subscribers.Subscribe(ctx, a, sendloop.SubscriberSubscribeParams{EmailAddress: "eve@acme.example", SubscriptionIP: "192.0.2.1", Fields: sendloop.CustomFields{field: "Eve"}})
	require.NoError(t, err)
	subscribe(t, c, a, "zed@other.example")
	subscribe(t, c, b, "eve@acme.example")

	results, err := c.Subscribers.Search(ctx, "ACME")
	require.NoError(t, err)
	require.Len(t, results, 2)
	assert.Equal(t, a, results[0].ListID)
	assert.Equal(t, "List", results[0].ListName)
	assert.Equal(t, []sendloop.SearchHit{{SubscriberID: 1, EmailAddress: "eve@acme.example", SubscriptionStatus: sendloop.StatusSubscribed,
		BounceType: sendloop.BounceNone, CustomFields: sendloop.CustomFields{field: "Eve"}}}, results[0].Subscribers)
	assert.Equal(t, sendloop.StatusConfirmationPending, results[1].Subscribers[0].SubscriptionStatus)

	results, err = c.Subscribers.Search(ctx, "nobody")
	require.NoError(t, err)
	assert.Empty(t, results)
}

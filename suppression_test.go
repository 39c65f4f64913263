package sendloop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

func TestSuppression(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)

	global, err := c.Suppression.Add(ctx, sendloop.GlobalSuppression, sendloop.SuppressionAddParams{EmailAddress: "spam@example.com"})
	require.NoError(t, err)
	assert.Equal(t, keyParam(srv)+"&EmailAddress=spam%40example.com&ListID=0", string(srv.LastRequest().Body))
	local, err := c.Suppression.Add(ctx, id, sendloop.SuppressionAddParams{EmailAddress: "spam@example.com"})
	require.NoError(t, err)
	assert.NotEqual(t, global, local)
	again, err := c.Suppression.Add(ctx, id, sendloop.SuppressionAddParams{EmailAddress: "spam@example.com"})
	require.NoError(t, err)
	assert.Equal(t, local, again, "adding twice changes nothing")

	entries, err := c.Suppression.List(ctx, sendloop.GlobalSuppression)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.SuppressionEntry{{SuppressionID: global, Type: "Manual", EmailAddress: "spam@example.com"}}, entries)
	assert.Equal(t, keyParam(srv)+"&ListID=0", string(srv.LastRequest().Body))

	entries, err = c.Suppression.Get(ctx, "spam@example.com")
	require.NoError(t, err)
	assert.Equal(t, []sendloop.SuppressionEntry{
		{SuppressionID: global, Type: "Manual", ListID: 0},
		{SuppressionID: local, Type: "Manual", ListID: id},
	}, entries)

	entries, err = c.Suppression.Get(ctx, "clean@example.com")
	require.NoError(t, err)
	assert.Empty(t, entries)

	_, err = c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: "spam@example.com", SubscriptionIP: "192.0.2.1"})
	require.ErrorIs(t, err, sendloop.ErrInvalidEmail, "a suppressed address is refused")
}

func TestSuppressionErrors(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	_, err := c.Suppression.Add(ctx, 9, sendloop.SuppressionAddParams{EmailAddress: "a@example.com"})
	require.ErrorIs(t, err, sendloop.ErrListNotFound)
	_, err = c.Suppression.List(ctx, 9)
	require.ErrorIs(t, err, sendloop.ErrListNotFound)

	before := len(srv.Requests())
	_, err = c.Suppression.Add(ctx, -1, sendloop.SuppressionAddParams{EmailAddress: "a@example.com"})
	require.ErrorIs(t, err, sendloop.ErrListNotFound)
	_, err = c.Suppression.Add(ctx, 0, sendloop.SuppressionAddParams{EmailAddress: "bad"})
	require.ErrorIs(t, err, sendloop.ErrInvalidEmailFormat)
	_, err = c.Suppression.Get(ctx, "")
	require.ErrorIs(t, err, sendloop.ErrMissingParameters)
	assert.Len(t, srv.Requests(), before, "nothing sent")
}

func TestSuppressionAddAnsweredWithoutAnID(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"Success":true}`, `{"Success":true,"NewSuppressionID":""}`, `{"Success":true,"NewSuppressionID":null}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL))
		require.NoError(t, err)
		id, err := c.Suppression.Add(context.Background(), 0, sendloop.SuppressionAddParams{EmailAddress: "ann@example.com"})
		srv.Close()
		require.NoError(t, err, body)
		assert.Zero(t, id, body)
	}
}

package sendloop_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestCampaignOpensAndClicksFromTheFake(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 3)
	id := w.sentCampaign(t)
	require.NoError(t, w.srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: w.emails[0], After: time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: w.emails[2], After: 2 * time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventClick, Email: w.emails[2], After: 3 * time.Hour, Link: "https://example.com/a"},
	))
	ctx := context.Background()
	at := func(d time.Duration) sendloop.DateTime { return sendloop.DateTime{Time: campaignClock.Add(d)} }

	opens, err := w.c.CampaignData.EmailOpens(ctx, id, sendloop.CampaignDataParams{})
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignEmailOpen{
		{SubscriberID: 1, ListID: w.listID, OpenDate: at(time.Hour)},
		{SubscriberID: 3, ListID: w.listID, OpenDate: at(2 * time.Hour)},
	}, opens)
	clicks, err := w.c.CampaignData.LinkClicks(ctx, id, sendloop.CampaignDataParams{})
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignLinkClick{{SubscriberID: 3, ListID: w.listID, ClickDate: at(3 * time.Hour), Link: "https://example.com/a"}}, clicks)

	assert.Equal(t, 2, countRecords(t, w.c.CampaignData.EmailOpensIter(ctx, id, sendloop.CampaignDataParams{Limit: 1})))
	assert.Equal(t, 1, countRecords(t, w.c.CampaignData.LinkClicksIter(ctx, id, sendloop.CampaignDataParams{})))

	_, err = w.c.CampaignData.EmailOpens(ctx, id, sendloop.CampaignDataParams{Limit: sendloop.MaxDataLimit + 1})
	var ve *sendloop.ValidationError
	require.ErrorAs(t, err, &ve, "a Limit over 50 is refused before sending")
}

// TestCampaignOpensAndClicksTolerateUnpublishedKeys reads the records under the names the
// service may use, keeping the others.
func TestCampaignOpensAndClicksTolerateUnpublishedKeys(t *testing.T) {
	t.Parallel()
	c := cannedClient(t, 200, `{"Success":true,"Data":[{"SubscriberID":4,"ListID":"2","Date":"2026-03-02 10:00:00",`+
		`"URL":"https://example.com/b","Browser":"Firefox","Geo":{"Country":"GB"}}]}`)
	ctx := context.Background()
	clicks, err := c.CampaignData.LinkClicks(ctx, 1, sendloop.CampaignDataParams{})
	require.NoError(t, err)
	require.Len(t, clicks, 1)
	assert.Equal(t, 4, clicks[0].SubscriberID)
	assert.Equal(t, 2, clicks[0].ListID)
	assert.Equal(t, "2026-03-02 10:00:00", clicks[0].ClickDate.String())
	assert.Equal(t, "https://example.com/b", clicks[0].Link)
	assert.Equal(t, map[string]string{"Browser": "Firefox", "Geo": `{"Country":"GB"}`}, clicks[0].Extra)

	opens, err := c.CampaignData.EmailOpens(ctx, 1, sendloop.CampaignDataParams{})
	require.NoError(t, err)
	require.Len(t, opens, 1)
	assert.Equal(t, "2026-03-02 10:00:00", opens[0].OpenDate.String())
	assert.Equal(t, "https://example.com/b", opens[0].Extra["URL"])
}

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

// exportWorld: list 1 (news0…news2) and list 2 (club0, club1) receive campaign 1; news0
// unsubscribes through it, news1 hard-bounces, club0 soft-bounces, club1 complains; news2
// unsubscribes through the API, and blocked@example.com is suppressed by hand.
func exportWorld(t *testing.T) (*campaignWorld, int, []string) {
	t.Helper()
	w := newCampaignWorld(t, 3)
	club, clubEmails := w.addList(t, "club", 2)
	ctx := context.Background()
	id, err := w.c.Campaigns.Create(ctx, validCampaign(w.listID, club))
	require.NoError(t, err)
	w.deliver(t, id)
	require.NoError(t, w.srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventUnsubscription, Email: w.emails[0], After: oneDay, IP: "203.0.113.9"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventHardBounce, Email: w.emails[1], After: time.Minute},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventSoftBounce, Email: clubEmails[0], After: 2 * time.Minute},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventSpamComplaint, Email: clubEmails[1], After: 3 * oneDay},
	))
	require.NoError(t, w.c.Call(ctx, "suppression.list.add", map[string]string{"ListID": "1", "EmailAddress": "blocked@example.com"}, nil))
	require.NoError(t, w.c.Call(ctx, "subscriber.unsubscribe", map[string]string{"EmailAddress": w.emails[2]}, nil))
	return w, id, clubEmails
}

func TestExportUnsubscriptions(t *testing.T) {
	t.Parallel()
	w, id, _ := exportWorld(t)
	ctx := context.Background()
	all, err := w.c.Exports.Unsubscriptions(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, keyParam(w.srv), string(w.srv.LastRequest().Body), "no ListID: every list")
	assert.Equal(t, []sendloop.Unsubscription{
		{CampaignID: id, ListID: 1, SubscriberID: 1, EmailAddress: w.emails[0], UnsubscriptionDate: sendloop.NewDate(campaignClock.Add(oneDay)),
			UnsubscriptionIP: "203.0.113.9"},
		// The API unsubscription comes at the fake's now, after the activity.
		{CampaignID: 0, ListID: 1, SubscriberID: 3, EmailAddress: w.emails[2], UnsubscriptionDate: sendloop.NewDate(campaignReadClock),
			UnsubscriptionIP: "127.0.0.1"},
	}, all)

	club, err := w.c.Exports.Unsubscriptions(ctx, 2)
	require.NoError(t, err)
	assert.Empty(t, club)
	assert.Equal(t, keyParam(w.srv)+"&ListID=2", string(w.srv.LastRequest().Body))

	_, err = w.c.Exports.Unsubscriptions(ctx, 99)
	require.ErrorIs(t, err, sendloop.ErrListNotFound)

	n := len(w.srv.Requests())
	_, err = w.c.Exports.Unsubscriptions(ctx, -1)
	require.ErrorIs(t, err, sendloop.ErrInvalidParameterValue)
	assert.Len(t, w.srv.Requests(), n, "nothing may be sent")
}

func TestExportSuppressionListAndComplaints(t *testing.T) {
	t.Parallel()
	w, _, club := exportWorld(t)
	ctx := context.Background()
	list, err := w.c.Exports.SuppressionList(ctx)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.SuppressedAddress{
		{EmailAddress: club[1], Type: "FBL Report"}, // the complaint suppressed the address globally
		{EmailAddress: "blocked@example.com", Type: "Manual"},
	}, list)
	req := w.srv.LastRequest()
	assert.Equal(t, "/api/v3/export.suppressionlist/json", req.Path)
	assert.Equal(t, keyParam(w.srv), string(req.Body))

	complaints, err := w.c.Exports.SpamComplaints(ctx)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.SpamComplaint{{EmailAddress: club[1], Date: sendloop.DateTime{Time: campaignClock.Add(3 * oneDay)}}}, complaints)
	assert.Equal(t, keyParam(w.srv), string(w.srv.LastRequest().Body))
}

func TestExportBounces(t *testing.T) {
	t.Parallel()
	w, id, club := exportWorld(t)
	ctx := context.Background()
	hard, err := w.c.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: sendloop.BounceHard})
	require.NoError(t, err)
	assert.Equal(t, keyParam(w.srv)+"&BounceType=hard", string(w.srv.LastRequest().Body), "sent in lower case")
	assert.Equal(t, []sendloop.Bounce{{CampaignID: id, ListID: 1, SubscriberID: 2, EmailAddress: w.emails[1], BounceType: sendloop.BounceHard,
		DetectionDate: sendloop.DateTime{Time: campaignClock.Add(time.Minute)}}}, hard)

	soft, err := w.c.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: "soft"})
	require.NoError(t, err)
	assert.Equal(t, keyParam(w.srv)+"&BounceType=soft", string(w.srv.LastRequest().Body))
	require.Len(t, soft, 1)
	assert.Equal(t, club[0], soft[0].EmailAddress)
	assert.Equal(t, sendloop.BounceSoft, soft[0].BounceType)
	assert.Equal(t, 2, soft[0].ListID)

	// The fake refuses other types with 119 too.
	err = w.c.Call(ctx, "export.bounces", map[string]string{"BounceType": "medium"}, nil)
	require.ErrorIs(t, err, sendloop.ErrInvalidBounceType)
}

func TestExportBouncesRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind sendloop.BounceType
		want error
	}{
		{sendloop.BounceNone, sendloop.ErrInvalidBounceType},
		{"medium", sendloop.ErrInvalidBounceType},
		{"", sendloop.ErrMissingParameters},
		{"  ", sendloop.ErrMissingParameters},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			_, err := c.Exports.Bounces(context.Background(), sendloop.ExportBouncesParams{BounceType: tt.kind})
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, []string{"BounceType"}, ve.Fields)
			assert.Empty(t, srv.Requests())
		})
	}
}

func TestExportItemsDecoding(t *testing.T) {
	t.Parallel()
	var a sendloop.SuppressedAddress
	require.NoError(t, a.UnmarshalJSON([]byte(`{"EmailAddress":"a@example.com","Type":"Bounce"}`)))
	assert.Equal(t, sendloop.SuppressedAddress{EmailAddress: "a@example.com", Type: "Bounce"}, a)
	a = sendloop.SuppressedAddress{}
	require.NoError(t, a.UnmarshalJSON([]byte(`["b@example.com","FBL Report","extra"]`)))
	assert.Equal(t, sendloop.SuppressedAddress{EmailAddress: "b@example.com", Type: "FBL Report"}, a)

	var c sendloop.SpamComplaint
	require.NoError(t, c.UnmarshalJSON([]byte(`{"EmailAddress":"c@example.com","ComplaintDate":"2026-01-02 03:04:05"}`)))
	assert.Equal(t, "2026-01-02 03:04:05", c.Date.String())
	assert.Error(t, c.UnmarshalJSON([]byte(`["c@example.com","soon"]`)))

	var b sendloop.Bounce
	require.NoError(t, b.UnmarshalJSON([]byte(`{"CampaignID":"3","BounceType":"hard","DetectionDate":"0000-00-00 00:00:00"}`)))
	assert.Equal(t, sendloop.Bounce{CampaignID: 3, BounceType: "hard"}, b, "kept as it came")

	var u sendloop.Unsubscription
	require.NoError(t, u.UnmarshalJSON([]byte(`{"CampaignID":"0","ListID":"2","UnsubscriptionIP":"0.0.0.0","UnsubscriptionDate":"2026-02-01"}`)))
	assert.Equal(t, 2, u.ListID)
	assert.Equal(t, "0.0.0.0", u.UnsubscriptionIP)
	assert.Equal(t, "2026-02-01", u.UnsubscriptionDate.String())
}

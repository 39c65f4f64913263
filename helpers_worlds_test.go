package sendloop_test

// The worlds the tests act on: a fake with data in it and a client for it.

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// campaignClock is the fakes' fixed clock in the campaign tests: a Monday, 10:00 UTC.
var campaignClock = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

const oneDay = 24 * time.Hour

// unsubscribeHTML is campaign content the fake accepts: it holds an unsubscription link.
const unsubscribeHTML = `<p>Hello</p><p><a href="%Link:Unsubscribe%">Unsubscribe</a></p>`

// campaignWorld is a fake with a fixed clock, a client for it and a list of subscribers.
type campaignWorld struct {
	c      *sendloop.Client
	srv    *sendlooptest.Server
	listID int
	emails []string
}

func newCampaignWorld(t testing.TB, subscribers int) *campaignWorld {
	t.Helper()
	srv := sendlooptest.NewServer(t, sendlooptest.WithClock(func() time.Time { return campaignClock }))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	w := &campaignWorld{c: c, srv: srv}
	w.listID, w.emails = w.addList(t, "news", subscribers)
	return w
}

// addList makes a single opt-in list holding n subscribers <name><i>@example.com.
func (w *campaignWorld) addList(t testing.TB, name string, n int) (int, []string) {
	t.Helper()
	ctx := context.Background()
	var out struct{ ListID int }
	require.NoError(t, w.c.Call(ctx, "list.create", map[string]string{"Name": name, "OptInMode": "Single"}, &out))
	var emails []string
	for i := 0; i < n; i++ {
		email := fmt.Sprintf("%s%d@example.com", name, i)
		require.NoError(t, w.c.Call(ctx, "subscriber.subscribe", map[string]string{
			"ListID": strconv.Itoa(out.ListID), "EmailAddress": email, "SubscriptionIP": "127.0.0.1"}, nil))
		emails = append(emails, email)
	}
	return out.ListID, emails
}

// validCampaign is a version 1 campaign the fake accepts, targeting listIDs.
func validCampaign(listIDs ...int) sendloop.CampaignCreateParams {
	return sendloop.CampaignCreateParams{
		CampaignName: "Spring sale", FromName: "Dana Demo", FromEmail: "dana@example.com",
		ReplyToName: "Dana Demo", ReplyToEmail: "reply@example.com", Subject: "Spring sale",
		TargetListIDs: listIDs, HTMLContent: unsubscribeHTML,
	}
}

// sentCampaign creates a campaign for the world's list and delivers it.
func (w *campaignWorld) sentCampaign(t testing.TB) int {
	t.Helper()
	id, err := w.c.Campaigns.Create(context.Background(), validCampaign(w.listID))
	require.NoError(t, err)
	require.Equal(t, w.emails, w.deliver(t, id))
	return id
}

// campaignReadClock is when the campaign tests read what the recipients of a campaign
// delivered at campaignClock did: 60 days later, so that activity over those days has
// happened (the fake refuses activity after its now).
var campaignReadClock = campaignClock.Add(60 * oneDay)

// deliver has the fake deliver a campaign at its clock, then moves the clock on to
// campaignReadClock (where it stays for later deliveries).
func (w *campaignWorld) deliver(t testing.TB, id int) []string {
	t.Helper()
	rcpts, err := w.srv.SimulateSend(id)
	require.NoError(t, err)
	w.srv.SetClock(func() time.Time { return campaignReadClock })
	return rcpts
}

// writeWorld is what a write of the outcome table acts on: a list holding a subscriber, a
// second address outside it, and a draft campaign.
type writeWorld struct {
	c        *sendloop.Client
	lc       *legacy.Client
	listID   int
	member   string // subscribed to listID
	outsider string // in no list
	campaign int
	field    int // a custom field of listID
}

func newWriteWorld(t *testing.T) (*writeWorld, *sendlooptest.Server) {
	t.Helper()
	c, srv := newTestClient(t)
	ctx := context.Background()
	lc, err := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL), legacy.WithRetry(legacy.RetryPolicy(fastRetry)))
	require.NoError(t, err)
	w := &writeWorld{c: c, lc: lc, member: "member@example.com", outsider: "new@example.com"}
	w.listID, err = c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	w.field, err = srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	_, err = c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: w.member, SubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)
	w.campaign, err = c.Campaigns.Create(ctx, campaignCreate(w.listID))
	require.NoError(t, err)
	return w, srv
}

func campaignCreate(listID int) sendloop.CampaignCreateParams {
	return sendloop.CampaignCreateParams{CampaignName: "C", FromName: "Ann", FromEmail: "ann@example.com",
		ReplyToName: "Ann", ReplyToEmail: "ann@example.com", Subject: "Hello",
		TargetListIDs: []int{listID}, HTMLContent: unsubscribeHTML}
}

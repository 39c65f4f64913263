package sendloop_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// typedCalls has one typed method call for every command of the command table.
var typedCalls = map[string]func(context.Context, *writeWorld) error{
	"account.info.get": func(ctx context.Context, w *writeWorld) error { _, err := w.c.Account.Get(ctx); return err },
	"account.info.update": func(ctx context.Context, w *writeWorld) error {
		return w.c.Account.Update(ctx, sendloop.AccountUpdateParams{City: "Izmir"})
	},
	"list.create": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		return err
	},
	"list.update": func(ctx context.Context, w *writeWorld) error {
		return w.c.Lists.Update(ctx, w.listID, sendloop.ListUpdateParams{Name: "N"})
	},
	"list.get": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Get(ctx, w.listID, sendloop.ListGetParams{CustomFields: true})
		return err
	},
	"list.getlist": func(ctx context.Context, w *writeWorld) error { _, err := w.c.Lists.List(ctx); return err },
	"list.settings.get": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Settings(ctx, w.listID)
		return err
	},
	"list.settings.update": func(ctx context.Context, w *writeWorld) error {
		return w.c.Lists.UpdateSettings(ctx, w.listID, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: sendloop.String("S")})
	},
	"subscriber.browse": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Browse(ctx, w.listID, sendloop.SubscriberBrowseParams{})
		return err
	},
	"subscriber.get": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Get(ctx, w.listID, sendloop.SubscriberGetParams{EmailAddress: w.member})
		return err
	},
	"subscriber.search": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Search(ctx, w.member)
		return err
	},
	"subscriber.import": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Import(ctx, w.listID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "i@example.com"}}})
		return err
	},
	"subscriber.subscribe": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		return err
	},
	"subscriber.unsubscribe": func(ctx context.Context, w *writeWorld) error {
		return w.c.Subscribers.UnsubscribeFromAllLists(ctx, w.member)
	},
	"subscriber.update": func(ctx context.Context, w *writeWorld) error {
		return w.c.Subscribers.Update(ctx, w.listID, sendloop.SubscriberUpdateParams{EmailAddress: w.member, Fields: sendloop.CustomFields{w.field: "x"}})
	},
	"suppression.list.getlist": func(ctx context.Context, w *writeWorld) error { _, err := w.c.Suppression.List(ctx, 0); return err },
	"suppression.list.get": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Suppression.Get(ctx, w.member)
		return err
	},
	"suppression.list.add": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Suppression.Add(ctx, 0, sendloop.SuppressionAddParams{EmailAddress: "s@example.com"})
		return err
	},
	"campaign.create": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Campaigns.Create(ctx, campaignCreate(w.listID))
		return err
	},
	"campaign.get": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Campaigns.Get(ctx, w.campaign)
		return err
	},
	"campaign.update": func(ctx context.Context, w *writeWorld) error {
		return w.c.Campaigns.Update(ctx, w.campaign, sendloop.CampaignUpdateParams{Subject: "S2"})
	},
	"campaign.delete": func(ctx context.Context, w *writeWorld) error { return w.c.Campaigns.Delete(ctx, w.campaign) },
	"report.list.overall": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.ListOverall(ctx, w.listID)
		return err
	},
	"report.campaign.overall": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOverall(ctx, w.campaign)
		return err
	},
	"report.campaign.webbrowserviews": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignBrowserViews(ctx, w.campaign)
		return err
	},
	"report.campaign.unsubscriptions": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignUnsubscriptions(ctx, w.campaign)
		return err
	},
	"report.campaign.opens": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOpens(ctx, w.campaign)
		return err
	},
	"report.campaign.forwards": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignForwards(ctx, w.campaign)
		return err
	},
	"report.campaign.openlocations": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOpenLocations(ctx, w.campaign)
		return err
	},
	"report.campaign.emailclients": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignEmailClients(ctx, w.campaign)
		return err
	},
	"report.campaign.bounces": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignBounces(ctx, w.campaign)
		return err
	},
	"report.campaign.spamcomplaints": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignSpamComplaints(ctx, w.campaign)
		return err
	},
	"data.campaign.unsubscriptions": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Unsubscriptions(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.openlocations": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.OpenLocations(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.forwards": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Forwards(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.browserviews": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.BrowserViews(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.emailopens": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.EmailOpens(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.linkclicks": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.LinkClicks(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"data.campaign.bounces": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Bounces(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	"export.unsubscriptions": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Exports.Unsubscriptions(ctx, w.listID)
		return err
	},
	"export.suppressionlist": func(ctx context.Context, w *writeWorld) error { _, err := w.c.Exports.SuppressionList(ctx); return err },
	"export.spamcomplaints":  func(ctx context.Context, w *writeWorld) error { _, err := w.c.Exports.SpamComplaints(ctx); return err },
	"export.bounces": func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: sendloop.BounceHard})
		return err
	},
	"system.systemdate.get": func(ctx context.Context, w *writeWorld) error { _, err := w.c.System.Date(ctx); return err },
	"system.timezones.get":  func(ctx context.Context, w *writeWorld) error { _, err := w.c.System.TimeZones(ctx); return err },
	"person.track": func(ctx context.Context, w *writeWorld) error {
		return w.c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: w.member})
	},
	"person.get": func(ctx context.Context, w *writeWorld) error {
		if err := w.c.People.Track(ctx, "u2", sendloop.PersonTrackParams{Email: w.member}); err != nil {
			return err
		}
		_, err := w.c.People.Get(ctx, "u2")
		return err
	},
	"person.delete": func(ctx context.Context, w *writeWorld) error { return w.c.People.Delete(ctx, "u1") },
}

// TestEveryCommandHasATypedMethodAFakeHandlerAndATest holds the command table, the typed
// methods and sendlooptest together: each command of the table is sent by a typed method
// (above), runs in the fake's handler, and no typed method sends a command outside the
// table (the client refuses to).
func TestEveryCommandHasATypedMethodAFakeHandlerAndATest(t *testing.T) {
	t.Parallel()
	table := sendloop.CommandTable()
	typed := slices.Sorted(maps.Keys(typedCalls))
	require.Equal(t, table, typed, "the command table and the typed methods name the same commands")
	for _, command := range table {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			w, srv := newWriteWorld(t)
			before := srv.Executions(command)

			err := typedCalls[command](context.Background(), w)

			require.NoError(t, err)
			assert.Greater(t, srv.Executions(command), before, "the fake's handler ran")
		})
	}
}

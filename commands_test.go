package sendloop_test

import (
	"context"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
)

// typedCalls has one typed method call for every v3 and person command of the registry
// (TestRegistryCoverage checks).
var typedCalls = map[string]func(context.Context, *writeWorld) error{
	commands.AccountInfoGet: func(ctx context.Context, w *writeWorld) error { _, err := w.c.Account.Get(ctx); return err },
	commands.AccountInfoUpdate: func(ctx context.Context, w *writeWorld) error {
		return w.c.Account.Update(ctx, sendloop.AccountUpdateParams{City: "Izmir"})
	},
	commands.ListCreate: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		return err
	},
	commands.ListUpdate: func(ctx context.Context, w *writeWorld) error {
		return w.c.Lists.Update(ctx, w.listID, sendloop.ListUpdateParams{Name: "N"})
	},
	commands.ListGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Get(ctx, w.listID, sendloop.ListGetParams{CustomFields: true})
		return err
	},
	commands.ListGetList: func(ctx context.Context, w *writeWorld) error { _, err := w.c.Lists.List(ctx); return err },
	commands.ListSettingsGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Lists.Settings(ctx, w.listID)
		return err
	},
	commands.ListSettingsUpdate: func(ctx context.Context, w *writeWorld) error {
		return w.c.Lists.UpdateSettings(ctx, w.listID, sendloop.ListSettingsUpdateParams{SubscriptionOptInSubject: sendloop.String("S")})
	},
	commands.SubscriberBrowse: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Browse(ctx, w.listID, sendloop.SubscriberBrowseParams{})
		return err
	},
	commands.SubscriberGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Get(ctx, w.listID, sendloop.SubscriberGetParams{EmailAddress: w.member})
		return err
	},
	commands.SubscriberSearch: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Search(ctx, w.member)
		return err
	},
	commands.SubscriberImport: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Import(ctx, w.listID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "i@example.com"}}})
		return err
	},
	commands.SubscriberSubscribe: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: w.outsider, SubscriptionIP: "192.0.2.1"})
		return err
	},
	commands.SubscriberUnsubscribe: func(ctx context.Context, w *writeWorld) error {
		return w.c.Subscribers.UnsubscribeFromAllLists(ctx, w.member)
	},
	commands.SubscriberUpdate: func(ctx context.Context, w *writeWorld) error {
		return w.c.Subscribers.Update(ctx, w.listID, sendloop.SubscriberUpdateParams{EmailAddress: w.member, Fields: sendloop.CustomFields{w.field: "x"}})
	},
	commands.SuppressionListGetList: func(ctx context.Context, w *writeWorld) error { _, err := w.c.Suppression.List(ctx, 0); return err },
	commands.SuppressionListGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Suppression.Get(ctx, w.member)
		return err
	},
	commands.SuppressionListAdd: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Suppression.Add(ctx, 0, sendloop.SuppressionAddParams{EmailAddress: "s@example.com"})
		return err
	},
	commands.CampaignCreate: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Campaigns.Create(ctx, campaignCreate(w.listID))
		return err
	},
	commands.CampaignGet: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Campaigns.Get(ctx, w.campaign)
		return err
	},
	commands.CampaignUpdate: func(ctx context.Context, w *writeWorld) error {
		return w.c.Campaigns.Update(ctx, w.campaign, sendloop.CampaignUpdateParams{Subject: "S2"})
	},
	commands.CampaignDelete: func(ctx context.Context, w *writeWorld) error { return w.c.Campaigns.Delete(ctx, w.campaign) },
	commands.ReportListOverall: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.ListOverall(ctx, w.listID)
		return err
	},
	commands.ReportCampaignOverall: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOverall(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignWebBrowserViews: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignBrowserViews(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignUnsubscriptions: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignUnsubscriptions(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignOpens: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOpens(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignForwards: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignForwards(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignOpenLocations: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignOpenLocations(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignEmailClients: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignEmailClients(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignBounces: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignBounces(ctx, w.campaign)
		return err
	},
	commands.ReportCampaignSpamComplaints: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Reports.CampaignSpamComplaints(ctx, w.campaign)
		return err
	},
	commands.DataCampaignUnsubscriptions: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Unsubscriptions(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignOpenLocations: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.OpenLocations(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignForwards: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Forwards(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignBrowserViews: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.BrowserViews(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignEmailOpens: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.EmailOpens(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignLinkClicks: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.LinkClicks(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.DataCampaignBounces: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.CampaignData.Bounces(ctx, w.campaign, sendloop.CampaignDataParams{})
		return err
	},
	commands.ExportUnsubscriptions: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Exports.Unsubscriptions(ctx, w.listID)
		return err
	},
	commands.ExportSuppressionList: func(ctx context.Context, w *writeWorld) error { _, err := w.c.Exports.SuppressionList(ctx); return err },
	commands.ExportSpamComplaints:  func(ctx context.Context, w *writeWorld) error { _, err := w.c.Exports.SpamComplaints(ctx); return err },
	commands.ExportBounces: func(ctx context.Context, w *writeWorld) error {
		_, err := w.c.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: sendloop.BounceHard})
		return err
	},
	commands.SystemSystemDateGet: func(ctx context.Context, w *writeWorld) error { _, err := w.c.System.Date(ctx); return err },
	commands.SystemTimeZonesGet:  func(ctx context.Context, w *writeWorld) error { _, err := w.c.System.TimeZones(ctx); return err },
	commands.PersonTrack: func(ctx context.Context, w *writeWorld) error {
		return w.c.People.Track(ctx, "u1", sendloop.PersonTrackParams{Email: w.member})
	},
	commands.PersonGet: func(ctx context.Context, w *writeWorld) error {
		if err := w.c.People.Track(ctx, "u2", sendloop.PersonTrackParams{Email: w.member}); err != nil {
			return err
		}
		_, err := w.c.People.Get(ctx, "u2")
		return err
	},
	commands.PersonDelete: func(ctx context.Context, w *writeWorld) error { return w.c.People.Delete(ctx, "u1") },
}

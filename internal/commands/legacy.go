package commands

import "github.com/go-sendloop/sendloop/internal/transport"

// The legacy commands with typed methods, as the specification spells them.
const (
	LegacySubscriberAdd         = "Subscriber.Add"
	LegacySubscriberUnsubscribe = "Subscriber.Unsubscribe"
	LegacyChartListActivity     = "Chart.ListActivity"
	LegacyMediaUpload           = "Media.Upload"
	LegacyMediaBrowse           = "Media.Browse"
)

// The legacy functions the specification lists without detail, reached through Call.
const (
	LegacySubscriberGet    = "Subscriber.Get"
	LegacySubscribersGet   = "Subscribers.Get"
	LegacySubscriberUpdate = "Subscriber.Update"
	LegacySubscriberDelete = "Subscriber.Delete"

	LegacyReportCampaignAdvisory               = "Report.Campaign.Advisory"
	LegacyReportCampaignEmailPath              = "Report.Campaign.EmailPath"
	LegacyReportCampaignOpensOverall           = "Report.Campaign.OpensOverall"
	LegacyReportCampaignOpensDetail            = "Report.Campaign.OpensDetail"
	LegacyReportCampaignClicksOverall          = "Report.Campaign.ClicksOverall"
	LegacyReportCampaignClicksDetail           = "Report.Campaign.ClicksDetail"
	LegacyReportCampaignUnsubscriptionsOverall = "Report.Campaign.UnsubscriptionsOverall"
	LegacyReportCampaignUnsubscriptionsDetail  = "Report.Campaign.UnsubscriptionsDetail"
	LegacyReportCampaignBrowserViewsOverall    = "Report.Campaign.BrowserViewsOverall"
	LegacyReportCampaignBrowserViewsDetail     = "Report.Campaign.BrowserViewsDetail"
	LegacyReportCampaignForwardsOverall        = "Report.Campaign.ForwardsOverall"
	LegacyReportCampaignForwardsDetail         = "Report.Campaign.ForwardsDetail"
	LegacyReportCampaignBounceOverall          = "Report.Campaign.BounceOverall"
	LegacyReportCampaignBounceDetail           = "Report.Campaign.BounceDetail"
	LegacyReportCampaignSpamComplains          = "Report.Campaign.SpamComplains"
	LegacyReportListAdvisory                   = "Report.List.Advisory"
	LegacyReportListPerformance                = "Report.List.Performance"
	LegacyReportListBounceOverall              = "Report.List.BounceOverall"
	LegacyReportListBounceDetails              = "Report.List.BounceDetails"
	LegacyReportListOpens                      = "Report.List.Opens"
	LegacyReportListClicks                     = "Report.List.Clicks"
	LegacyReportListForwards                   = "Report.List.Forwards"
	LegacyReportListBrowserViews               = "Report.List.BrowserViews"
	LegacyReportListActivities                 = "Report.List.Activities"
	LegacyReportListEmailServices              = "Report.List.EmailServices"
)

// listed returns the entry of a legacy function the specification names without detail.
func listed(name string, class transport.Class) Spec {
	s := Spec{Name: name, API: Legacy, Class: class, CallOnly: true, Listed: true}
	if class != transport.Read {
		s.Outcome = Retried
	}
	return s
}

var legacySpecs = []Spec{
	// A repeat is answered "already exists" (6), settled with the v3 subscriber.get.
	{Name: LegacySubscriberAdd, API: Legacy, Class: transport.Idempotent, Outcome: ReadBack, ReadBack: SubscriberGet,
		IDs: []ID{listID, customFieldID}, Required: []string{"ListID", "Fields[EmailAddress]", "SubscriptionIP"}},
	// A repeat is answered "not in the list" (8), settled with the v3 subscriber.get.
	{Name: LegacySubscriberUnsubscribe, API: Legacy, Class: transport.Idempotent, Outcome: ReadBack, ReadBack: SubscriberGet,
		IDs: []ID{listID}, Required: []string{"ListID", "EmailAddress", "UnsubscriptionIP"}},
	{Name: LegacyChartListActivity, API: Legacy, Class: transport.Read, IDs: []ID{listID}, Required: []string{"ListID", "Start", "Days"}},
	// Each upload adds an image to the library: a repeat would add a second one.
	{Name: LegacyMediaUpload, API: Legacy, Class: transport.OneShot, Outcome: Unknown, Required: []string{"MediaData", "MediaType", "Tags"}},
	{Name: LegacyMediaBrowse, API: Legacy, Class: transport.Read},

	listed(LegacySubscriberGet, transport.Read),
	listed(LegacySubscribersGet, transport.Read),
	// Setting fields to given values, removing what may already be gone: repeats are harmless.
	listed(LegacySubscriberUpdate, transport.Idempotent),
	listed(LegacySubscriberDelete, transport.Idempotent),

	listed(LegacyReportCampaignAdvisory, transport.Read),
	listed(LegacyReportCampaignEmailPath, transport.Read),
	listed(LegacyReportCampaignOpensOverall, transport.Read),
	listed(LegacyReportCampaignOpensDetail, transport.Read),
	listed(LegacyReportCampaignClicksOverall, transport.Read),
	listed(LegacyReportCampaignClicksDetail, transport.Read),
	listed(LegacyReportCampaignUnsubscriptionsOverall, transport.Read),
	listed(LegacyReportCampaignUnsubscriptionsDetail, transport.Read),
	listed(LegacyReportCampaignBrowserViewsOverall, transport.Read),
	listed(LegacyReportCampaignBrowserViewsDetail, transport.Read),
	listed(LegacyReportCampaignForwardsOverall, transport.Read),
	listed(LegacyReportCampaignForwardsDetail, transport.Read),
	listed(LegacyReportCampaignBounceOverall, transport.Read),
	listed(LegacyReportCampaignBounceDetail, transport.Read),
	listed(LegacyReportCampaignSpamComplains, transport.Read),
	listed(LegacyReportListAdvisory, transport.Read),
	listed(LegacyReportListPerformance, transport.Read),
	listed(LegacyReportListBounceOverall, transport.Read),
	listed(LegacyReportListBounceDetails, transport.Read),
	listed(LegacyReportListOpens, transport.Read),
	listed(LegacyReportListClicks, transport.Read),
	listed(LegacyReportListForwards, transport.Read),
	listed(LegacyReportListBrowserViews, transport.Read),
	listed(LegacyReportListActivities, transport.Read),
	listed(LegacyReportListEmailServices, transport.Read),
}

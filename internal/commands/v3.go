package commands

import (
	"net/http"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// The v3 commands, as the specification spells them.
const (
	AccountInfoGet    = "account.info.get"
	AccountInfoUpdate = "account.info.update"

	ListCreate         = "list.create"
	ListUpdate         = "list.update"
	ListGet            = "list.get"
	ListGetList        = "list.getlist"
	ListSettingsGet    = "list.settings.get"
	ListSettingsUpdate = "list.settings.update"

	SubscriberBrowse      = "subscriber.browse"
	SubscriberGet         = "subscriber.get"
	SubscriberSearch      = "subscriber.search"
	SubscriberImport      = "subscriber.import"
	SubscriberSubscribe   = "subscriber.subscribe"
	SubscriberUnsubscribe = "subscriber.unsubscribe"
	SubscriberUpdate      = "subscriber.update"

	SuppressionListGetList = "suppression.list.getlist"
	SuppressionListGet     = "suppression.list.get"
	SuppressionListAdd     = "suppression.list.add"

	CampaignCreate = "campaign.create"
	CampaignGet    = "campaign.get"
	CampaignUpdate = "campaign.update"
	CampaignDelete = "campaign.delete"

	ReportListOverall             = "report.list.overall"
	ReportCampaignOverall         = "report.campaign.overall"
	ReportCampaignWebBrowserViews = "report.campaign.webbrowserviews"
	ReportCampaignUnsubscriptions = "report.campaign.unsubscriptions"
	ReportCampaignOpens           = "report.campaign.opens"
	ReportCampaignForwards        = "report.campaign.forwards"
	ReportCampaignOpenLocations   = "report.campaign.openlocations"
	ReportCampaignEmailClients    = "report.campaign.emailclients"
	ReportCampaignBounces         = "report.campaign.bounces"
	ReportCampaignSpamComplaints  = "report.campaign.spamcomplaints"
	DataCampaignUnsubscriptions   = "data.campaign.unsubscriptions"
	DataCampaignOpenLocations     = "data.campaign.openlocations"
	DataCampaignForwards          = "data.campaign.forwards"
	DataCampaignBrowserViews      = "data.campaign.browserviews"
	DataCampaignEmailOpens        = "data.campaign.emailopens"
	DataCampaignLinkClicks        = "data.campaign.linkclicks"
	DataCampaignBounces           = "data.campaign.bounces"
	ExportUnsubscriptions         = "export.unsubscriptions"
	ExportSuppressionList         = "export.suppressionlist"
	ExportSpamComplaints          = "export.spamcomplaints"
	ExportBounces                 = "export.bounces"
	SystemSystemDateGet           = "System.SystemDate.Get"
	SystemTimeZonesGet            = "system.timezones.Get"
)

// The person operations, as named in errors, logs, the registry and the fake.
const (
	PersonTrack  = "person.track"
	PersonGet    = "person.get"
	PersonDelete = "person.delete"
)

// ID parameters, by rule.
var (
	listID        = ID{Name: "ListID", Rule: Required}
	optListID     = ID{Name: "ListID", Rule: Optional}
	campaignID    = ID{Name: "CampaignID", Rule: Required}
	subscriberID  = ID{Name: "SubscriberID", Rule: Optional}
	segmentID     = ID{Name: "SegmentID", Rule: Optional}
	customFieldID = ID{Name: "CustomFieldID", Rule: Each}
	targetIDs     = []ID{{Name: "TargetListIDs", Rule: Each}, {Name: "TargetSegmentIDs", Rule: Each}, {Name: "CustomerIDs", Rule: Each}}
)

// read returns the entry of a v3 read taking ids, with required parameters.
func read(name string, ids []ID, required ...string) Spec {
	return Spec{Name: name, API: V3, Class: transport.Read, IDs: ids, Required: required}
}

// campaignRead is a read that takes CampaignID alone: the reports and the data pages.
func campaignRead(name string) Spec { return read(name, []ID{campaignID}, "CampaignID") }

var v3Specs = []Spec{
	read(AccountInfoGet, nil),
	// Setting fields to given values: a repeat sets the same values.
	{Name: AccountInfoUpdate, API: V3, Class: transport.Idempotent, Outcome: Retried},

	// Each call makes a new list or campaign: a repeat would make a second one.
	{Name: ListCreate, API: V3, Class: transport.OneShot, Outcome: Unknown, Required: []string{"Name", "OptInMode"}},
	{Name: ListUpdate, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: []ID{listID}, Required: []string{"ListID"}},
	read(ListGet, []ID{listID}, "ListID", "GetCustomFields"),
	read(ListGetList, nil),
	read(ListSettingsGet, []ID{listID}, "ListID"),
	{Name: ListSettingsUpdate, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: []ID{listID}, Required: []string{"ListID"}},

	read(SubscriberBrowse, []ID{listID, segmentID}, "ListID"),
	read(SubscriberGet, []ID{listID, subscriberID}, "ListID"),
	read(SubscriberSearch, nil, "EmailAddress"),
	// Rows already in the list come back as duplicates.
	{Name: SubscriberImport, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: []ID{listID, customFieldID}, Required: []string{"ListID", "Subscribers"}},
	// A repeat is answered "already exists" (125), settled by reading the subscriber back.
	{Name: SubscriberSubscribe, API: V3, Class: transport.Idempotent, Outcome: ReadBack, ReadBack: SubscriberGet,
		IDs: []ID{listID, customFieldID}, Required: []string{"EmailAddress", "ListID", "SubscriptionIP"}},
	// A repeat is answered "not subscribed" (127), settled by searching the address.
	{Name: SubscriberUnsubscribe, API: V3, Class: transport.Idempotent, Outcome: ReadBack, ReadBack: SubscriberSearch, Required: []string{"EmailAddress"}},
	{Name: SubscriberUpdate, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: []ID{listID, subscriberID, customFieldID}, Required: []string{"ListID"}},

	read(SuppressionListGetList, []ID{optListID}, "ListID"),
	read(SuppressionListGet, nil, "EmailAddress"),
	// An address already suppressed stays suppressed once.
	{Name: SuppressionListAdd, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: []ID{optListID}, Required: []string{"ListID", "EmailAddress"}},

	{Name: CampaignCreate, API: V3, Class: transport.OneShot, Outcome: Unknown, IDs: targetIDs},
	read(CampaignGet, []ID{campaignID}, "CampaignID"),
	{Name: CampaignUpdate, API: V3, Class: transport.Idempotent, Outcome: Retried, IDs: append([]ID{campaignID}, targetIDs...), Required: []string{"CampaignID"}},
	// A repeat is answered "not found" (106), settled with campaign.get.
	{Name: CampaignDelete, API: V3, Class: transport.Idempotent, Outcome: ReadBack, ReadBack: CampaignGet, IDs: []ID{campaignID}, Required: []string{"CampaignID"}},

	read(ReportListOverall, []ID{listID}, "ListID"),
	campaignRead(ReportCampaignOverall),
	campaignRead(ReportCampaignWebBrowserViews),
	campaignRead(ReportCampaignUnsubscriptions),
	campaignRead(ReportCampaignOpens),
	campaignRead(ReportCampaignForwards),
	campaignRead(ReportCampaignOpenLocations),
	campaignRead(ReportCampaignEmailClients),
	campaignRead(ReportCampaignBounces),
	campaignRead(ReportCampaignSpamComplaints),

	campaignRead(DataCampaignUnsubscriptions),
	campaignRead(DataCampaignOpenLocations),
	campaignRead(DataCampaignForwards),
	campaignRead(DataCampaignBrowserViews),
	// Seen on the real service, not in the specification's tables.
	campaignRead(DataCampaignEmailOpens),
	campaignRead(DataCampaignLinkClicks),
	campaignRead(DataCampaignBounces),

	read(ExportUnsubscriptions, []ID{optListID}),
	read(ExportSuppressionList, nil),
	read(ExportSpamComplaints, nil),
	read(ExportBounces, nil, "BounceType"),
	read(SystemSystemDateGet, nil),
	read(SystemTimeZonesGet, nil),
}

var personSpecs = []Spec{
	// Each track records a session of the person: a repeat would record a second one.
	{Name: PersonTrack, API: Person, Class: transport.OneShot, Outcome: Unknown, Method: http.MethodPost, Path: "/api/v4/person.json", Required: []string{"user_id", "email"}},
	{Name: PersonGet, API: Person, Class: transport.Read, Method: http.MethodGet, Path: "/api/v3/person.json", Required: []string{"user_id"}},
	// Removing what is already gone leaves it gone.
	{Name: PersonDelete, API: Person, Class: transport.Idempotent, Outcome: Retried, Method: http.MethodGet, Path: "/api/v3/person.json/", Required: []string{"user_id"}},
}

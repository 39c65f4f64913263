package sendlooptest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const oneDay = 24 * time.Hour

// readClock is when the campaign tests read what the recipients of a campaign delivered at
// campaignClock did: 60 days later, so that activity over those days has happened.
var readClock = campaignClock.Add(60 * oneDay)

// sentFakeCampaign creates campaign 1 for list 1 and delivers it (deliver).
func sentFakeCampaign(t *testing.T, srv *Server) []string {
	t.Helper()
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs()...), `"CampaignID":1`)
	return deliver(t, srv, 1)
}

// deliver delivers a campaign at the fake's clock, campaignClock, then moves the clock on to
// readClock.
func deliver(t *testing.T, srv *Server, campaignID int) []string {
	t.Helper()
	rcpts, err := srv.SimulateSend(campaignID)
	require.NoError(t, err)
	srv.SetClock(func() time.Time { return readClock })
	return rcpts
}

func TestSimulateSendResolvesRecipients(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 5)
	_, club := fakeList(t, srv, "club", 1)
	fieldID, err := srv.DefineCustomField(2, CustomField{Name: "Plan"})
	require.NoError(t, err)
	segID, err := srv.DefineSegment(2, "Pro", fieldID, "pro")
	require.NoError(t, err)
	// club0 is also in list 1, and in the segment: delivered once.
	require.Contains(t, v3Command(t, srv, "subscriber.subscribe", "ListID", "2", "EmailAddress", news[0], "SubscriptionIP", "127.0.0.1",
		"Fields[CustomField1]", "pro"), `"Success":true`)
	require.Contains(t, v3Command(t, srv, "subscriber.subscribe", "ListID", "2", "EmailAddress", "pro@example.com", "SubscriptionIP", "127.0.0.1",
		"Fields[CustomField1]", "pro"), `"Success":true`)
	require.Contains(t, v3Command(t, srv, "subscriber.unsubscribe", "EmailAddress", news[1]), `"Success":true`)
	require.NoError(t, srv.SetBounce(1, news[2], "Hard"))
	require.NoError(t, srv.SetBounce(1, news[3], "Soft"))
	_, err = srv.Suppress(0, news[4], "Manual")
	require.NoError(t, err)
	require.Contains(t, v3Command(t, srv, "list.create", "Name", "double", "OptInMode", "Double"), `"ListID":3`)
	require.Contains(t, v3Command(t, srv, "subscriber.subscribe", "ListID", "3", "EmailAddress", "pending@example.com",
		"SubscriptionIP", "127.0.0.1"), "Confirmation Pending")

	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs("TargetListIDs[]", "3", "TargetSegmentIDs[]", strconv.Itoa(segID))...), `"CampaignID":1`)
	rcpts, err := srv.SimulateSend(1)
	require.NoError(t, err)
	assert.Equal(t, []string{news[0], news[3], "pro@example.com"}, rcpts,
		"not the unsubscribed, hard-bounced, suppressed or pending; soft-bounced still; each address once")
	assert.NotContains(t, rcpts, club[0], "not in the segment")

	status, _ := srv.CampaignStatus(1)
	assert.Equal(t, "Sent", status)
	got := v3Command(t, srv, "campaign.get", "CampaignID", "1")
	assert.Contains(t, got, `"SendDate":"2026-03-02","SendTime":"10:00:00","SendTimeZone":"UTC","TotalRecipients":"3","TotalSent":"3"`)

	_, err = srv.SimulateSend(1)
	require.ErrorContains(t, err, "already sent")
	_, err = srv.SimulateSend(2)
	require.ErrorContains(t, err, "no campaign 2")
}

func TestSimulateEventsChecksEverythingFirst(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 2)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs()...), `"CampaignID":1`)
	open := CampaignEvent{Kind: EventOpen, Email: news[0]}
	require.ErrorContains(t, srv.SimulateEvents(1, open), "call SimulateSend first")
	require.ErrorContains(t, srv.SimulateEvents(9, open), "no campaign 9")
	_, err := srv.SimulateSend(1)
	require.NoError(t, err)

	tests := []struct {
		name   string
		events []CampaignEvent
		want   string
	}{
		{"unknown kind", []CampaignEvent{open, {Kind: "dance", Email: news[0]}}, `event 1: unknown kind "dance"`},
		{"before delivery", []CampaignEvent{open, {Kind: EventClick, Email: news[0], After: -time.Second}}, "before the delivery"},
		{"not a recipient", []CampaignEvent{open, {Kind: EventOpen, Email: "stranger@example.com"}}, "did not receive campaign 1"},
		{"unsubscribing twice", []CampaignEvent{{Kind: EventUnsubscription, Email: news[0]}, {Kind: EventUnsubscription, Email: news[0]}},
			"event 1: " + news[0] + " is not subscribed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, srv.SimulateEvents(1, tt.events...), tt.want)
		})
	}
	assert.Contains(t, v3Command(t, srv, "campaign.get", "CampaignID", "1"), `"TotalOpens":"0"`, "a refused batch records nothing")
	st, _ := srv.SubscriberStatus(1, news[0])
	assert.Equal(t, "Subscribed", st)

	require.NoError(t, srv.SimulateEvents(1, CampaignEvent{Kind: EventOpen, Email: strings.ToUpper(news[0])}), "addresses match in any case")
}

func TestSimulateEventsSideEffects(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hooks []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hooks = append(hooks, r.Method)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 3)
	require.Equal(t, `{"Success":true}`, v3Command(t, srv, "list.settings.update", "ListID", "1", "WebServiceUnsubscriptionURL", hook.URL))
	sentFakeCampaign(t, srv)

	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventUnsubscription, Email: news[0], After: 2 * oneDay, IP: "198.51.100.7"},
		CampaignEvent{Kind: EventHardBounce, Email: news[1]},
		CampaignEvent{Kind: EventSoftBounce, Email: news[1], After: time.Hour},
		CampaignEvent{Kind: EventSpamComplaint, Email: news[2], After: time.Hour},
	))
	mu.Lock()
	assert.Equal(t, []string{"POST"}, hooks, "the unsubscription webhook was posted before SimulateEvents returned")
	mu.Unlock()
	deliveries := srv.Webhooks()
	require.Len(t, deliveries, 1)
	assert.Equal(t, "Unsubscription", deliveries[0].Action)
	assert.Contains(t, string(deliveries[0].Body), "<UnsubscriptionDate>2026-03-04</UnsubscriptionDate>")

	st, _ := srv.SubscriberStatus(1, news[0])
	assert.Equal(t, "Unsubscribed", st)
	sub := v3Command(t, srv, "subscriber.get", "ListID", "1", "EmailAddress", news[1])
	assert.Contains(t, sub, `"BounceType":"Hard"`, "a soft bounce never overrides a hard one")
	assert.Contains(t, v3Command(t, srv, "suppression.list.get", "EmailAddress", news[2]), `"Type":"FBL Report","ListID":"0"`)
	assert.ErrorContains(t, srv.SimulateEvents(1, CampaignEvent{Kind: EventUnsubscription, Email: news[0]}), "is not subscribed")
}

func TestWindowedReportsStopAfter20Days(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 2)
	sentFakeCampaign(t, srv)                         // delivered 2026-03-02 10:00: the window is 2026-03-02 … 2026-03-21
	lastIn := 19*oneDay + 14*time.Hour - time.Second // 2026-03-21 23:59:59
	firstOut := 19*oneDay + 14*time.Hour             // 2026-03-22 00:00:00
	for _, kind := range []CampaignEventKind{EventOpen, EventForward, EventSpamComplaint} {
		require.NoError(t, srv.SimulateEvents(1,
			CampaignEvent{Kind: kind, Email: news[0]},
			CampaignEvent{Kind: kind, Email: news[1], After: lastIn},
			CampaignEvent{Kind: kind, Email: news[0], After: firstOut},
		))
	}
	want := `{"Success":true,"Statistics":{"2026-03-02":{"Total":1,"Unique":1},"2026-03-21":{"Total":1,"Unique":1}}}`
	for _, name := range []string{"report.campaign.opens", "report.campaign.forwards", "report.campaign.spamcomplaints"} {
		assert.Equal(t, want, v3Command(t, srv, name, "CampaignID", "1"), name)
	}
	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventOpen, Email: news[0], After: lastIn, Country: "GB", City: "Leeds", EmailClient: "Thunderbird", ClientVersion: "128"},
		CampaignEvent{Kind: EventOpen, Email: news[0], After: firstOut, Country: "GB", City: "York", EmailClient: "Mutt", ClientVersion: "2"},
		CampaignEvent{Kind: EventHardBounce, Email: news[0], After: lastIn},
		CampaignEvent{Kind: EventSoftBounce, Email: news[1], After: firstOut},
	))
	assert.Equal(t, `{"Success":true,"Statistics":{"GB":{"Leeds":1}}}`, v3Command(t, srv, "report.campaign.openlocations", "CampaignID", "1"))
	assert.Equal(t, `{"Success":true,"Statistics":{"Thunderbird":{"128":1}}}`, v3Command(t, srv, "report.campaign.emailclients", "CampaignID", "1"))
	assert.Equal(t, `{"Success":true,"Statistics":{"Hard":1,"Soft":0,"Not Bounced":1}}`, v3Command(t, srv, "report.campaign.bounces", "CampaignID", "1"))

	// Browser views and unsubscriptions are not windowed.
	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventBrowserView, Email: news[1], After: 40 * oneDay},
		CampaignEvent{Kind: EventUnsubscription, Email: news[1], After: 40 * oneDay},
	))
	assert.Equal(t, `{"Success":true,"Statistics":{"2026-04-11":{"Total":1,"Unique":1}}}`, v3Command(t, srv, "report.campaign.webbrowserviews", "CampaignID", "1"))
	assert.Equal(t, `{"Success":true,"Statistics":{"2026-04-11":{"Unique":1}}}`, v3Command(t, srv, "report.campaign.unsubscriptions", "CampaignID", "1"))
}

func TestReportsOfAnEmptyCampaign(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	fakeList(t, srv, "news", 1)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs()...), `"CampaignID":1`)
	for _, name := range []string{"report.campaign.opens", "report.campaign.openlocations", "report.campaign.webbrowserviews"} {
		assert.Equal(t, `{"Success":true,"Statistics":[]}`, v3Command(t, srv, name, "CampaignID", "1"), "PHP writes an empty object as []")
	}
	assert.Equal(t, `{"Success":true,"Statistics":{"Hard":0,"Soft":0,"Not Bounced":0}}`, v3Command(t, srv, "report.campaign.bounces", "CampaignID", "1"))
	for _, name := range []string{"report.campaign.overall", "report.campaign.opens", "report.campaign.spamcomplaints", "data.campaign.forwards"} {
		assert.Contains(t, v3Command(t, srv, name, "CampaignID", "2"), `"ErrorCode":106`, name)
		assert.Contains(t, v3Command(t, srv, name), `"ErrorCode":105`, name)
	}
	assert.Contains(t, v3Command(t, srv, "report.list.overall", "ListID", "2"), `"ErrorCode":118`)
	_, php := post(t, srv, "/api/v3/report.campaign.bounces/php", map[string][]string{"APIKey": {"k"}, "CampaignID": {"1"}})
	assert.Contains(t, php, `s:11:"Not Bounced";i:0;`)
}

func TestCampaignDataPaging(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 12)
	sentFakeCampaign(t, srv)
	events := make([]CampaignEvent, len(news))
	for i, e := range news {
		events[i] = CampaignEvent{Kind: EventBrowserView, Email: e, After: time.Duration(len(news)-i) * time.Minute}
	}
	require.NoError(t, srv.SimulateEvents(1, events...))
	count := func(body string) int { return strings.Count(body, `"ViewDate"`) }

	assert.Equal(t, 10, count(v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1")), "default Limit 10")
	page2 := v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1", "Page", "2")
	assert.Equal(t, `{"Success":true,"Data":[{"SubscriberID":"2","ListID":"1","ViewDate":"2026-03-02 10:11:00"},`+
		`{"SubscriberID":"1","ListID":"1","ViewDate":"2026-03-02 10:12:00"}]}`, page2, "oldest first")
	assert.Equal(t, `{"Success":true,"Data":[]}`, v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1", "Page", "3"))
	assert.Equal(t, 12, count(v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1", "Limit", "50")))
	assert.Equal(t, 5, count(v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1", "Limit", "5", "Page", "2")))
	for _, bad := range [][]string{{"Limit", "51"}, {"Limit", "0"}, {"Limit", "-1"}, {"Limit", "x"}, {"Page", "0"}, {"Page", "-2"}} {
		body := v3Command(t, srv, "data.campaign.browserviews", "CampaignID", "1", bad[0], bad[1])
		assert.Equal(t, `{"Success":false,"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["`+bad[0]+`"]}`, body, "%v", bad)
	}
}

func TestCampaignDataRecordShapes(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 2)
	sentFakeCampaign(t, srv)
	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventOpen, Email: news[0], After: time.Hour, Country: "FR", City: "Paris", Latitude: 48.8566, Longitude: 2.3522, ContentCode: "B"},
		CampaignEvent{Kind: EventOpen, Email: news[1], After: time.Hour},
		CampaignEvent{Kind: EventForward, Email: news[1], After: oneDay},
		CampaignEvent{Kind: EventSoftBounce, Email: news[1], After: 2 * time.Hour},
		CampaignEvent{Kind: EventUnsubscription, Email: news[0], After: oneDay},
	))
	tests := []struct{ command, want string }{
		{"data.campaign.openlocations", `{"Success":true,"Data":[{"SubscriberID":"1","DetectionDate":"2026-03-02 11:00:00","CountryCode":"FR",` +
			`"City":"Paris","Latitude":"48.8566","Longtitude":"2.3522","ContentCode":"B"}]}`},
		{"data.campaign.forwards", `{"Success":true,"Data":[{"SubscriberID":"2","ListID":"1","ForwardDate":"2026-03-03 10:00:00"}]}`},
		{"data.campaign.bounces", `{"Success":true,"Data":[{"SubscriberID":"2","ListID":"1","BounceType":"Soft","BounceDate":"2026-03-02 12:00:00"}]}`},
		{"data.campaign.unsubscriptions", `{"Success":true,"Data":[{"SubscriberID":"1","ListID":"1","UnsubscriptionDate":"2026-03-03 10:00:00","Channel":"Link"}]}`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, v3Command(t, srv, tt.command, "CampaignID", "1"), tt.command)
	}
}

func TestListOverallCountsTheListsRecipientsOnly(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 2)
	_, club := fakeList(t, srv, "club", 2)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs("TargetListIDs[]", "2")...), `"CampaignID":1`)
	deliver(t, srv, 1)
	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventOpen, Email: news[0], After: oneDay}, // Tuesday
		CampaignEvent{Kind: EventOpen, Email: news[0], After: oneDay + time.Hour},
		CampaignEvent{Kind: EventOpen, Email: club[0], After: 2 * oneDay},
		CampaignEvent{Kind: EventOpen, Email: club[1], After: 2 * oneDay},
		CampaignEvent{Kind: EventClick, Email: club[1], After: 3 * oneDay},
		CampaignEvent{Kind: EventSpamComplaint, Email: club[0], After: 3 * oneDay},
	))
	assert.Equal(t, `{"Success":true,"Statistics":{"OpenPerformance":1,"OpenAvg":1,"OpenPerformanceRate":50,"LinkPerformance":0,`+
		`"LinkAvg":0,"LinkPerformanceRate":0,"HighestOpenRateDay":"Tuesday","HighestLinkRateDay":"","TotalSPAMComplaints":0}}`,
		v3Command(t, srv, "report.list.overall", "ListID", "1"))
	assert.Equal(t, `{"Success":true,"Statistics":{"OpenPerformance":2,"OpenAvg":2,"OpenPerformanceRate":100,"LinkPerformance":1,`+
		`"LinkAvg":1,"LinkPerformanceRate":50,"HighestOpenRateDay":"Wednesday","HighestLinkRateDay":"Thursday","TotalSPAMComplaints":1}}`,
		v3Command(t, srv, "report.list.overall", "ListID", "2"))
	// A deleted campaign leaves the list reports.
	require.Equal(t, `{"Success":true}`, v3Command(t, srv, "campaign.delete", "CampaignID", "1"))
	assert.Contains(t, v3Command(t, srv, "report.list.overall", "ListID", "2"), `"OpenPerformance":0,`)
}

// TestSimulatedEventsAreNeverInTheFuture: activity has happened. An event after the fake's
// now is refused, nothing is recorded and the clock stays; a campaign delivered in the past
// (SimulateSendAt) takes activity up to now.
func TestSimulatedEventsAreNeverInTheFuture(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 1)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs()...), `"CampaignID":1`)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs()...), `"CampaignID":2`)

	_, err := srv.SimulateSendAt(2, campaignClock.Add(time.Second))
	require.ErrorContains(t, err, "after the fake's now")
	_, err = srv.SimulateSendAt(2, time.Time{})
	require.ErrorContains(t, err, "no delivery time")
	status, _ := srv.CampaignStatus(2)
	assert.Equal(t, "Draft", status, "a refused delivery changes nothing")

	_, err = srv.SimulateSend(1)
	require.NoError(t, err)
	tests := []struct {
		name   string
		events []CampaignEvent
		want   string // error substring; "" for none
	}{
		{"a day later", []CampaignEvent{{Kind: EventOpen, Email: news[0], After: oneDay}}, "event 0: 2026-03-03 10:00:00 (delivery + 24h0m0s) is after the fake's now, 2026-03-02 10:00:00"},
		{"a second later, after one in time", []CampaignEvent{{Kind: EventOpen, Email: news[0]}, {Kind: EventOpen, Email: news[0], After: time.Second}}, "event 1:"},
		{"an unsubscription later", []CampaignEvent{{Kind: EventUnsubscription, Email: news[0], After: time.Minute}}, "after the fake's now"},
	}
	for _, tt := range tests {
		require.ErrorContains(t, srv.SimulateEvents(1, tt.events...), tt.want, tt.name)
	}
	assert.Equal(t, campaignClock, srv.now(), "the clock stays")
	assert.Contains(t, v3Command(t, srv, "System.SystemDate.Get"), "2026-03-02 10:00:00")
	assert.Contains(t, v3Command(t, srv, "report.campaign.overall", "CampaignID", "1"), `"UniqueOpens":0,`, "nothing recorded")
	assert.Contains(t, v3Command(t, srv, "subscriber.get", "ListID", "1", "EmailAddress", news[0]), `"SubscriptionStatus":"Subscribed"`)
	require.NoError(t, srv.SimulateEvents(1, CampaignEvent{Kind: EventOpen, Email: news[0]}), "at the delivery, which is now")

	// Delivered three days ago: three days of activity, reported, up to now exactly.
	rcpts, err := srv.SimulateSendAt(2, campaignClock.Add(-3*oneDay))
	require.NoError(t, err)
	require.Equal(t, news, rcpts)
	assert.Contains(t, v3Command(t, srv, "campaign.get", "CampaignID", "2"), `"SendDate":"2026-02-27","SendTime":"10:00:00"`)
	require.NoError(t, srv.SimulateEvents(2,
		CampaignEvent{Kind: EventOpen, Email: news[0], After: time.Hour},
		CampaignEvent{Kind: EventOpen, Email: news[0], After: 3 * oneDay}))
	assert.Contains(t, v3Command(t, srv, "report.campaign.opens", "CampaignID", "2"), `"2026-02-27":{"Total":1,"Unique":1}`)
	assert.Contains(t, v3Command(t, srv, "report.campaign.opens", "CampaignID", "2"), `"2026-03-02":{"Total":1,"Unique":1}`)
	assert.Equal(t, campaignClock, srv.now())
}

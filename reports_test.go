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

// reportWorld delivers a campaign to five subscribers on Monday 2026-03-02 at 10:00 and
// records activity on both sides of the 20-day window (2026-03-02 … 2026-03-21).
func reportWorld(t *testing.T) (*campaignWorld, int) {
	t.Helper()
	w := newCampaignWorld(t, 5)
	id := w.sentCampaign(t)
	e := w.emails
	type ev = sendlooptest.CampaignEvent
	open := func(email string, after time.Duration, country, city, client, version string) ev {
		return ev{Kind: sendlooptest.EventOpen, Email: email, After: after, Country: country, City: city,
			Latitude: 51.5, Longitude: -0.12, EmailClient: client, ClientVersion: version}
	}
	require.NoError(t, w.srv.SimulateEvents(id,
		open(e[0], time.Hour, "GB", "London", "Apple Mail", "16"),
		open(e[0], 2*time.Hour, "GB", "London", "Apple Mail", "16"),
		open(e[1], oneDay, "US", "New York", "Gmail", ""),
		open(e[1], 19*oneDay+13*time.Hour, "US", "Boston", "", ""),           // 2026-03-21 23:00: the window's last day
		open(e[2], 19*oneDay+14*time.Hour, "FR", "Paris", "Outlook", "2021"), // 2026-03-22 00:00: outside
		open(e[2], 25*oneDay, "FR", "Paris", "Outlook", "2021"),
		ev{Kind: sendlooptest.EventClick, Email: e[0], After: 3 * time.Hour, Link: "https://example.com/sale"},
		ev{Kind: sendlooptest.EventForward, Email: e[0], After: 5 * oneDay},
		ev{Kind: sendlooptest.EventForward, Email: e[1], After: 20 * oneDay}, // outside
		ev{Kind: sendlooptest.EventHardBounce, Email: e[3]},
		ev{Kind: sendlooptest.EventSoftBounce, Email: e[4], After: 21 * oneDay}, // outside
		ev{Kind: sendlooptest.EventSpamComplaint, Email: e[0], After: 2 * oneDay},
		ev{Kind: sendlooptest.EventSpamComplaint, Email: e[1], After: 20 * oneDay}, // outside
		ev{Kind: sendlooptest.EventBrowserView, Email: e[1], After: oneDay},
		ev{Kind: sendlooptest.EventBrowserView, Email: e[1], After: oneDay + time.Hour},
		ev{Kind: sendlooptest.EventBrowserView, Email: e[2], After: 30 * oneDay}, // browser views have no window
		ev{Kind: sendlooptest.EventUnsubscription, Email: e[4], After: 25 * oneDay},
	))
	return w, id
}

func dailyActivity(t *testing.T, entries ...any) sendloop.DailySeries {
	t.Helper()
	var out sendloop.DailySeries
	for i := 0; i < len(entries); i += 3 {
		var d sendloop.Date
		require.NoError(t, d.UnmarshalText([]byte(entries[i].(string))))
		out = append(out, sendloop.DailyActivity{Date: d, Total: entries[i+1].(int), Unique: entries[i+2].(int)})
	}
	return out
}

func TestCampaignReportsCountTheFirst20Days(t *testing.T) {
	t.Parallel()
	w, id := reportWorld(t)
	ctx := context.Background()
	r := w.c.Reports

	opens, err := r.CampaignOpens(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, dailyActivity(t, "2026-03-02", 2, 1, "2026-03-03", 1, 1, "2026-03-21", 1, 1), opens)
	total, unique := opens.Sum()
	assert.Equal(t, [2]int{4, 3}, [2]int{total, unique})

	forwards, err := r.CampaignForwards(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, dailyActivity(t, "2026-03-07", 1, 1), forwards)

	locations, err := r.CampaignOpenLocations(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.GroupedCounts{"GB": {"London": 2}, "US": {"New York": 1, "Boston": 1}}, locations)
	assert.Equal(t, 4, locations.Total())

	clients, err := r.CampaignEmailClients(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.GroupedCounts{"Apple Mail": {"16": 2}, "Gmail": {"": 1}}, clients)

	bounces, err := r.CampaignBounces(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.BounceCounts{Hard: 1, Soft: 0, NotBounced: 4}, bounces)

	spam, err := r.CampaignSpamComplaints(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.SpamComplaintStats{Days: dailyActivity(t, "2026-03-04", 1, 1), Total: 1, Unique: 1}, spam)

	// These two reports cover the whole campaign.
	views, err := r.CampaignBrowserViews(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, dailyActivity(t, "2026-03-03", 2, 1, "2026-04-01", 1, 1), views)

	unsubs, err := r.CampaignUnsubscriptions(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, dailyActivity(t, "2026-03-27", 0, 1), unsubs, "the service reports Unique only")
}

func TestReportCommandsSendTheirID(t *testing.T) {
	t.Parallel()
	w, id := reportWorld(t)
	ctx := context.Background()
	r := w.c.Reports
	tests := []struct {
		command string
		call    func() error
	}{
		{"report.campaign.overall", func() error { _, err := r.CampaignOverall(ctx, id); return err }},
		{"report.campaign.webbrowserviews", func() error { _, err := r.CampaignBrowserViews(ctx, id); return err }},
		{"report.campaign.unsubscriptions", func() error { _, err := r.CampaignUnsubscriptions(ctx, id); return err }},
		{"report.campaign.opens", func() error { _, err := r.CampaignOpens(ctx, id); return err }},
		{"report.campaign.forwards", func() error { _, err := r.CampaignForwards(ctx, id); return err }},
		{"report.campaign.openlocations", func() error { _, err := r.CampaignOpenLocations(ctx, id); return err }},
		{"report.campaign.emailclients", func() error { _, err := r.CampaignEmailClients(ctx, id); return err }},
		{"report.campaign.bounces", func() error { _, err := r.CampaignBounces(ctx, id); return err }},
		{"report.campaign.spamcomplaints", func() error { _, err := r.CampaignSpamComplaints(ctx, id); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			require.NoError(t, tt.call())
			reqs := requestsFor(w.srv, tt.command)
			require.Len(t, reqs, 1)
			assert.Equal(t, "/api/v3/"+tt.command+"/json", reqs[0].Path)
			assert.Equal(t, keyParam(w.srv)+"&CampaignID=1", string(reqs[0].Body))
		})
	}
	_, err := r.ListOverall(ctx, w.listID)
	require.NoError(t, err)
	assert.Equal(t, keyParam(w.srv)+"&ListID=1", string(w.srv.LastRequest().Body))
}

func TestCampaignOverallReport(t *testing.T) {
	t.Parallel()
	w, id := reportWorld(t)
	ctx := context.Background()
	got, err := w.c.Reports.CampaignOverall(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.CampaignOverallReport{
		HighestOpenRateDay: "2026-03-02", HighestLinkRateDay: "2026-03-02",
		TotalRecipients: 5, TotalDelivered: 3, TotalDeliveredRatio: 60, // two of five bounced
		UniqueOpens: 3, UniqueOpensRatio: 100, UniqueClicks: 1, UniqueClicksRatio: 33.33,
		OpenAvg: 100, LinkAvg: 33.33, DeliveredAvg: 60, // the only delivered campaign is the average
		TotalSPAMComplaints: 2,
	}, got)

	// A second delivery to what is left of the list (one address: the others bounced,
	// unsubscribed or complained) moves the account's averages.
	second, err := w.c.Campaigns.Create(ctx, validCampaign(w.listID))
	require.NoError(t, err)
	assert.Equal(t, []string{w.emails[2]}, w.deliver(t, second))

	got, err = w.c.Reports.CampaignOverall(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 50.0, got.OpenAvg)
	assert.Equal(t, 50.0, got.OpenPerformanceRate)
	assert.Equal(t, 16.67, got.LinkAvg)
	assert.Equal(t, 16.66, got.LinkPerformanceRate)
	assert.Equal(t, 80.0, got.DeliveredAvg)
	assert.Equal(t, -20.0, got.DeliveredRate)

	other, err := w.c.Reports.CampaignOverall(ctx, second)
	require.NoError(t, err)
	assert.Equal(t, -50.0, other.OpenPerformanceRate)
	assert.Equal(t, "", other.HighestOpenRateDay)

	list, err := w.c.Reports.ListOverall(ctx, w.listID)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.ListOverallReport{
		OpenPerformance: 3, OpenAvg: 1.5, OpenPerformanceRate: 50, // 3 unique opens over 6 deliveries, 2 campaigns
		LinkPerformance: 1, LinkAvg: 0.5, LinkPerformanceRate: 16.67,
		HighestOpenRateDay: "Monday", HighestLinkRateDay: "Monday", TotalSPAMComplaints: 2,
	}, list)
}

func TestReportsOfADraftAreEmpty(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 2)
	ctx := context.Background()
	id, err := w.c.Campaigns.Create(ctx, validCampaign(w.listID))
	require.NoError(t, err)
	opens, err := w.c.Reports.CampaignOpens(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, opens)
	locations, err := w.c.Reports.CampaignOpenLocations(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, locations)
	spam, err := w.c.Reports.CampaignSpamComplaints(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.SpamComplaintStats{}, spam)
	overall, err := w.c.Reports.CampaignOverall(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, &sendloop.CampaignOverallReport{}, overall)
}

func TestReportErrors(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 0)
	ctx := context.Background()
	_, err := w.c.Reports.CampaignOpens(ctx, 404)
	require.ErrorIs(t, err, sendloop.ErrNotFound)
	var apiErr *sendloop.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "report.campaign.opens", apiErr.Command)
	_, err = w.c.Reports.CampaignBounces(ctx, 404)
	require.ErrorIs(t, err, sendloop.ErrNotFound)
	_, err = w.c.Reports.ListOverall(ctx, 404)
	require.ErrorIs(t, err, sendloop.ErrListNotFound)

	n := len(w.srv.Requests())
	_, err = w.c.Reports.CampaignOverall(ctx, 0)
	require.ErrorIs(t, err, sendloop.ErrMissingParameters)
	_, err = w.c.Reports.ListOverall(ctx, -3)
	require.ErrorIs(t, err, sendloop.ErrInvalidParameterValue)
	_, err = w.c.Reports.CampaignSpamComplaints(ctx, 1<<40)
	require.ErrorIs(t, err, sendloop.ErrInvalidParameterValue)
	var ve *sendloop.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, []string{"CampaignID"}, ve.Fields)
	assert.Len(t, w.srv.Requests(), n, "nothing may be sent")
}

func TestDailySeriesDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want sendloop.DailySeries
	}{
		{"empty list", `[]`, nil},
		{"null", `null`, nil},
		{"strings and order", `{"2026-01-03":{"Total":"4","Unique":"2"},"2026-01-01":{"Total":1,"Unique":1}}`,
			dailyActivity(t, "2026-01-01", 1, 1, "2026-01-03", 4, 2)},
		{"unique only", `{"2026-01-01":{"Unique":3}}`, dailyActivity(t, "2026-01-01", 0, 3)},
		{"bare count", `{"2026-01-01":"5"}`, dailyActivity(t, "2026-01-01", 5, 0)},
		{"date-time keys merge", `{"2026-01-01 10:00:00":{"Total":1,"Unique":1},"2026-01-01":{"Total":2,"Unique":1}}`,
			dailyActivity(t, "2026-01-01", 3, 2)},
		{"unknown members ignored", `{"2026-01-01":{"Total":1,"Unique":1,"Other":"x"}}`, dailyActivity(t, "2026-01-01", 1, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s sendloop.DailySeries
			require.NoError(t, s.UnmarshalJSON([]byte(tt.in)))
			assert.Equal(t, tt.want, s)
		})
	}
	for _, bad := range []string{`{"yesterday":{"Total":1}}`, `{"0000-00-00":1}`, `{"2026-01-01":{"Total":"x"}}`, `"x"`, `{`} {
		var s sendloop.DailySeries
		assert.Error(t, s.UnmarshalJSON([]byte(bad)), bad)
	}
}

func TestGroupedCountsDecoding(t *testing.T) {
	t.Parallel()
	var g sendloop.GroupedCounts
	require.NoError(t, g.UnmarshalJSON([]byte(`{"GB":{"London":"3","Leeds":1},"US":[],"DE":2}`)))
	assert.Equal(t, sendloop.GroupedCounts{"GB": {"London": 3, "Leeds": 1}, "US": {}, "DE": {"": 2}}, g)
	assert.Equal(t, 6, g.Total())
	require.NoError(t, g.UnmarshalJSON([]byte(`[]`)))
	assert.Empty(t, g)
	assert.Error(t, g.UnmarshalJSON([]byte(`{"GB":{"London":"many"}}`)))
}

func TestBounceCountsDecoding(t *testing.T) {
	t.Parallel()
	var b sendloop.BounceCounts
	require.NoError(t, b.UnmarshalJSON([]byte(`{"Hard":"2","Soft":1,"Not Bounced":"40"}`)))
	assert.Equal(t, sendloop.BounceCounts{Hard: 2, Soft: 1, NotBounced: 40}, b)
	var c sendloop.BounceCounts
	require.NoError(t, c.UnmarshalJSON([]byte(`{"NotBounced":7}`)))
	assert.Equal(t, 7, c.NotBounced)
}

func TestSpamComplaintStatsDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want sendloop.SpamComplaintStats
	}{
		{"empty", `[]`, sendloop.SpamComplaintStats{}},
		{"null", `null`, sendloop.SpamComplaintStats{}},
		{"daily series", `{"2026-01-02":{"Total":2,"Unique":1},"2026-01-01":{"Total":"1","Unique":"1"}}`,
			sendloop.SpamComplaintStats{Days: dailyActivity(t, "2026-01-01", 1, 1, "2026-01-02", 2, 1), Total: 3, Unique: 2}},
		{"daily counts", `{"2026-01-01":4}`, sendloop.SpamComplaintStats{Days: dailyActivity(t, "2026-01-01", 4, 0), Total: 4}},
		{"overall members", `{"Total":"9","Unique":4}`, sendloop.SpamComplaintStats{Total: 9, Unique: 4}},
		{"overall and days", `{"TotalSPAMComplaints":5,"2026-01-01":{"Total":2,"Unique":2},"Chart":"x"}`,
			sendloop.SpamComplaintStats{Days: dailyActivity(t, "2026-01-01", 2, 2), Total: 5, Unique: 2}},
		{"bare count", `"3"`, sendloop.SpamComplaintStats{Total: 3}},
		{"pairs", `[["a@example.com","2026-01-01 10:00:00"],["A@example.com","2026-01-01 11:00:00"],["b@example.com","2026-01-03 09:00:00"]]`,
			sendloop.SpamComplaintStats{Days: dailyActivity(t, "2026-01-01", 2, 2, "2026-01-03", 1, 1), Total: 3, Unique: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s sendloop.SpamComplaintStats
			require.NoError(t, s.UnmarshalJSON([]byte(tt.in)))
			assert.Equal(t, tt.want, s)
		})
	}
	var s sendloop.SpamComplaintStats
	assert.Error(t, s.UnmarshalJSON([]byte(`[["a@example.com","not a date"]]`)))
	assert.Error(t, s.UnmarshalJSON([]byte(`{"Total":"lots"}`)))
}

func TestOverallReportsDecoding(t *testing.T) {
	t.Parallel()
	var l sendloop.ListOverallReport
	require.NoError(t, l.UnmarshalJSON([]byte(`{"OpenPerformance":"12.5%","OpenAvg":"3","OpenPerformanceRate":0.25,`+
		`"LinkPerformance":"","LinkAvg":null,"LinkPerformanceRate":"1.5 %","HighestOpenRateDay":"Tuesday",`+
		`"HighestLinkRateDay":"2026-01-01","TotalSPAMComplaints":"4","Extra":[1]}`)))
	assert.Equal(t, sendloop.ListOverallReport{OpenPerformance: 12.5, OpenAvg: 3, OpenPerformanceRate: 0.25,
		LinkPerformanceRate: 1.5, HighestOpenRateDay: "Tuesday", HighestLinkRateDay: "2026-01-01", TotalSPAMComplaints: 4}, l)

	var c sendloop.CampaignOverallReport
	require.NoError(t, c.UnmarshalJSON([]byte(`{"TotalRecipients":"10","TotalDelivered":9,"TotalDeliveredRatio":"90%",`+
		`"UniqueOpens":"4","UniqueOpensRatio":"44.44","DeliveredRate":"-1.5"}`)))
	assert.Equal(t, sendloop.CampaignOverallReport{TotalRecipients: 10, TotalDelivered: 9, TotalDeliveredRatio: 90,
		UniqueOpens: 4, UniqueOpensRatio: 44.44, DeliveredRate: -1.5}, c)
	assert.Error(t, c.UnmarshalJSON([]byte(`{"UniqueOpens":"4.5"}`)), "a count is whole")
}

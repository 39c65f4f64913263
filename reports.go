package sendloop

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// ReportsService reads list and campaign statistics (report.*).
//
// Every report answers with a Statistics member, decoded into the method's type. The
// service computes the opens, forwards, open locations, email clients, bounces and spam
// complaints reports over the first 20 days after the campaign's delivery date; the others
// cover the whole campaign.
type ReportsService service

// ListOverallReport is the statistics of report.list.overall. The specification names the
// members without defining them or giving their units: counts are whole numbers, the rest
// are kept as float64 as the service sends them (a trailing '%' is dropped, no scaling is
// done), and the two days are kept as the text the service sends.
//
//sendloop:decode
type ListOverallReport struct {
	OpenPerformance     float64 // the list's open performance, as the service computes it
	OpenAvg             float64 // the list's open average, as the service computes it
	OpenPerformanceRate float64 // the list's open performance rate; its scale is not shown
	LinkPerformance     float64 // the list's link (click) performance, as the service computes it
	LinkAvg             float64 // the list's link (click) average, as the service computes it
	LinkPerformanceRate float64 // the list's link (click) performance rate; its scale is not shown
	HighestOpenRateDay  string  // the day with the highest open rate, as sent; its format is not shown
	HighestLinkRateDay  string  // the day with the highest click rate, as sent; its format is not shown
	TotalSPAMComplaints int     // spam complaints about the list's campaigns
}

// CampaignOverallReport is the statistics of report.campaign.overall: counts as integers,
// ratios, rates and averages as float64 as the service sends them (a trailing '%' is
// dropped, no scaling is done: the specification does not say whether a ratio is a
// fraction or a percentage), and the two days as the text the service sends.
//
//sendloop:decode
type CampaignOverallReport struct {
	HighestOpenRateDay  string  // the day with the highest open rate, as sent; its format is not shown
	HighestLinkRateDay  string  // the day with the highest click rate, as sent; its format is not shown
	TotalRecipients     int     // recipients of the campaign
	TotalDelivered      int     // messages delivered
	TotalDeliveredRatio float64 // TotalDelivered as a ratio; its scale is not shown
	UniqueOpens         int     // recipients who opened
	UniqueOpensRatio    float64 // UniqueOpens as a ratio; its scale is not shown
	UniqueClicks        int     // recipients who clicked a link
	UniqueClicksRatio   float64 // UniqueClicks as a ratio; its scale is not shown
	LinkAvg             float64 // the link (click) average, as the service computes it
	OpenAvg             float64 // the open average, as the service computes it
	OpenPerformanceRate float64 // the open performance rate; its scale is not shown
	LinkPerformanceRate float64 // the link (click) performance rate; its scale is not shown
	DeliveredAvg        float64 // the delivered average, as the service computes it
	DeliveredRate       float64 // the delivered rate; its scale is not shown
	TotalSPAMComplaints int     // spam complaints about the campaign
}

// DailyActivity is one day of a campaign activity report: how many events (Total) and how many
// distinct recipients (Unique) that day.
type DailyActivity struct {
	Date   Date // the day, the report's key
	Total  int  // events that day; 0 where the report gives none (unsubscriptions)
	Unique int  // distinct recipients active that day; 0 when the report gives none
}

// DailySeries is a date → {Total, Unique} report, in ascending date order.
type DailySeries []DailyActivity

// Sum returns the series' totals: the sum of its Total and of its Unique counts. (A
// recipient active on two days counts twice in the second.)
func (s DailySeries) Sum() (total, unique int) {
	for _, d := range s {
		total += d.Total
		unique += d.Unique
	}
	return total, unique
}

// UnmarshalJSON decodes an object of date → {Total, Unique}. A member given as a bare
// number is taken as the day's Total; a day that comes twice is summed; the result is sorted
// by date. Keys may be dates or date-times (the time is dropped); other keys are an error.
// Hand-written: its keys are data (dates), not field names.
func (s *DailySeries) UnmarshalJSON(data []byte) error {
	var days []DailyActivity
	err := wire.ScanObject(data, func(key, v []byte) error {
		d, err := parseDayKey(key)
		if err != nil {
			return err
		}
		day := DailyActivity{Date: d}
		if day.Total, day.Unique, err = decodeDayCounts(v); err != nil {
			return err
		}
		days = append(days, day)
		return nil
	})
	if err != nil {
		return err
	}
	*s = mergeDays(days)
	return nil
}

func parseDayKey(key []byte) (Date, error) {
	t, err := wire.ParseDate(string(key))
	if err != nil {
		return Date{}, err
	}
	if t.IsZero() {
		return Date{}, fmt.Errorf("unset date %q as a report key", key)
	}
	return Date{t}, nil
}

// decodeDayCounts reads {Total, Unique} (either may be absent) or a bare count.
func decodeDayCounts(v []byte) (total, unique int, err error) {
	if !isContainer(v) {
		total, err = wire.Int(v)
		return total, 0, err
	}
	err = wire.ScanObject(v, func(key, n []byte) (err error) {
		switch string(key) {
		case "Total":
			total, err = wire.Int(n)
		case "Unique":
			unique, err = wire.Int(n)
		}
		return err
	})
	return total, unique, err
}

// mergeDays sorts days by date and sums the counts of a date that comes twice.
func mergeDays(days []DailyActivity) DailySeries {
	slices.SortStableFunc(days, func(a, b DailyActivity) int { return a.Date.Compare(b.Date.Time) })
	out := days[:0]
	for _, d := range days {
		if n := len(out); n > 0 && out[n-1].Date.Equal(d.Date.Time) {
			out[n-1].Total += d.Total
			out[n-1].Unique += d.Unique
			continue
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil
	}
	return DailySeries(out)
}

// GroupedCounts is a two-level count report: report.campaign.openlocations (country code →
// city → opens) and report.campaign.emailclients (client → version → opens).
type GroupedCounts map[string]map[string]int

// Total returns the sum of every count.
func (g GroupedCounts) Total() int {
	n := 0
	for _, inner := range g {
		for _, c := range inner {
			n += c
		}
	}
	return n
}

// UnmarshalJSON decodes an object of objects of counts. A group given a bare count instead
// of an object keeps it under the empty key ("" city or version); empty groups are kept.
// Hand-written: its keys are data (countries, clients), not field names.
func (g *GroupedCounts) UnmarshalJSON(data []byte) error {
	out := GroupedCounts{}
	err := wire.ScanObject(data, func(outer, v []byte) error {
		name := string(outer)
		inner := out[name]
		if inner == nil {
			inner = map[string]int{}
			out[name] = inner
		}
		if !isContainer(v) {
			n, err := wire.Int(v)
			inner[""] += n
			return err
		}
		return wire.ScanObject(v, func(key, c []byte) error {
			n, err := wire.Int(c)
			inner[string(key)] += n
			return err
		})
	})
	if err != nil {
		return err
	}
	*g = out
	return nil
}

// BounceCounts is the statistics of report.campaign.bounces.
//
//sendloop:decode
type BounceCounts struct {
	Hard       int // hard bounces
	Soft       int // soft bounces
	NotBounced int `wire:"Not Bounced|NotBounced"` // the wire's 'Not Bounced'
}

// SpamComplaintStats is the statistics of report.campaign.spamcomplaints, whose shape the
// specification does not show.
type SpamComplaintStats struct {
	// Days holds the complaints per date, when the service gives dates.
	Days DailySeries
	// Total is the complaints over the window: as the service gives it, or else summed
	// over Days.
	Total int
	// Unique is the complaining recipients over the window: as the service gives it, or
	// else summed over Days (or, from [address, date-time] pairs, the distinct addresses).
	Unique int
}

// UnmarshalJSON decodes the report tolerantly. It accepts:
//   - an object of date → {Total, Unique} or date → count (the shape of the other daily
//     reports, and the one sendlooptest answers with);
//   - overall members in the same object: Total (or TotalSPAMComplaints, TotalSpamComplaints)
//     and Unique; other members that are not dates are ignored;
//   - a bare count, taken as Total;
//   - an array of [email address, date-time] pairs, as export.spamcomplaints sends them:
//     each pair is a complaint, Unique counts distinct addresses;
//   - [], {}, "" and null as no complaints.
//
// Hand-written: the shape itself is not known, and several are accepted.
func (st *SpamComplaintStats) UnmarshalJSON(data []byte) error {
	*st = SpamComplaintStats{}
	v := trimLeft(data)
	switch {
	case len(v) > 0 && v[0] == '[':
		return st.fromPairs(v)
	case !isContainer(v):
		n, err := wire.Int(v)
		st.Total = n
		return err
	}
	var days []DailyActivity
	haveTotal, haveUnique := false, false
	err := wire.ScanObject(v, func(key, value []byte) (err error) {
		switch strings.ToLower(string(key)) {
		case "total", "totalspamcomplaints":
			haveTotal = true
			st.Total, err = wire.Int(value)
			return err
		case "unique":
			haveUnique = true
			st.Unique, err = wire.Int(value)
			return err
		}
		d, derr := parseDayKey(key)
		if derr != nil {
			return nil // not a date: a member this package does not know
		}
		day := DailyActivity{Date: d}
		day.Total, day.Unique, err = decodeDayCounts(value)
		days = append(days, day)
		return err
	})
	if err != nil {
		return err
	}
	st.Days = mergeDays(days)
	total, unique := st.Days.Sum()
	if !haveTotal {
		st.Total = total
	}
	if !haveUnique {
		st.Unique = unique
	}
	return nil
}

func (st *SpamComplaintStats) fromPairs(data []byte) error {
	var days []DailyActivity
	seen := map[string]bool{}
	err := wire.ScanArray(data, func(elem []byte) error {
		c, err := decodeSpamComplaint(elem)
		if err != nil {
			return err
		}
		st.Total++
		addr := strings.ToLower(c.EmailAddress)
		if !seen[addr] {
			seen[addr] = true
			st.Unique++
		}
		if !c.Date.IsZero() {
			days = append(days, DailyActivity{Date: NewDate(c.Date.Time), Total: 1, Unique: 1})
		}
		return nil
	})
	st.Days = mergeDays(days)
	return err
}

// ListOverall returns a list's overall statistics (report.list.overall).
func (s *ReportsService) ListOverall(ctx context.Context, listID int) (*ListOverallReport, error) {
	r := new(ListOverallReport)
	if err := s.statistics(ctx, commands.ReportListOverall, "ListID", listID, r.UnmarshalJSON); err != nil {
		return nil, err
	}
	return r, nil
}

// CampaignOverall returns a campaign's overall statistics (report.campaign.overall).
func (s *ReportsService) CampaignOverall(ctx context.Context, campaignID int) (*CampaignOverallReport, error) {
	r := new(CampaignOverallReport)
	if err := s.statistics(ctx, commands.ReportCampaignOverall, "CampaignID", campaignID, r.UnmarshalJSON); err != nil {
		return nil, err
	}
	return r, nil
}

// CampaignBrowserViews returns the campaign's views in a web browser per day
// (report.campaign.webbrowserviews).
func (s *ReportsService) CampaignBrowserViews(ctx context.Context, campaignID int) (DailySeries, error) {
	return s.series(ctx, commands.ReportCampaignWebBrowserViews, campaignID)
}

// CampaignUnsubscriptions returns the campaign's unsubscriptions per day
// (report.campaign.unsubscriptions). The service reports Unique only: Total is 0.
func (s *ReportsService) CampaignUnsubscriptions(ctx context.Context, campaignID int) (DailySeries, error) {
	return s.series(ctx, commands.ReportCampaignUnsubscriptions, campaignID)
}

// CampaignOpens returns the campaign's opens per day over the first 20 days after delivery
// (report.campaign.opens).
func (s *ReportsService) CampaignOpens(ctx context.Context, campaignID int) (DailySeries, error) {
	return s.series(ctx, commands.ReportCampaignOpens, campaignID)
}

// CampaignForwards returns the campaign's forwards per day over the first 20 days after
// delivery (report.campaign.forwards).
func (s *ReportsService) CampaignForwards(ctx context.Context, campaignID int) (DailySeries, error) {
	return s.series(ctx, commands.ReportCampaignForwards, campaignID)
}

// CampaignOpenLocations returns the campaign's opens by country code and city over the
// first 20 days after delivery (report.campaign.openlocations).
func (s *ReportsService) CampaignOpenLocations(ctx context.Context, campaignID int) (GroupedCounts, error) {
	var g GroupedCounts
	if err := s.statistics(ctx, commands.ReportCampaignOpenLocations, "CampaignID", campaignID, g.UnmarshalJSON); err != nil {
		return nil, err
	}
	return g, nil
}

// CampaignEmailClients returns the campaign's opens by email client and version over the
// first 20 days after delivery (report.campaign.emailclients).
func (s *ReportsService) CampaignEmailClients(ctx context.Context, campaignID int) (GroupedCounts, error) {
	var g GroupedCounts
	if err := s.statistics(ctx, commands.ReportCampaignEmailClients, "CampaignID", campaignID, g.UnmarshalJSON); err != nil {
		return nil, err
	}
	return g, nil
}

// CampaignBounces returns the campaign's hard, soft and non-bounced counts over the first 20
// days after delivery (report.campaign.bounces).
func (s *ReportsService) CampaignBounces(ctx context.Context, campaignID int) (*BounceCounts, error) {
	b := new(BounceCounts)
	if err := s.statistics(ctx, commands.ReportCampaignBounces, "CampaignID", campaignID, b.UnmarshalJSON); err != nil {
		return nil, err
	}
	return b, nil
}

// CampaignSpamComplaints returns the campaign's spam complaints over the first 20 days
// after delivery (report.campaign.spamcomplaints). The specification does not show the
// answer's shape; SpamComplaintStats.UnmarshalJSON lists what is accepted.
func (s *ReportsService) CampaignSpamComplaints(ctx context.Context, campaignID int) (*SpamComplaintStats, error) {
	st := new(SpamComplaintStats)
	if err := s.statistics(ctx, commands.ReportCampaignSpamComplaints, "CampaignID", campaignID, st.UnmarshalJSON); err != nil {
		return nil, err
	}
	return st, nil
}

func (s *ReportsService) series(ctx context.Context, command string, campaignID int) (DailySeries, error) {
	var out DailySeries
	if err := s.statistics(ctx, command, "CampaignID", campaignID, out.UnmarshalJSON); err != nil {
		return nil, err
	}
	return out, nil
}

// statistics sends a report command for one ID and decodes its Statistics member.
func (s *ReportsService) statistics(ctx context.Context, command, field string, id int, decode func([]byte) error) error {
	form, err := idForm(command, field, id)
	if err != nil {
		return err
	}
	return s.client.do(ctx, &apiCall{command: command, form: form}, func(key, value []byte) error {
		if string(key) == "Statistics" {
			return decode(value)
		}
		return nil
	})
}

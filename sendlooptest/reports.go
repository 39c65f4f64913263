package sendlooptest

import (
	"math"
	"slices"
	"strconv"
	"strings"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// reportWindowDays is how many days after the delivery date the windowed reports cover.
const reportWindowDays = 20

// Paging of the data.campaign.* commands.
const (
	dataDefaultLimit = 10
	dataMaxLimit     = 50
)

// activityCounts holds per-kind totals and distinct recipients.
type activityCounts struct {
	total, unique map[CampaignEventKind]int
}

func countActivity(events []*activity) activityCounts {
	n := activityCounts{total: map[CampaignEventKind]int{}, unique: map[CampaignEventKind]int{}}
	seen := map[CampaignEventKind]map[*subscriber]bool{}
	for _, a := range events {
		n.total[a.Kind]++
		if seen[a.Kind] == nil {
			seen[a.Kind] = map[*subscriber]bool{}
		}
		if !seen[a.Kind][a.sub] {
			seen[a.Kind][a.sub] = true
			n.unique[a.Kind]++
		}
	}
	return n
}

func (st *state) campaignCounts(camp *campaign) activityCounts {
	return countActivity(st.activityOf(camp.ID, knownEventKinds...))
}

// dailySeries writes date → {Total, Unique}, or with uniqueOnly date → {Unique}.
func dailySeries(events []*activity, uniqueOnly bool) object {
	var out object
	var dates []string
	byDate := map[string][]*activity{}
	for _, a := range events {
		d := a.at.UTC().Format(dateLayout)
		if byDate[d] == nil {
			dates = append(dates, d)
		}
		byDate[d] = append(byDate[d], a)
	}
	for _, d := range dates {
		n := countActivity(byDate[d])
		kind := byDate[d][0].Kind
		if uniqueOnly {
			out = append(out, member{d, object{{"Unique", n.unique[kind]}}})
		} else {
			out = append(out, member{d, object{{"Total", n.total[kind]}, {"Unique", n.unique[kind]}}})
		}
	}
	return out
}

// groupedCounts writes outer → inner → count, in first-seen order.
func groupedCounts(events []*activity, keys func(*activity) (outer, inner string, ok bool)) object {
	var out object
	index := map[string]int{}
	for _, a := range events {
		o, in, ok := keys(a)
		if !ok {
			continue
		}
		i, seen := index[o]
		if !seen {
			i = len(out)
			index[o] = i
			out = append(out, member{o, object{}})
		}
		inner := out[i].Value.(object)
		j := slices.IndexFunc(inner, func(m member) bool { return m.Key == in })
		if j < 0 {
			inner = append(inner, member{in, 0})
			j = len(inner) - 1
		}
		inner[j].Value = inner[j].Value.(int) + 1
		out[i].Value = inner
	}
	return out
}

// percent returns part/whole as a percentage rounded to two decimals; 0 when whole is 0.
func percent(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return round2(float64(part) * 100 / float64(whole))
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// busiestDate returns the day (formatted by layout: a date, or a weekday with "Monday")
// with the most events, the first seen on a tie, or "" without events.
func busiestDate(events []*activity, layout string) string {
	counts := map[string]int{}
	var order []string
	for _, a := range events {
		k := a.at.UTC().Format(layout)
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	best := ""
	for _, k := range order {
		if counts[k] > counts[best] {
			best = k
		}
	}
	return best
}

// sorted returns the campaigns by ascending ID, so that sums come out the same every time.
func (cs *campaigns) sorted() []*campaign {
	out := make([]*campaign, 0, len(cs.byID))
	for _, camp := range cs.byID {
		out = append(out, camp)
	}
	slices.SortFunc(out, func(a, b *campaign) int { return a.ID - b.ID })
	return out
}

// reportsHandlers are the handlers of reports commands; dispatch pairs them with the command table.
var reportsHandlers = map[string]handler{
	cmdtable.ReportListOverall:     reportListOverall,
	cmdtable.ReportCampaignOverall: reportCampaignOverall,
	cmdtable.ReportCampaignWebBrowserViews: campaignReport(func(camp *campaign, st *state) any {
		return dailySeries(st.activityOf(camp.ID, EventBrowserView), false)
	}),
	cmdtable.ReportCampaignUnsubscriptions: campaignReport(func(camp *campaign, st *state) any {
		return dailySeries(st.activityOf(camp.ID, EventUnsubscription), true)
	}),
	cmdtable.ReportCampaignOpens: campaignReport(func(camp *campaign, st *state) any {
		return dailySeries(camp.windowed(st.activityOf(camp.ID, EventOpen)), false)
	}),
	cmdtable.ReportCampaignForwards: campaignReport(func(camp *campaign, st *state) any {
		return dailySeries(camp.windowed(st.activityOf(camp.ID, EventForward)), false)
	}),
	cmdtable.ReportCampaignSpamComplaints: campaignReport(func(camp *campaign, st *state) any {
		return dailySeries(camp.windowed(st.activityOf(camp.ID, EventSpamComplaint)), false)
	}),
	cmdtable.ReportCampaignOpenLocations: campaignReport(func(camp *campaign, st *state) any {
		return groupedCounts(camp.windowed(st.activityOf(camp.ID, EventOpen)), func(a *activity) (string, string, bool) {
			return a.Country, a.City, a.Country != ""
		})
	}),
	cmdtable.ReportCampaignEmailClients: campaignReport(func(camp *campaign, st *state) any {
		return groupedCounts(camp.windowed(st.activityOf(camp.ID, EventOpen)), func(a *activity) (string, string, bool) {
			return a.EmailClient, a.ClientVersion, a.EmailClient != ""
		})
	}),
	cmdtable.ReportCampaignBounces: campaignReport(func(camp *campaign, st *state) any {
		n := countActivity(camp.windowed(st.activityOf(camp.ID, EventHardBounce, EventSoftBounce)))
		bounced := map[*subscriber]bool{}
		for _, a := range camp.windowed(st.activityOf(camp.ID, EventHardBounce, EventSoftBounce)) {
			bounced[a.sub] = true
		}
		return object{{"Hard", n.unique[EventHardBounce]}, {"Soft", n.unique[EventSoftBounce]},
			{"Not Bounced", len(camp.recipients) - len(bounced)}}
	}),
	cmdtable.DataCampaignUnsubscriptions: campaignData(EventUnsubscription, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"UnsubscriptionDate", a.at.UTC().Format(dateTimeLayout)}, {"Channel", a.Channel}}
	}),
	cmdtable.DataCampaignOpenLocations: campaignData(EventOpen, func(a *activity) object {
		if a.Country == "" {
			return nil
		}
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"DetectionDate", a.at.UTC().Format(dateTimeLayout)},
			{"CountryCode", a.Country}, {"City", a.City},
			{"Latitude", strconv.FormatFloat(a.Latitude, 'f', -1, 64)},
			{"Longtitude", strconv.FormatFloat(a.Longitude, 'f', -1, 64)}, // the service's spelling
			{"ContentCode", a.ContentCode}}
	}),
	// data.campaign.emailopens and data.campaign.linkclicks exist on the real service, not
	// in the specification's tables; their keys are not published: these are the fake's.
	cmdtable.DataCampaignEmailOpens: campaignData(EventOpen, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"OpenDate", a.at.UTC().Format(dateTimeLayout)}}
	}),
	cmdtable.DataCampaignLinkClicks: campaignData(EventClick, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"ClickDate", a.at.UTC().Format(dateTimeLayout)}, {"Link", a.Link}}
	}),
	cmdtable.DataCampaignForwards: campaignData(EventForward, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"ForwardDate", a.at.UTC().Format(dateTimeLayout)}}
	}),
	cmdtable.DataCampaignBrowserViews: campaignData(EventBrowserView, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"ViewDate", a.at.UTC().Format(dateTimeLayout)}}
	}),
	cmdtable.DataCampaignBounces: campaignData(EventHardBounce, func(a *activity) object {
		return object{{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"ListID", strconv.Itoa(a.listID)},
			{"BounceType", bounceName(a.Kind)}, {"BounceDate", a.at.UTC().Format(dateTimeLayout)}}
	}, EventSoftBounce),
}

func bounceName(k CampaignEventKind) string {
	if k == EventHardBounce {
		return "Hard"
	}
	return "Soft"
}

// campaignReport answers {Statistics: stats(campaign)}; 106 for an unknown campaign.
func campaignReport(stats func(camp *campaign, st *state) any) handler {
	return func(c *call) (object, *apiError) {
		camp, apiErr := c.findCampaign()
		if apiErr != nil {
			return nil, apiErr
		}
		v := stats(camp, c.st)
		if o, isObject := v.(object); isObject && o == nil {
			v = object{} // written as [], as PHP does for an empty array
		}
		return object{{"Statistics", v}}, nil
	}
}

// dataPage reads Limit (default 10, 1 to 50) and Page (default 1); 116 otherwise.
func (c *call) dataPage() (limit, page int, apiErr *apiError) {
	limit, page = dataDefaultLimit, 1
	if v := strings.TrimSpace(c.form.Get("Limit")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > dataMaxLimit {
			return 0, 0, invalidValue("Limit")
		}
		limit = n
	}
	if v := strings.TrimSpace(c.form.Get("Page")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, 0, invalidValue("Page")
		}
		page = n
	}
	return limit, page, nil
}

// campaignData answers one page of a campaign's events of the given kinds, all time, oldest
// first; write returns nil for an event that is not a record of this command.
func campaignData(kind CampaignEventKind, write func(*activity) object, more ...CampaignEventKind) handler {
	return func(c *call) (object, *apiError) {
		camp, apiErr := c.findCampaign()
		if apiErr != nil {
			return nil, apiErr
		}
		limit, page, apiErr := c.dataPage()
		if apiErr != nil {
			return nil, apiErr
		}
		var records []object
		for _, a := range c.st.activityOf(camp.ID, append([]CampaignEventKind{kind}, more...)...) {
			if r := write(a); r != nil {
				records = append(records, r)
			}
		}
		start := len(records)
		if page-1 < len(records)/limit+1 { // beyond that the product could overflow
			start = min((page-1)*limit, len(records))
		}
		end := min(start+limit, len(records))
		return object{{"Data", append([]object{}, records[start:end]...)}}, nil
	}
}

func reportCampaignOverall(c *call) (object, *apiError) {
	camp, apiErr := c.findCampaign()
	if apiErr != nil {
		return nil, apiErr
	}
	st := c.st
	r := st.campaignRates(camp)
	opens := st.activityOf(camp.ID, EventOpen)
	clicks := st.activityOf(camp.ID, EventClick)
	// The account's averages over its delivered campaigns.
	var openAvg, linkAvg, deliveredAvg float64
	var delivered int
	for _, other := range st.campaigns.sorted() {
		if other.deliveredAt.IsZero() {
			continue
		}
		o := st.campaignRates(other)
		openAvg += o.opens
		linkAvg += o.clicks
		deliveredAvg += o.delivered
		delivered++
	}
	if delivered > 0 {
		openAvg = round2(openAvg / float64(delivered))
		linkAvg = round2(linkAvg / float64(delivered))
		deliveredAvg = round2(deliveredAvg / float64(delivered))
	}
	n := st.campaignCounts(camp)
	openRate, linkRate, deliveredRate := round2(r.opens-openAvg), round2(r.clicks-linkAvg), round2(r.delivered-deliveredAvg)
	if camp.deliveredAt.IsZero() {
		openRate, linkRate, deliveredRate = 0, 0, 0 // a draft has no performance to compare
	}
	return object{{"Statistics", object{
		{"HighestOpenRateDay", busiestDate(opens, dateLayout)},
		{"HighestLinkRateDay", busiestDate(clicks, dateLayout)},
		{"TotalRecipients", len(camp.recipients)},
		{"TotalDelivered", r.deliveredCount},
		{"TotalDeliveredRatio", r.delivered},
		{"UniqueOpens", n.unique[EventOpen]},
		{"UniqueOpensRatio", r.opens},
		{"UniqueClicks", n.unique[EventClick]},
		{"UniqueClicksRatio", r.clicks},
		{"LinkAvg", linkAvg},
		{"OpenAvg", openAvg},
		{"OpenPerformanceRate", openRate},
		{"LinkPerformanceRate", linkRate},
		{"DeliveredAvg", deliveredAvg},
		{"DeliveredRate", deliveredRate},
		{"TotalSPAMComplaints", n.total[EventSpamComplaint]},
	}}}, nil
}

// campaignRates holds a campaign's delivered count and its delivery, unique open and unique
// click ratios (percentages of recipients, then of delivered messages).
type campaignRates struct {
	deliveredCount           int
	delivered, opens, clicks float64
}

func (st *state) campaignRates(camp *campaign) campaignRates {
	n := st.campaignCounts(camp)
	bounced := map[*subscriber]bool{}
	for _, a := range st.activityOf(camp.ID, EventHardBounce, EventSoftBounce) {
		bounced[a.sub] = true
	}
	d := len(camp.recipients) - len(bounced)
	return campaignRates{deliveredCount: d, delivered: percent(d, len(camp.recipients)),
		opens: percent(n.unique[EventOpen], d), clicks: percent(n.unique[EventClick], d)}
}

// reportListOverall sums, over the delivered campaigns, what the list's recipients did.
func reportListOverall(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	st := c.st
	deliveries, campaignsReached := 0, 0
	for _, camp := range st.campaigns.sorted() {
		n := 0
		for _, sub := range camp.recipients {
			if sub.list == l {
				n++
			}
		}
		deliveries += n
		if n > 0 {
			campaignsReached++
		}
	}
	var opens, clicks, complaints []*activity
	uniqueOpens, uniqueClicks := 0, 0
	for _, a := range st.activityOf(0, EventOpen, EventClick, EventSpamComplaint) {
		if a.listID != l.ID || st.campaigns.byID[a.CampaignID] == nil {
			continue
		}
		switch a.Kind {
		case EventOpen:
			opens = append(opens, a)
		case EventClick:
			clicks = append(clicks, a)
		default:
			complaints = append(complaints, a)
		}
	}
	// Unique per campaign: a recipient opening two campaigns counts twice.
	for _, camp := range st.campaigns.sorted() {
		uniqueOpens += countActivity(filterCampaign(opens, camp.ID)).unique[EventOpen]
		uniqueClicks += countActivity(filterCampaign(clicks, camp.ID)).unique[EventClick]
	}
	avg := func(n int) float64 {
		if campaignsReached == 0 {
			return 0
		}
		return round2(float64(n) / float64(campaignsReached))
	}
	return object{{"Statistics", object{
		{"OpenPerformance", uniqueOpens},
		{"OpenAvg", avg(uniqueOpens)},
		{"OpenPerformanceRate", percent(uniqueOpens, deliveries)},
		{"LinkPerformance", uniqueClicks},
		{"LinkAvg", avg(uniqueClicks)},
		{"LinkPerformanceRate", percent(uniqueClicks, deliveries)},
		{"HighestOpenRateDay", busiestDate(opens, "Monday")},
		{"HighestLinkRateDay", busiestDate(clicks, "Monday")},
		{"TotalSPAMComplaints", len(complaints)},
	}}}, nil
}

func filterCampaign(events []*activity, campaignID int) []*activity {
	var out []*activity
	for _, a := range events {
		if a.CampaignID == campaignID {
			out = append(out, a)
		}
	}
	return out
}

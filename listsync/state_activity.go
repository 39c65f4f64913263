package listsync

import (
	"context"
	"fmt"
	"time"

	"github.com/go-sendloop/sendloop/legacy"
)

// activitySlack is how many days before today a run's activity base starts, and how many
// after today its chart reaches: the service dates its activity in the account's time
// zone, which may be a day off UTC.
const activitySlack = 2

// chartDay is the layout of the chart's days.
const chartDay = "2006-01-02"

// activityReading is what a run read of the list's activity chart.
type activityReading struct {
	// Subs and Unsubs count the subscriptions and unsubscriptions since the state's base
	// (measured only when the state has one).
	Subs, Unsubs int
	measured     bool
	// base is the next state's base: the counts from a day shortly before today, as read.
	base activityBase
	// tooOld says the chart did not reach back to the state's base ("" when it did).
	tooOld string
}

// gross is the changes the chart saw since the state: each subscription and each
// unsubscription, so that one offset by the other still counts.
func (a activityReading) gross() int { return abs(a.Subs) + abs(a.Unsubs) }

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// readActivity reads the list's activity chart (the legacy Chart.ListActivity, one call)
// from the state's base day, or from shortly before today when it has none, through
// tomorrow. A chart that does not reach back to the base (fewer days than asked) says so
// in tooOld: the state is older than the window the service reports.
func (st *stateRun) readActivity(ctx context.Context, j *Job, base activityBase) (activityReading, error) {
	var out activityReading
	today := time.Date(st.now.UTC().Year(), st.now.UTC().Month(), st.now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	nextFrom := today.AddDate(0, 0, -activitySlack)
	from := nextFrom
	if base.From != "" {
		d, err := time.Parse(chartDay, base.From)
		if err == nil && !d.After(nextFrom) {
			from = d
		}
	}
	days := int(today.Sub(from)/(24*time.Hour)) + 1 + activitySlack
	if days > legacy.DefaultMaxChartDays {
		out.tooOld = fmt.Sprintf("the state's activity base (%s) is older than the %d days the service charts", base.From, legacy.DefaultMaxChartDays)
		return out, nil
	}
	chart, err := j.client.Legacy().ChartListActivity(ctx, j.listID, legacy.ChartListActivityParams{Start: from, Days: days})
	if err != nil {
		return out, fmt.Errorf("listsync: reading the list's activity (Chart.ListActivity): %w", err)
	}
	labels := chart.XAxis.Labels
	subs, unsubs := chart.Subscriptions().Points, chart.Unsubscriptions().Points
	if len(labels) == 0 || labels[0] != from.Format(chartDay) || len(subs) != len(labels) || len(unsubs) != len(labels) {
		first := "nothing"
		if len(labels) > 0 {
			first = labels[0]
		}
		out.tooOld = fmt.Sprintf("the service's activity chart starts at %s, after the state's base (%s)", first, from.Format(chartDay))
		return out, nil
	}
	var sumS, sumU int
	out.base.From = nextFrom.Format(chartDay)
	for i, day := range labels {
		s, u := int(subs[i].Value), int(unsubs[i].Value)
		sumS += s
		sumU += u
		if day >= out.base.From {
			out.base.Subs += uint64(s)
			out.base.Unsubs += uint64(u)
		}
	}
	if base.From != "" && base.From == from.Format(chartDay) {
		out.Subs, out.Unsubs = sumS-int(base.Subs), sumU-int(base.Unsubs)
		out.measured = true
	}
	return out, nil
}

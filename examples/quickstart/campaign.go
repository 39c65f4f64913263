package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// campaignTour creates a campaign for list listID, has the fake deliver it and record what
// its recipients did over a few days, and prints the campaign and its reports. It writes to
// the account, so without a fake (srv nil: a real account) it only says so.
func campaignTour(ctx context.Context, c *sendloop.Client, srv *sendlooptest.Server, listID int) error {
	if srv == nil {
		fmt.Println("(the campaign tour runs against the fake only: it writes)")
		return nil
	}
	id, err := c.Campaigns.Create(ctx, sendloop.CampaignCreateParams{
		CampaignName:  "Quickstart news",
		Subject:       "What's new this month",
		FromName:      "Dana at Example",
		FromEmail:     "dana@example.com",
		ReplyToName:   "Dana at Example",
		ReplyToEmail:  "dana@example.com",
		TargetListIDs: []int{listID},
		HTMLContent:   `<p>Hello %Subscriber:EmailAddress%!</p><p><a href="%Link:Unsubscribe%">Unsubscribe</a></p>`,
		PlainContent:  "Hello! Unsubscribe: %Link:Unsubscribe%",
	})
	if err != nil {
		return fmt.Errorf("creating a campaign: %w", err)
	}
	camp, err := c.Campaigns.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the campaign: %w", err)
	}
	fmt.Printf("campaign:    #%d %q, %s, to list #%d\n", camp.CampaignID, camp.CampaignName, camp.CampaignStatus, listID)

	// The fake plays the delivery and the recipients. What recipients did has happened by
	// now, so the delivery is dated three days ago (within the reports' 20-day window) and
	// the activity falls in those three days.
	day := 24 * time.Hour
	recipients, err := srv.SimulateSendAt(id, time.Now().Add(-3*day))
	if err != nil {
		return err
	}
	if len(recipients) == 0 {
		return fmt.Errorf("list #%d has no subscriber to send to", listID)
	}
	first, last := recipients[0], recipients[len(recipients)-1]
	err = srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: first, After: 20 * time.Minute,
			Country: "GB", City: "London", EmailClient: "Apple Mail", ClientVersion: "16"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventClick, Email: first, After: 25 * time.Minute, Link: "https://example.com/news"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: first, After: day + time.Hour,
			Country: "GB", City: "London", EmailClient: "Apple Mail", ClientVersion: "16"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: last, After: 2 * day,
			Country: "TR", City: "Istanbul", EmailClient: "Gmail"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventForward, Email: last, After: 2*day + time.Hour},
	)
	if err != nil {
		return err
	}

	camp, err = c.Campaigns.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the campaign: %w", err)
	}
	fmt.Printf("sent:        %s %s to %s, status %s\n", camp.SendDate, camp.SendTime, plural(camp.TotalRecipients, "recipient"), camp.CampaignStatus)

	report, err := c.Reports.CampaignOverall(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the report: %w", err)
	}
	fmt.Printf("report:      %d of %d delivered, %s (%.1f%%), %s (%.1f%%)\n",
		report.TotalDelivered, report.TotalRecipients, plural(report.UniqueOpens, "unique open"), report.UniqueOpensRatio,
		plural(report.UniqueClicks, "unique click"), report.UniqueClicksRatio)

	opens, err := c.Reports.CampaignOpens(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the opens: %w", err)
	}
	for _, d := range opens {
		fmt.Printf("opens:       %s: %d, from %s\n", d.Date, d.Total, plural(d.Unique, "recipient"))
	}
	locations, err := c.Reports.CampaignOpenLocations(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the open locations: %w", err)
	}
	countries := make([]string, 0, len(locations))
	for country := range locations {
		countries = append(countries, country)
	}
	sort.Strings(countries)
	for _, country := range countries {
		for city, n := range locations[country] {
			fmt.Printf("opened in:   %s, %s (%d)\n", city, country, n)
		}
	}
	return nil
}

// plural writes a count before its noun: "1 recipient", "2 recipients".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

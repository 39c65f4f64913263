package sendloop_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// exampleSendTime is when the examples' campaigns are delivered: Monday 2026-03-02 10:00 UTC,
// four weeks before the fake's clock, so that what their recipients did in those weeks has
// happened.
var exampleSendTime = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// exampleCampaignSetup starts a fake whose clock stands at Monday 2026-03-30 10:00 UTC and
// makes list 1 with n subscribers reader0@example.com, reader1@example.com, ….
func exampleCampaignSetup(n int) (*sendlooptest.Server, *sendloop.Client) {
	now := exampleSendTime.AddDate(0, 0, 28)
	srv := sendlooptest.NewServer(nil, sendlooptest.WithClock(func() time.Time { return now }))
	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	ctx := context.Background()
	_ = client.Call(ctx, "list.create", map[string]string{"Name": "Readers", "OptInMode": "Single"}, nil)
	for i := 0; i < n; i++ {
		_ = client.Call(ctx, "subscriber.subscribe", map[string]string{"ListID": "1",
			"EmailAddress": "reader" + strconv.Itoa(i) + "@example.com", "SubscriptionIP": "192.0.2.1"}, nil)
	}
	return srv, client
}

func ExampleCampaignsService_Create() {
	srv, client := exampleCampaignSetup(2)
	defer srv.Close()
	ctx := context.Background()

	campaign := sendloop.CampaignCreateParams{
		CampaignName: "March news", Subject: "What's new in March",
		FromName: "Dana at Example", FromEmail: "dana@example.com",
		ReplyToName: "Dana at Example", ReplyToEmail: "dana@example.com",
		HTMLContent: `<p>Hello!</p><p><a href="%Link:Unsubscribe%">Unsubscribe</a></p>`,
	}
	// No target list: refused before anything is sent.
	_, err := client.Campaigns.Create(ctx, campaign)
	fmt.Println(errors.Is(err, sendloop.ErrNoTargets))

	campaign.TargetListIDs = []int{1}
	id, err := client.Campaigns.Create(ctx, campaign)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.Campaigns.Get(ctx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.CampaignID, c.CampaignName, c.CampaignStatus)
	// Output:
	// true
	// 1 March news Draft
}

func ExampleReportsService_CampaignOpens() {
	srv, client := exampleCampaignSetup(3)
	defer srv.Close()
	ctx := context.Background()

	id, _ := client.Campaigns.CreateV2(ctx, sendloop.CampaignCreateV2Params{
		Name: "Launch", Subject: "We launched", FromName: "Dana", FromEmail: "dana@example.com",
		ReplyToName: "Dana", ReplyToEmail: "dana@example.com",
		Recipients:   []sendloop.Recipient{{ListID: 1}},
		PlainContent: "We launched! Unsubscribe: %Link:Unsubscribe%",
	})
	// The fake delivers the campaign four weeks ago and records opens: two on the first
	// day, one on the third, and one 25 days later, past the report's 20-day window.
	readers, _ := srv.SimulateSendAt(id, exampleSendTime)
	day := 24 * time.Hour
	_ = srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: readers[0], After: time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: readers[0], After: 3 * time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: readers[1], After: 2 * day},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: readers[2], After: 25 * day},
	)

	opens, err := client.Reports.CampaignOpens(ctx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range opens {
		fmt.Printf("%s total %d unique %d\n", d.Date, d.Total, d.Unique)
	}
	overall, _ := client.Reports.CampaignOverall(ctx, id)
	fmt.Printf("unique opens %d of %d (%.2f%%)\n", overall.UniqueOpens, overall.TotalRecipients, overall.UniqueOpensRatio)
	// Output:
	// 2026-03-02 total 2 unique 1
	// 2026-03-04 total 1 unique 1
	// unique opens 3 of 3 (100.00%)
}

func ExampleCampaignDataService_BrowserViewsIter() {
	srv, client := exampleCampaignSetup(12)
	defer srv.Close()
	ctx := context.Background()

	c := sendloop.CampaignCreateParams{CampaignName: "Digest", Subject: "Digest", FromName: "Dana", FromEmail: "dana@example.com",
		ReplyToName: "Dana", ReplyToEmail: "dana@example.com", TargetListIDs: []int{1},
		PlainContent: "Digest. Unsubscribe: %Link:Unsubscribe%"}
	id, _ := client.Campaigns.Create(ctx, c)
	readers, _ := srv.SimulateSendAt(id, exampleSendTime)
	for i, r := range readers {
		_ = srv.SimulateEvents(id, sendlooptest.CampaignEvent{Kind: sendlooptest.EventBrowserView, Email: r, After: time.Duration(i) * time.Minute})
	}

	// Five records a page: the iterator fetches pages 1, 2 and 3 (a short one) by itself.
	n := 0
	for view, err := range client.CampaignData.BrowserViewsIter(ctx, id, sendloop.CampaignDataParams{Limit: 5}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		if n == 1 {
			fmt.Println("first:", view.SubscriberID, view.ViewDate)
		}
	}
	fmt.Println("views:", n)
	// Output:
	// first: 1 2026-03-02 10:00:00
	// views: 12
}

func ExamplePeopleService_Track() {
	srv, client := exampleCampaignSetup(0)
	defer srv.Close()
	ctx := context.Background()

	err := client.People.Track(ctx, "user-7", sendloop.PersonTrackParams{Email: "ann@example.com", Extra: map[string]string{"plan": "pro"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := client.People.Get(ctx, "user-7")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.UserID, p.EmailAddress, p.Sessions, p.Extra["plan"], p.EntryDate)
	// Output: user-7 ann@example.com 1 pro 2026-03-30 10:00:00
}

func ExampleExportsService_Bounces() {
	srv, client := exampleCampaignSetup(2)
	defer srv.Close()
	ctx := context.Background()

	c := sendloop.CampaignCreateParams{CampaignName: "Notice", Subject: "Notice", FromName: "Dana", FromEmail: "dana@example.com",
		ReplyToName: "Dana", ReplyToEmail: "dana@example.com", TargetListIDs: []int{1},
		PlainContent: "Notice. Unsubscribe: %Link:Unsubscribe%"}
	id, _ := client.Campaigns.Create(ctx, c)
	readers, _ := srv.SimulateSendAt(id, exampleSendTime)
	_ = srv.SimulateEvents(id, sendlooptest.CampaignEvent{Kind: sendlooptest.EventHardBounce, Email: readers[1], After: time.Minute})

	// BounceType must be hard or soft: anything else is refused before sending.
	_, err := client.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: sendloop.BounceNone})
	fmt.Println(errors.Is(err, sendloop.ErrInvalidBounceType))

	bounces, _ := client.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: sendloop.BounceHard})
	for _, b := range bounces {
		fmt.Println(b.EmailAddress, b.BounceType, b.DetectionDate)
	}
	// Output:
	// true
	// reader1@example.com Hard 2026-03-02 10:01:00
}

// ExampleCampaignDataService_EmailOpens reads data.campaign.emailopens and
// data.campaign.linkclicks, which the real service answers though the specification's tables
// leave them out.
func ExampleCampaignDataService_EmailOpens() {
	srv, client := exampleCampaignSetup(2)
	defer srv.Close()
	ctx := context.Background()

	c := sendloop.CampaignCreateParams{CampaignName: "Digest", Subject: "Digest", FromName: "Dana", FromEmail: "dana@example.com",
		ReplyToName: "Dana", ReplyToEmail: "dana@example.com", TargetListIDs: []int{1},
		PlainContent: "Digest. Unsubscribe: %Link:Unsubscribe%"}
	id, _ := client.Campaigns.Create(ctx, c)
	readers, _ := srv.SimulateSendAt(id, exampleSendTime)
	_ = srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: readers[0], After: time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventClick, Email: readers[0], After: 2 * time.Hour, Link: "https://example.com/spring"},
	)

	opens, err := client.CampaignData.EmailOpens(ctx, id, sendloop.CampaignDataParams{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range opens {
		fmt.Println("open:", o.SubscriberID, o.OpenDate)
	}
	for click, err := range client.CampaignData.LinkClicksIter(ctx, id, sendloop.CampaignDataParams{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("click:", click.SubscriberID, click.ClickDate, click.Link)
	}
	// Output:
	// open: 1 2026-03-02 11:00:00
	// click: 1 2026-03-02 12:00:00 https://example.com/spring
}

package sendloop

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"math"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// CampaignDataService pages through a campaign's activity records (data.campaign.*).
//
// Each command returns one page of records (CampaignDataParams.Limit, at most 50); each
// method has an …Iter twin that walks every page. EmailOpens and LinkClicks reach two commands
// the real service answers though the specification does not list them.
type CampaignDataService service

// Page sizes of the data.campaign.* commands.
const (
	// DefaultDataLimit is the page size the service uses when Limit is not sent.
	DefaultDataLimit = 10
	// MaxDataLimit is the largest Limit the service accepts.
	MaxDataLimit = 50
)

// CampaignDataParams selects a page of a campaign's records.
type CampaignDataParams struct {
	// Limit is the page size: 0 for the service's default (10), at most MaxDataLimit (50).
	Limit int `url:"Limit,omitempty"`
	// Page is the page number, from 1; 0 for the service's default (1).
	Page int `url:"Page,omitempty"`
}

// validate refuses what the service would: a Limit over 50, a negative Limit or Page (116).
func (p CampaignDataParams) validate(command string) error {
	switch {
	case p.Limit < 0 || p.Limit > MaxDataLimit:
		return invalid(command, ErrInvalidParameterValue, "Limit", fmt.Sprintf("Limit %d is outside 1–%d", p.Limit, MaxDataLimit))
	case p.Page < 0 || p.Page > math.MaxInt32:
		return invalid(command, ErrInvalidParameterValue, "Page", fmt.Sprintf("Page %d is not a page number", p.Page))
	}
	return nil
}

// CampaignUnsubscription is a record of data.campaign.unsubscriptions.
//
//sendloop:decode
type CampaignUnsubscription struct {
	SubscriberID       int      // the subscriber who left
	ListID             int      // the list they left
	UnsubscriptionDate DateTime // when; a bare date is accepted, zero when unset
	Channel            string   `wire:",common=Link"` // how the recipient unsubscribed, as the service names it
}

// CampaignOpenLocation is a record of data.campaign.openlocations: where an open came from.
//
//sendloop:decode
type CampaignOpenLocation struct {
	SubscriberID  int      // the subscriber who opened
	DetectionDate DateTime // when the open was detected; zero when unset
	CountryCode   string   // the country's code, kept as sent
	City          string   // the city's name, kept as sent
	Latitude      float64  // the open's latitude, as sent
	// Longitude is the wire's Longtitude (spelled so by the service); both spellings are read.
	Longitude float64 `wire:"Longtitude|Longitude"`
	// ContentCode is kept as the service sends it; the specification does not say what it
	// holds.
	ContentCode string
}

// CampaignForward is a record of data.campaign.forwards.
//
//sendloop:decode
type CampaignForward struct {
	SubscriberID int      // the subscriber who forwarded
	ListID       int      // the subscriber's list
	ForwardDate  DateTime // when; zero when unset
}

// CampaignBrowserView is a record of data.campaign.browserviews: a view of the campaign in
// a web browser.
//
//sendloop:decode
type CampaignBrowserView struct {
	SubscriberID int      // the subscriber who viewed it
	ListID       int      // the subscriber's list
	ViewDate     DateTime // when; zero when unset
}

// CampaignBounce is a record of data.campaign.bounces.
//
//sendloop:decode
type CampaignBounce struct {
	SubscriberID int        // the subscriber whose message bounced
	ListID       int        // the subscriber's list
	BounceType   BounceType // BounceHard or BounceSoft; other values are kept as they come
	BounceDate   DateTime   // when; zero when unset
}

// Unsubscriptions returns one page of the campaign's unsubscriptions
// (data.campaign.unsubscriptions).
func (s *CampaignDataService) Unsubscriptions(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignUnsubscription, error) {
	return fetchData[CampaignUnsubscription](ctx, s.client, commands.DataCampaignUnsubscriptions, campaignID, p)
}

// UnsubscriptionsIter walks every page of the campaign's unsubscriptions from p.Page.
func (s *CampaignDataService) UnsubscriptionsIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignUnsubscription, error] {
	return iterData(ctx, commands.DataCampaignUnsubscriptions, campaignID, p, s.Unsubscriptions)
}

// OpenLocations returns one page of the campaign's open locations
// (data.campaign.openlocations).
func (s *CampaignDataService) OpenLocations(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignOpenLocation, error) {
	return fetchData[CampaignOpenLocation](ctx, s.client, commands.DataCampaignOpenLocations, campaignID, p)
}

// OpenLocationsIter walks every page of the campaign's open locations from p.Page.
func (s *CampaignDataService) OpenLocationsIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignOpenLocation, error] {
	return iterData(ctx, commands.DataCampaignOpenLocations, campaignID, p, s.OpenLocations)
}

// Forwards returns one page of the campaign's forwards (data.campaign.forwards).
func (s *CampaignDataService) Forwards(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignForward, error) {
	return fetchData[CampaignForward](ctx, s.client, commands.DataCampaignForwards, campaignID, p)
}

// ForwardsIter walks every page of the campaign's forwards from p.Page.
func (s *CampaignDataService) ForwardsIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignForward, error] {
	return iterData(ctx, commands.DataCampaignForwards, campaignID, p, s.Forwards)
}

// BrowserViews returns one page of the campaign's views in a web browser
// (data.campaign.browserviews).
func (s *CampaignDataService) BrowserViews(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignBrowserView, error) {
	return fetchData[CampaignBrowserView](ctx, s.client, commands.DataCampaignBrowserViews, campaignID, p)
}

// BrowserViewsIter walks every page of the campaign's browser views from p.Page.
func (s *CampaignDataService) BrowserViewsIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignBrowserView, error] {
	return iterData(ctx, commands.DataCampaignBrowserViews, campaignID, p, s.BrowserViews)
}

// Bounces returns one page of the campaign's bounces (data.campaign.bounces).
func (s *CampaignDataService) Bounces(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignBounce, error) {
	return fetchData[CampaignBounce](ctx, s.client, commands.DataCampaignBounces, campaignID, p)
}

// BouncesIter walks every page of the campaign's bounces from p.Page.
func (s *CampaignDataService) BouncesIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignBounce, error] {
	return iterData(ctx, commands.DataCampaignBounces, campaignID, p, s.Bounces)
}

// fetchData sends one data.campaign.* command and decodes its Data array (an object of
// records is accepted too).
func fetchData[T any, PT record[T]](ctx context.Context, c *Client, command string, campaignID int, p CampaignDataParams) ([]T, error) {
	form, err := idForm(command, "CampaignID", campaignID)
	if err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	page, err := wire.Values(p)
	if err != nil {
		return nil, &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	maps.Copy(form, page)
	var out []T
	err = c.doWire(ctx, &apiCall{command: command, form: form}, member("Data", func(d *wire.Decoder) (err error) {
		out, err = decodeRecords[T, PT](d)
		return err
	}))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// iterData walks the pages of a data.campaign.* command from p.Page (default 1), on its own
// copy of p (see pages).
func iterData[T comparable](ctx context.Context, command string, campaignID int, p CampaignDataParams,
	fetch func(context.Context, int, CampaignDataParams) ([]T, error)) iter.Seq2[T, error] {
	return iterDataBy(ctx, command, campaignID, p, fetch, func(r T) T { return r })
}

// iterDataBy is iterData for records that are not comparable, compared by key.
func iterDataBy[T any, K comparable](ctx context.Context, command string, campaignID int, p CampaignDataParams,
	fetch func(context.Context, int, CampaignDataParams) ([]T, error), key func(T) K) iter.Seq2[T, error] {
	first, size := max(p.Page, 1), p.Limit
	if size == 0 {
		size = DefaultDataLimit
	}
	return pages(command, first, size, key, func(page int) ([]T, error) {
		q := p
		q.Page = page
		return fetch(ctx, campaignID, q)
	})
}

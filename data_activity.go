package sendloop

import (
	"bytes"
	"context"
	"iter"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// The records below come from data.campaign.emailopens and data.campaign.linkclicks, which
// the real service answers though the specification's tables leave them out. Their keys are
// not published: the dates and the link are read under the names listed on each field, and
// every other key is kept in Extra (a structured value as its JSON text).

// CampaignEmailOpen is a record of data.campaign.emailopens: one open of the campaign.
//
//sendloop:decode
type CampaignEmailOpen struct {
	SubscriberID int // the subscriber who opened
	ListID       int // the subscriber's list
	// OpenDate is read from OpenDate, Date or OpenedOn.
	OpenDate DateTime `wire:"OpenDate|Date|OpenedOn"`
	// Extra holds the keys not named above.
	Extra map[string]string `wire:",extra=extraText"`
}

// CampaignLinkClick is a record of data.campaign.linkclicks: one click on a link of the
// campaign.
//
//sendloop:decode
type CampaignLinkClick struct {
	SubscriberID int // the subscriber who clicked
	ListID       int // the subscriber's list
	// ClickDate is read from ClickDate, Date or ClickedOn.
	ClickDate DateTime `wire:"ClickDate|Date|ClickedOn"`
	// Link is the address clicked, read from Link, URL or LinkURL.
	Link string `wire:"Link|URL|LinkURL"`
	// Extra holds the keys not named above.
	Extra map[string]string `wire:",extra=extraText"`
}

// extraText turns an unknown member's value into the text kept in Extra: a scalar as its
// text, a structured value as its JSON.
func extraText(v []byte) (string, error) {
	if isContainer(v) {
		return string(wire.AppendValidUTF8(nil, bytes.TrimSpace(v))), nil
	}
	return wire.String(v)
}

// EmailOpens returns one page of the campaign's opens (data.campaign.emailopens, a
// command the real service answers though the specification does not list it).
func (s *CampaignDataService) EmailOpens(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignEmailOpen, error) {
	return fetchData[CampaignEmailOpen](ctx, s.client, commands.DataCampaignEmailOpens, campaignID, p)
}

// EmailOpensIter walks every page of the campaign's opens from p.Page.
func (s *CampaignDataService) EmailOpensIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignEmailOpen, error] {
	type key struct {
		id, list int
		at       DateTime
	}
	return iterDataBy(ctx, commands.DataCampaignEmailOpens, campaignID, p, s.EmailOpens,
		func(r CampaignEmailOpen) key { return key{r.SubscriberID, r.ListID, r.OpenDate} })
}

// LinkClicks returns one page of the campaign's link clicks (data.campaign.linkclicks, a
// command the real service answers though the specification does not list it).
func (s *CampaignDataService) LinkClicks(ctx context.Context, campaignID int, p CampaignDataParams) ([]CampaignLinkClick, error) {
	return fetchData[CampaignLinkClick](ctx, s.client, commands.DataCampaignLinkClicks, campaignID, p)
}

// LinkClicksIter walks every page of the campaign's link clicks from p.Page.
func (s *CampaignDataService) LinkClicksIter(ctx context.Context, campaignID int, p CampaignDataParams) iter.Seq2[CampaignLinkClick, error] {
	type key struct {
		id, list int
		at       DateTime
		link     string
	}
	return iterDataBy(ctx, commands.DataCampaignLinkClicks, campaignID, p, s.LinkClicks,
		func(r CampaignLinkClick) key { return key{r.SubscriberID, r.ListID, r.ClickDate, r.Link} })
}

package sendloop_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestCampaignCreate(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 2)
	ctx := context.Background()
	p := validCampaign(w.listID)
	p.GoogleAnalyticsDomainsToTrack = []string{"example.com"}
	p.CustomerIDs = []int{9}
	p.PlainContent = "Hello. Unsubscribe: %Link:Unsubscribe%"
	id, err := w.c.Campaigns.Create(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, 1, id)

	reqs := requestsFor(w.srv, "campaign.create")
	require.Len(t, reqs, 1)
	assert.Equal(t, "/api/v3/campaign.create/json", reqs[0].Path)
	assert.Equal(t, keyParam(w.srv)+"&CampaignName=Spring+sale&CustomerIDs%5B%5D=9&FromEmail=dana%40example.com"+
		"&FromName=Dana+Demo&GoogleAnalyticsDomainsToTrack%5B%5D=example.com"+
		"&HTMLContent=%3Cp%3EHello%3C%2Fp%3E%3Cp%3E%3Ca+href%3D%22%25Link%3AUnsubscribe%25%22%3EUnsubscribe%3C%2Fa%3E%3C%2Fp%3E"+
		"&PlainContent=Hello.+Unsubscribe%3A+%25Link%3AUnsubscribe%25&ReplyToEmail=reply%40example.com"+
		"&ReplyToName=Dana+Demo&Subject=Spring+sale&TargetListIDs%5B%5D=1", string(reqs[0].Body))

	camp, err := w.c.Campaigns.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.CampaignDraft, camp.CampaignStatus)
	assert.Equal(t, id, camp.CampaignID)
	assert.Equal(t, "Spring sale", camp.CampaignName)
	assert.Equal(t, "Dana Demo", camp.FromName)
	assert.Equal(t, "reply@example.com", camp.ReplyToEmail)
	assert.Equal(t, unsubscribeHTML, camp.HTMLContent)
	assert.Equal(t, p.PlainContent, camp.PlainContent)
	assert.Equal(t, "Not Scheduled", camp.ScheduleType)
	assert.True(t, camp.SendDate.IsZero(), "0000-00-00 is the zero Date")
	assert.True(t, camp.SendTime.IsZero(), "00:00:00 is the zero TimeOfDay")
	assert.Equal(t, "Enabled", camp.GoogleAnalyticsEnable)
	assert.Equal(t, "example.com", camp.GoogleAnalyticsDomains)
	assert.Zero(t, camp.TotalRecipients)

	gets := requestsFor(w.srv, "campaign.get")
	require.Len(t, gets, 1)
	assert.Equal(t, keyParam(w.srv)+"&CampaignID=1", string(gets[0].Body))
}

func TestCampaignCreateV2(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 1)
	fieldID, err := w.srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	segID, err := w.srv.DefineSegment(w.listID, "Pro", fieldID, "pro")
	require.NoError(t, err)
	other, _ := w.addList(t, "other", 0)

	id, err := w.c.Campaigns.CreateV2(context.Background(), sendloop.CampaignCreateV2Params{
		Name: "Launch", FromName: "Dana", FromEmail: "dana@example.com", ReplyToName: "Dana",
		ReplyToEmail: "dana@example.com", Subject: "We launched",
		Recipients:            []sendloop.Recipient{{ListID: other}, {ListID: w.listID, SegmentID: segID}},
		HTMLContent:           unsubscribeHTML,
		HTMLContentWithIguana: "<iguana>" + unsubscribeHTML + "</iguana>",
		Iguana:                true,
		ECommerceTracking:     true,
	})
	require.NoError(t, err)
	req := w.srv.LastRequest()
	assert.Equal(t, "campaign.create", req.Command)
	assert.Equal(t, keyParam(w.srv)+"&ECommerceTracking=1&FromEmail=dana%40example.com&FromName=Dana"+
		"&GoogleAnalyticsTracking=0"+
		"&HTMLContent=%3Cp%3EHello%3C%2Fp%3E%3Cp%3E%3Ca+href%3D%22%25Link%3AUnsubscribe%25%22%3EUnsubscribe%3C%2Fa%3E%3C%2Fp%3E"+
		"&HTMLContentWithIguana=%3Ciguana%3E%3Cp%3EHello%3C%2Fp%3E%3Cp%3E%3Ca+href%3D%22%25Link%3AUnsubscribe%25%22%3EUnsubscribe%3C%2Fa%3E%3C%2Fp%3E%3C%2Figuana%3E"+
		"&Iguana=1&Name=Launch&Recipients%5B%5D=2&Recipients%5B%5D=1-1&ReplyToEmail=dana%40example.com&ReplyToName=Dana"+
		"&Subject=We+launched&Version=2", string(req.Body))

	camp, err := w.c.Campaigns.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, "Launch", camp.CampaignName)
	assert.Equal(t, "Disabled", camp.GoogleAnalyticsEnable)
}

func TestRecipientString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "3", sendloop.Recipient{ListID: 3}.String())
	assert.Equal(t, "3-7", sendloop.Recipient{ListID: 3, SegmentID: 7}.String())
}

func TestCampaignCreateRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	valid := validCampaign(1)
	with := func(change func(p *sendloop.CampaignCreateParams)) sendloop.CampaignCreateParams {
		p := valid
		change(&p)
		return p
	}
	validV2 := sendloop.CampaignCreateV2Params{Name: "N", FromName: "F", FromEmail: "f@example.com", ReplyToName: "R",
		ReplyToEmail: "r@example.com", Subject: "S", Recipients: []sendloop.Recipient{{ListID: 1}}, PlainContent: "%Link:Unsubscribe%"}
	withV2 := func(change func(p *sendloop.CampaignCreateV2Params)) sendloop.CampaignCreateV2Params {
		p := validV2
		change(&p)
		return p
	}
	tests := []struct {
		name   string
		p      any // CampaignCreateParams or CampaignCreateV2Params
		want   error
		fields []string
	}{
		{"nothing set", sendloop.CampaignCreateParams{}, sendloop.ErrMissingParameters,
			[]string{"CampaignName", "FromName", "FromEmail", "ReplyToName", "ReplyToEmail", "Subject"}},
		{"blank subject", with(func(p *sendloop.CampaignCreateParams) { p.Subject = "  " }), sendloop.ErrMissingParameters, []string{"Subject"}},
		{"no content", with(func(p *sendloop.CampaignCreateParams) { p.HTMLContent = "" }), sendloop.ErrMissingParameters,
			[]string{"PlainContent", "HTMLContent"}},
		{"address as from name", with(func(p *sendloop.CampaignCreateParams) { p.FromName = "dana@example.com" }),
			sendloop.ErrEmailInNameField, []string{"FromName"}},
		{"address inside reply-to name", with(func(p *sendloop.CampaignCreateParams) { p.ReplyToName = "Dana <dana@example.com>" }),
			sendloop.ErrEmailInNameField, []string{"ReplyToName"}},
		{"both names", with(func(p *sendloop.CampaignCreateParams) { p.FromName, p.ReplyToName = "a@b.co", "x a@b.co" }),
			sendloop.ErrEmailInNameField, []string{"FromName", "ReplyToName"}},
		{"from address not an address", with(func(p *sendloop.CampaignCreateParams) { p.FromEmail = "dana" }),
			sendloop.ErrInvalidEmailFormat, []string{"FromEmail"}},
		{"CR LF in the reply-to address", with(func(p *sendloop.CampaignCreateParams) { p.ReplyToEmail = "r@example.com\r\nBcc: x@example.com" }),
			sendloop.ErrInvalidEmailFormat, []string{"ReplyToEmail"}},
		{"v2 from address at a bare host", withV2(func(p *sendloop.CampaignCreateV2Params) { p.FromEmail = "f@localhost" }),
			sendloop.ErrInvalidEmailFormat, []string{"FromEmail"}},
		{"no targets", with(func(p *sendloop.CampaignCreateParams) { p.TargetListIDs = nil }), sendloop.ErrNoTargets,
			[]string{"TargetListIDs", "TargetSegmentIDs"}},
		{"list ID zero", with(func(p *sendloop.CampaignCreateParams) { p.TargetListIDs = []int{1, 0} }),
			sendloop.ErrInvalidParameterValue, []string{"TargetListIDs"}},
		{"negative segment ID", with(func(p *sendloop.CampaignCreateParams) { p.TargetSegmentIDs = []int{-4} }),
			sendloop.ErrInvalidParameterValue, []string{"TargetSegmentIDs"}},
		{"oversized customer ID", with(func(p *sendloop.CampaignCreateParams) { p.CustomerIDs = []int{1 << 40} }),
			sendloop.ErrInvalidParameterValue, []string{"CustomerIDs"}},
		{"v2 nothing set", sendloop.CampaignCreateV2Params{}, sendloop.ErrMissingParameters,
			[]string{"Name", "FromName", "FromEmail", "ReplyToName", "ReplyToEmail", "Subject"}},
		{"v2 no content", withV2(func(p *sendloop.CampaignCreateV2Params) { p.PlainContent = "" }), sendloop.ErrMissingParameters,
			[]string{"PlainContent", "HTMLContent"}},
		{"v2 Iguana HTML is not content", withV2(func(p *sendloop.CampaignCreateV2Params) { p.PlainContent, p.HTMLContentWithIguana = "", "<p>x</p>" }),
			sendloop.ErrMissingParameters, []string{"PlainContent", "HTMLContent"}},
		{"v2 address in name", withV2(func(p *sendloop.CampaignCreateV2Params) { p.FromName = "ann@example.org" }),
			sendloop.ErrEmailInNameField, []string{"FromName"}},
		{"v2 no recipients", withV2(func(p *sendloop.CampaignCreateV2Params) { p.Recipients = nil }), sendloop.ErrNoTargets, []string{"Recipients"}},
		{"v2 recipient without list", withV2(func(p *sendloop.CampaignCreateV2Params) { p.Recipients = []sendloop.Recipient{{SegmentID: 2}} }),
			sendloop.ErrInvalidParameterValue, []string{"Recipients"}},
		{"v2 negative segment", withV2(func(p *sendloop.CampaignCreateV2Params) {
			p.Recipients = []sendloop.Recipient{{ListID: 1, SegmentID: -1}}
		}),
			sendloop.ErrInvalidParameterValue, []string{"Recipients"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			var err error
			switch p := tt.p.(type) {
			case sendloop.CampaignCreateParams:
				_, err = c.Campaigns.Create(context.Background(), p)
			case sendloop.CampaignCreateV2Params:
				_, err = c.Campaigns.CreateV2(context.Background(), p)
			}
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, "campaign.create", ve.Command)
			assert.Equal(t, tt.fields, ve.Fields)
			assert.Empty(t, requestsFor(srv, "campaign.create"), "nothing may be sent")
		})
	}
}

// TestCampaignNameRuleAgreesWithTheFake checks that a name the client lets through is one
// the fake accepts too, and that what the client refuses is what the fake would refuse.
func TestCampaignNameRuleAgreesWithTheFake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		refused bool
	}{
		{"Dana Demo", false},
		{"Ann @ Acme", false},
		{"@handle", false},
		{"ann@localhost", false},
		{"ann@host.", false},
		{"ann@.host", false},
		{"Zoë Ünïcode", false},
		{"ann@example.com", true},
		{"Ann <ann@example.com>", true},
		{"(ann@example.co.uk)", true},
		{"x ann@ex.io y", true},
		{"zoë@exämple.de", true},
		{"ann@a..b.c", true},
	}
	w := newCampaignWorld(t, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validCampaign(w.listID)
			p.FromName = tt.name
			_, err := w.c.Campaigns.Create(context.Background(), p)
			var ve *sendloop.ValidationError
			if tt.refused {
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, sendloop.ErrEmailInNameField, ve.Code)
				// The fake, asked directly, refuses it as well.
				err = w.c.Call(context.Background(), "campaign.create", map[string]string{
					"CampaignName": "c", "FromName": tt.name, "FromEmail": "a@example.com", "ReplyToName": "r",
					"ReplyToEmail": "a@example.com", "Subject": "s", "TargetListIDs[]": strconv.Itoa(w.listID),
					"PlainContent": "%Link:Unsubscribe%"}, nil)
				require.ErrorIs(t, err, sendloop.ErrEmailInNameField)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestCampaignCreateServerErrors(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 0)
	fieldID, err := w.srv.DefineCustomField(w.listID, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	segID, err := w.srv.DefineSegment(w.listID, "Pro", fieldID, "pro")
	require.NoError(t, err)
	with := func(change func(p *sendloop.CampaignCreateParams)) sendloop.CampaignCreateParams {
		p := validCampaign(w.listID)
		change(&p)
		return p
	}
	v2 := func(r ...sendloop.Recipient) sendloop.CampaignCreateV2Params {
		return sendloop.CampaignCreateV2Params{Name: "N", FromName: "F", FromEmail: "f@example.com", ReplyToName: "R",
			ReplyToEmail: "r@example.com", Subject: "S", Recipients: r, PlainContent: "Leave: https://example.com/unsubscribe?u=1"}
	}
	tests := []struct {
		name string
		p    any
		want error
	}{
		{"unknown list", with(func(p *sendloop.CampaignCreateParams) { p.TargetListIDs = []int{w.listID, 99} }), sendloop.ErrTargetListNotFound},
		{"unknown segment", with(func(p *sendloop.CampaignCreateParams) { p.TargetSegmentIDs = []int{segID + 5} }), sendloop.ErrTargetSegmentNotFound},
		{"no unsubscription link", with(func(p *sendloop.CampaignCreateParams) {
			p.HTMLContent = `<p><a href="https://example.com">Shop</a></p>`
		}),
			sendloop.ErrMissingUnsubscribeLink},
		{"plain content without link", with(func(p *sendloop.CampaignCreateParams) { p.PlainContent = "Hello" }), sendloop.ErrMissingUnsubscribeLink},
		{"link text too short", with(func(p *sendloop.CampaignCreateParams) { p.HTMLContent = `<a href="%Link:Unsubscribe%">Out</a>` }),
			sendloop.ErrUnsubscribeLinkTextTooShort},
		{"script", with(func(p *sendloop.CampaignCreateParams) { p.HTMLContent = unsubscribeHTML + "<script>x()</script>" }), sendloop.ErrForbiddenContent},
		{"v2 unknown list", v2(sendloop.Recipient{ListID: 42}), sendloop.ErrTargetListNotFound},
		{"v2 segment of another list", v2(sendloop.Recipient{ListID: w.listID, SegmentID: segID + 1}), sendloop.ErrTargetSegmentNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			switch p := tt.p.(type) {
			case sendloop.CampaignCreateParams:
				_, err = w.c.Campaigns.Create(context.Background(), p)
			case sendloop.CampaignCreateV2Params:
				_, err = w.c.Campaigns.CreateV2(context.Background(), p)
			}
			require.ErrorIs(t, err, tt.want)
			var apiErr *sendloop.APIError
			require.ErrorAs(t, err, &apiErr, "the fake refused it, not the client")
			assert.Equal(t, "campaign.create", apiErr.Command)
		})
	}
	assert.Zero(t, w.srv.CampaignCount())
	// The accepted version 2 shape, for contrast.
	_, err = w.c.Campaigns.CreateV2(context.Background(), v2(sendloop.Recipient{ListID: w.listID, SegmentID: segID}))
	require.NoError(t, err)
	assert.Equal(t, 1, w.srv.CampaignCount())
}

func TestCampaignCreateIsOneShot(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 0)
	w.srv.InjectFault("campaign.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	_, err := w.c.Campaigns.Create(context.Background(), validCampaign(w.listID))
	require.Error(t, err, "the client cannot know the campaign was made")
	assert.Equal(t, 1, w.srv.Executions("campaign.create"))
	assert.Equal(t, 1, w.srv.CampaignCount(), "never a second campaign")

	w.srv.InjectFault("campaign.create", sendlooptest.Fault{Status: 503})
	id, err := w.c.Campaigns.Create(context.Background(), validCampaign(w.listID))
	require.NoError(t, err, "503 surely was not processed: retried")
	assert.Equal(t, 2, id)
}

func TestCampaignUpdateGetDelete(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 0)
	ctx := context.Background()
	other, _ := w.addList(t, "other", 0)
	id, err := w.c.Campaigns.Create(ctx, validCampaign(w.listID))
	require.NoError(t, err)

	require.NoError(t, w.c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{
		CampaignName: "Summer sale", Subject: "Summer is here", TargetListIDs: []int{w.listID, other},
	}))
	updates := requestsFor(w.srv, "campaign.update")
	require.Len(t, updates, 1)
	assert.Equal(t, keyParam(w.srv)+"&CampaignID=1&CampaignName=Summer+sale&Subject=Summer+is+here"+
		"&TargetListIDs%5B%5D=1&TargetListIDs%5B%5D=2", string(updates[0].Body))
	camp, err := w.c.Campaigns.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "Summer sale", camp.CampaignName)
	assert.Equal(t, "Summer is here", camp.Subject)
	assert.Equal(t, "Dana Demo", camp.FromName, "unchanged")

	require.ErrorIs(t, w.c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{TargetListIDs: []int{77}}), sendloop.ErrTargetListNotFound)
	require.ErrorIs(t, w.c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{ReplyToEmail: "nope"}), sendloop.ErrInvalidEmailFormat)

	require.NoError(t, w.c.Campaigns.Delete(ctx, id))
	assert.Equal(t, keyParam(w.srv)+"&CampaignID=1", string(w.srv.LastRequest().Body))
	_, err = w.c.Campaigns.Get(ctx, id)
	require.ErrorIs(t, err, sendloop.ErrNotFound)
	require.ErrorIs(t, w.c.Campaigns.Delete(ctx, id), sendloop.ErrNotFound)
	require.ErrorIs(t, w.c.Campaigns.Update(ctx, id, sendloop.CampaignUpdateParams{Subject: "x"}), sendloop.ErrNotFound)
}

func TestCampaignCallsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		call    func(c *sendloop.Client) error
		want    error
		fields  []string
	}{
		{"get without ID", "campaign.get", func(c *sendloop.Client) error { _, err := c.Campaigns.Get(context.Background(), 0); return err },
			sendloop.ErrMissingParameters, []string{"CampaignID"}},
		{"get negative ID", "campaign.get", func(c *sendloop.Client) error { _, err := c.Campaigns.Get(context.Background(), -1); return err },
			sendloop.ErrInvalidParameterValue, []string{"CampaignID"}},
		{"delete without ID", "campaign.delete", func(c *sendloop.Client) error { return c.Campaigns.Delete(context.Background(), 0) },
			sendloop.ErrMissingParameters, []string{"CampaignID"}},
		{"update nothing", "campaign.update", func(c *sendloop.Client) error {
			return c.Campaigns.Update(context.Background(), 1, sendloop.CampaignUpdateParams{})
		}, sendloop.ErrMissingParameters, nil},
		{"update oversized ID", "campaign.update", func(c *sendloop.Client) error {
			return c.Campaigns.Update(context.Background(), 1<<40, sendloop.CampaignUpdateParams{Subject: "s"})
		}, sendloop.ErrInvalidParameterValue, []string{"CampaignID"}},
		{"update address in name", "campaign.update", func(c *sendloop.Client) error {
			return c.Campaigns.Update(context.Background(), 1, sendloop.CampaignUpdateParams{ReplyToName: "me@example.com"})
		}, sendloop.ErrEmailInNameField, []string{"ReplyToName"}},
		{"update reply-to with a line break", "campaign.update", func(c *sendloop.Client) error {
			return c.Campaigns.Update(context.Background(), 1, sendloop.CampaignUpdateParams{ReplyToEmail: "me@example.com\nX: y"})
		}, sendloop.ErrInvalidEmailFormat, []string{"ReplyToEmail"}},
		{"update bad list ID", "campaign.update", func(c *sendloop.Client) error {
			return c.Campaigns.Update(context.Background(), 1, sendloop.CampaignUpdateParams{TargetListIDs: []int{0}})
		}, sendloop.ErrInvalidParameterValue, []string{"TargetListIDs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			err := tt.call(c)
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.command, ve.Command)
			assert.Equal(t, tt.fields, ve.Fields)
			assert.Empty(t, requestsFor(srv, tt.command), "nothing may be sent")
		})
	}
}

func TestCampaignCountsAfterActivity(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 3)
	id := w.sentCampaign(t)
	e := w.emails
	require.NoError(t, w.srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: e[0], After: time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: e[0], After: 2 * time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: e[1], After: 30 * oneDay}, // counted: the campaign's totals have no window
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventClick, Email: e[0], After: time.Hour, Link: "https://example.com"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventForward, Email: e[1], After: oneDay},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventBrowserView, Email: e[1], After: oneDay},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventBrowserView, Email: e[1], After: 2 * oneDay},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventUnsubscription, Email: e[1], After: 3 * oneDay},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventHardBounce, Email: e[2]},
	))
	camp, err := w.c.Campaigns.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.CampaignSent, camp.CampaignStatus)
	assert.Equal(t, "2026-03-02", camp.SendDate.String())
	assert.Equal(t, sendloop.TimeOfDay{Hour: 10}, camp.SendTime)
	assert.Equal(t, "UTC", camp.SendTimeZone)
	want := sendloop.Campaign{TotalRecipients: 3, TotalSent: 3, TotalOpens: 3, UniqueOpens: 2, TotalClicks: 1, UniqueClicks: 1,
		TotalForwards: 1, UniqueForwards: 1, TotalViewsOnBrowser: 2, UniqueViewsOnBrowser: 1, TotalUnsubscriptions: 1,
		TotalHardBounces: 1}
	got := sendloop.Campaign{TotalRecipients: camp.TotalRecipients, TotalSent: camp.TotalSent, TotalFailed: camp.TotalFailed,
		TotalOpens: camp.TotalOpens, UniqueOpens: camp.UniqueOpens, TotalClicks: camp.TotalClicks, UniqueClicks: camp.UniqueClicks,
		TotalForwards: camp.TotalForwards, UniqueForwards: camp.UniqueForwards, TotalViewsOnBrowser: camp.TotalViewsOnBrowser,
		UniqueViewsOnBrowser: camp.UniqueViewsOnBrowser, TotalUnsubscriptions: camp.TotalUnsubscriptions,
		TotalHardBounces: camp.TotalHardBounces, TotalSoftBounces: camp.TotalSoftBounces}
	assert.Equal(t, want, got)
}

func TestCampaignUnmarshalIsTolerant(t *testing.T) {
	t.Parallel()
	var c sendloop.Campaign
	require.NoError(t, c.UnmarshalJSON([]byte(`{"CampaignID":12,"CampaignStatus":"Paused","TotalOpens":"","UniqueOpens":null,`+
		`"TotalClicks":"7","SendDate":"2026-04-01","SendTime":"08:30","Unknown":{"x":[1]}}`)))
	assert.Equal(t, 12, c.CampaignID)
	assert.Equal(t, sendloop.CampaignStatus("Paused"), c.CampaignStatus, "unknown statuses are kept")
	assert.Equal(t, 7, c.TotalClicks)
	assert.Equal(t, sendloop.TimeOfDay{Hour: 8, Minute: 30}, c.SendTime)
	assert.Equal(t, "08:30:00", c.SendTime.String())

	for _, bad := range []string{`{"SendTime":"25:00:00"}`, `{"SendTime":"8:30"}`, `{"SendTime":"noon"}`, `{"TotalOpens":"many"}`} {
		assert.Error(t, new(sendloop.Campaign).UnmarshalJSON([]byte(bad)), bad)
	}
	text, err := sendloop.TimeOfDay{Hour: 23, Minute: 5, Second: 9}.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "23:05:09", string(text))
}

func TestCampaignStatusesKeepTheirText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"Draft", "Sent", "Pending Approval"} {
		var c sendloop.Campaign
		require.NoError(t, c.UnmarshalJSON([]byte(`{"CampaignStatus":"`+s+`"}`)))
		assert.Equal(t, s, string(c.CampaignStatus))
	}
}

// TestCampaignMembersBeyondTheSpec reads what the real service sends in campaign.get beyond
// the specification's table: Lists, SendProcessFinishedOn and ThumbnailURL.
func TestCampaignMembersBeyondTheSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, members string
		lists         []int
		finished      string
		thumbnail     string
	}{
		{"strings", `"Lists":["3","7"],"SendProcessFinishedOn":"2026-03-02 10:00:00","ThumbnailURL":"https://t.example/1.png"`,
			[]int{3, 7}, "2026-03-02 10:00:00", "https://t.example/1.png"},
		{"numbers, no thumbnail", `"Lists":[3],"SendProcessFinishedOn":"0000-00-00 00:00:00","ThumbnailURL":false`, []int{3}, "0000-00-00 00:00:00", ""},
		{"empty", `"Lists":[],"ThumbnailURL":null`, nil, "0000-00-00 00:00:00", ""},
		{"object of lists", `"Lists":{"0":"4","1":5}`, []int{4, 5}, "0000-00-00 00:00:00", ""},
		{"absent", ``, nil, "0000-00-00 00:00:00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := `{"Success":true,"Campaign":{"CampaignID":"1"` + map[bool]string{true: "", false: ","}[tt.members == ""] + tt.members + `}}`
			c := cannedClient(t, 200, body)
			camp, err := c.Campaigns.Get(context.Background(), 1)
			require.NoError(t, err)
			assert.Equal(t, tt.lists, camp.Lists)
			assert.Equal(t, tt.finished, camp.SendProcessFinishedOn.String())
			assert.Equal(t, tt.thumbnail, camp.ThumbnailURL)
		})
	}
}

func TestCampaignMembersBeyondTheSpecFromTheFake(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 2)
	ctx := context.Background()
	id, err := w.c.Campaigns.Create(ctx, validCampaign(w.listID))
	require.NoError(t, err)
	camp, err := w.c.Campaigns.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, []int{w.listID}, camp.Lists)
	assert.True(t, camp.SendProcessFinishedOn.IsZero(), "not sent yet")
	assert.Empty(t, camp.ThumbnailURL)
	w.deliver(t, id)
	camp, err = w.c.Campaigns.Get(ctx, id)
	require.NoError(t, err)
	assert.False(t, camp.SendProcessFinishedOn.IsZero(), "sent")
}

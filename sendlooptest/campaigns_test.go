package sendlooptest

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// campaignClock is the fixed clock of the campaign tests: Monday 2026-03-02 10:00 UTC.
var campaignClock = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// newCampaignFake starts a fake with key "k" and the fixed clock.
func newCampaignFake(t *testing.T) *Server {
	t.Helper()
	return NewServer(t, WithAPIKey("k"), WithClock(func() time.Time { return campaignClock }))
}

// v3Command posts a v3 command in json with the key and the given name, value pairs, and
// returns the body.
func v3Command(t *testing.T, srv *Server, name string, pairs ...string) string {
	t.Helper()
	form := url.Values{"APIKey": {srv.APIKey}}
	for i := 0; i+1 < len(pairs); i += 2 {
		form.Add(pairs[i], pairs[i+1])
	}
	_, body := post(t, srv, "/api/v3/"+name+"/json", form)
	return body
}

// fakeList makes a single opt-in list with subscribers <name><i>@example.com.
func fakeList(t *testing.T, srv *Server, name string, n int) (int, []string) {
	t.Helper()
	body := v3Command(t, srv, "list.create", "Name", name, "OptInMode", "Single")
	require.Contains(t, body, `"Success":true`)
	id := srv.ListCount()
	var emails []string
	for i := 0; i < n; i++ {
		email := fmt.Sprintf("%s%d@example.com", name, i)
		require.Contains(t, v3Command(t, srv, "subscriber.subscribe", "ListID", strconv.Itoa(id), "EmailAddress", email,
			"SubscriptionIP", "127.0.0.1"), `"Success":true`)
		emails = append(emails, email)
	}
	return id, emails
}

// campaignPairs are the parameters of a valid version 1 campaign for list 1.
func campaignPairs(extra ...string) []string {
	return append([]string{"CampaignName", "C", "FromName", "Dana", "FromEmail", "dana@example.com", "ReplyToName", "Dana",
		"ReplyToEmail", "dana@example.com", "Subject", "S", "TargetListIDs[]", "1",
		"HTMLContent", `<a href="%Link:Unsubscribe%">Unsubscribe</a>`}, extra...)
}

// withoutParams drops the named parameters from pairs.
func withoutParams(pairs []string, names ...string) []string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		drop := false
		for _, n := range names {
			drop = drop || pairs[i] == n
		}
		if !drop {
			out = append(out, pairs[i], pairs[i+1])
		}
	}
	return out
}

func v2Pairs(extra ...string) []string {
	return append([]string{"Version", "2", "Name", "C", "FromName", "Dana", "FromEmail", "dana@example.com", "ReplyToName", "Dana",
		"ReplyToEmail", "dana@example.com", "Subject", "S", "Recipients[]", "1", "PlainContent", "Bye: %Link:Unsubscribe%"}, extra...)
}

func TestCampaignCreateChecks(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	fakeList(t, srv, "news", 1)
	fieldID, err := srv.DefineCustomField(1, CustomField{Name: "Plan"})
	require.NoError(t, err)
	segID, err := srv.DefineSegment(1, "Pro", fieldID, "pro")
	require.NoError(t, err)
	seg := strconv.Itoa(segID)
	tests := []struct {
		name  string
		pairs []string
		want  string // the error members
	}{
		{"nothing", nil, `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["CampaignName","FromName","FromEmail","ReplyToName","ReplyToEmail","Subject"]`},
		{"v2 nothing", []string{"Version", "2"}, `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["Name","FromName","FromEmail","ReplyToName","ReplyToEmail","Subject"]`},
		{"blank subject", append(withoutParams(campaignPairs(), "Subject"), "Subject", " "), `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["Subject"]`},
		{"no content", withoutParams(campaignPairs(), "HTMLContent"), `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["PlainContent","HTMLContent"]`},
		{"address in from name", append(withoutParams(campaignPairs(), "FromName"), "FromName", "Dana <d@example.com>"), `"ErrorCode":137,"ErrorMessage":"Email address cannot be used in from\/reply-to name fields","ErrorFields":["FromName"]`},
		{"address in reply-to name", append(withoutParams(campaignPairs(), "ReplyToName"), "ReplyToName", "d@example.com"), `"ErrorCode":137`},
		{"bad sender", append(withoutParams(campaignPairs(), "FromEmail"), "FromEmail", "dana"), `"ErrorCode":111,"ErrorMessage":"Invalid email address format","ErrorFields":["FromEmail"]`},
		{"no targets", withoutParams(campaignPairs(), "TargetListIDs[]"), `"ErrorCode":138,"ErrorMessage":"At least TargetListIDs or TargetSegmentIDs (or both) must be sent","ErrorFields":["TargetListIDs","TargetSegmentIDs"]`},
		{"list ID not a number", append(withoutParams(campaignPairs(), "TargetListIDs[]"), "TargetListIDs[]", "one"), `"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["TargetListIDs"]`},
		{"unknown list", campaignPairs("TargetListIDs[]", "7"), `"ErrorCode":139,"ErrorMessage":"One of the provided subscriber lists not found","ErrorFields":["TargetListIDs"]`},
		{"unknown segment", campaignPairs("TargetSegmentIDs[]", "99"), `"ErrorCode":140,"ErrorMessage":"One of the provided segments not found","ErrorFields":["TargetSegmentIDs"]`},
		{"bad customer", campaignPairs("CustomerIDs[]", "x"), `"ErrorCode":141`},
		{"script", append(withoutParams(campaignPairs(), "HTMLContent"), "HTMLContent", `<a href="%Link:Unsubscribe%">Unsubscribe</a><SCRIPT>x</SCRIPT>`), `"ErrorCode":145,"ErrorMessage":"HTML content contains script, flash or java","ErrorFields":["HTMLContent"]`},
		{"javascript link", append(withoutParams(campaignPairs(), "HTMLContent"), "HTMLContent", `<a href="javascript:go()">Unsubscribe</a>`), `"ErrorCode":145`},
		{"no unsubscription link", append(withoutParams(campaignPairs(), "HTMLContent"), "HTMLContent", "<p>Hi</p>"), `"ErrorCode":144,"ErrorMessage":"Unsubscription link is missing in email content","ErrorFields":["HTMLContent"]`},
		{"short link text", append(withoutParams(campaignPairs(), "HTMLContent"), "HTMLContent", `<a href="%Link:Unsubscribe%">No</a>`), `"ErrorCode":146,"ErrorMessage":"Unsubscription link text must be longer than 3 characters","ErrorFields":["HTMLContent"]`},
		{"unknown version", campaignPairs("Version", "3"), `"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["Version"]`},
		{"v2 no recipients", withoutParams(v2Pairs(), "Recipients[]"), `"ErrorCode":138,"ErrorMessage":"At least TargetListIDs or TargetSegmentIDs (or both) must be sent","ErrorFields":["Recipients"]`},
		{"v2 unknown list", v2Pairs("Recipients[]", "9"), `"ErrorCode":139,"ErrorMessage":"One of the provided subscriber lists not found","ErrorFields":["Recipients"]`},
		{"v2 unknown segment", v2Pairs("Recipients[]", "1-99"), `"ErrorCode":140,"ErrorMessage":"One of the provided segments not found","ErrorFields":["Recipients"]`},
		{"v2 malformed recipient", v2Pairs("Recipients[]", "1-"), `"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["Recipients"]`},
		{"v2 bad boolean", v2Pairs("Iguana", "maybe"), `"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["Iguana"]`},
		{"v2 plain content without link", append(withoutParams(v2Pairs(), "PlainContent"), "PlainContent", "Bye"), `"ErrorCode":144,"ErrorMessage":"Unsubscription link is missing in email content","ErrorFields":["PlainContent"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := v3Command(t, srv, "campaign.create", tt.pairs...)
			assert.Contains(t, body, `{"Success":false,`+tt.want)
		})
	}
	assert.Zero(t, srv.CampaignCount(), "no refused campaign was stored")

	accepted := [][]string{
		campaignPairs(),
		campaignPairs("TargetSegmentIDs[]", seg),
		append(withoutParams(campaignPairs(), "TargetListIDs[]"), "TargetSegmentIDs[]", seg),
		append(withoutParams(campaignPairs(), "TargetListIDs[]"), "TargetListIDs[0]", "1"),
		append(withoutParams(campaignPairs(), "TargetListIDs[]"), "TargetListIDs", "1"),
		v2Pairs("Recipients[]", "1-"+seg, "Iguana", "1", "GoogleAnalyticsTracking", "true", "ECommerceTracking", "0"),
	}
	for i, pairs := range accepted {
		assert.Equal(t, fmt.Sprintf(`{"Success":true,"CampaignID":%d}`, i+1), v3Command(t, srv, "campaign.create", pairs...))
	}
	status, ok := srv.CampaignStatus(6)
	assert.True(t, ok)
	assert.Equal(t, "Draft", status)
}

func TestUnsubscriptionLinkRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		html, plain string
		code        int // 0: accepted
	}{
		{"tag link", `<a href="%Link:Unsubscribe%">Unsubscribe</a>`, "", 0},
		{"unsubscribe URL, single quotes, upper case", `<A HREF='https://example.com/Unsubscribe?u=1'>Leave list</A>`, "", 0},
		{"unquoted href", `<a class=x href=%link:unsubscribe% target=_blank>Leave</a>`, "", 0},
		{"text inside markup", `<a href="%Link:Unsubscribe%"><b>Stop</b></a>`, "", 0},
		{"entity text", `<a href="%Link:Unsubscribe%">Opt&nbsp;out</a>`, "", 0},
		{"link across lines", "<a\nhref=\"%Link:Unsubscribe%\"\n>Unsubscribe\nhere</a>", "", 0},
		{"one long enough link is enough", `<a href="%Link:Unsubscribe%">X</a> <a href="https://x.test/unsubscribe">Unsubscribe</a>`, "", 0},
		{"three characters", `<a href="%Link:Unsubscribe%">Out</a>`, "", 146},
		{"only markup and spaces", `<a href="%Link:Unsubscribe%"> <img src="x.png"> &nbsp; </a>`, "", 146},
		{"unsubscribe only in the text", `<a href="https://example.com">Unsubscribe</a>`, "", 144},
		{"tag outside a link", `<p>Unsubscribe: %Link:Unsubscribe%</p>`, "", 144},
		{"plain tag", "", "Bye %link:unsubscribe%", 0},
		{"plain URL", "", "Bye https://example.com/unsubscribe?u=2", 0},
		{"plain without link", "", "Bye", 144},
		{"plain word only", "", "Reply 'unsubscribe' to leave", 144},
		{"both, plain missing", `<a href="%Link:Unsubscribe%">Unsubscribe</a>`, "Bye", 144},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			apiErr := checkUnsubscribeLink(tt.html, tt.plain)
			if tt.code == 0 {
				assert.Nil(t, apiErr)
				return
			}
			require.NotNil(t, apiErr)
			assert.Equal(t, tt.code, apiErr.code)
		})
	}
}

func TestEmailInNameRule(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Dana Demo": false, "Ann @ Acme": false, "@handle": false, "ann@localhost": false, "ann@host.": false,
		"ann@.host": false, "ann@example.com": true, "Ann <ann@example.com>": true, "(ann@example.co.uk)": true,
		"zoë@exämple.de": true, "ann@a..b.c": true,
	} {
		assert.Equal(t, want, emailInName.MatchString(name), name)
	}
}

func TestCampaignGetUpdateDelete(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	fakeList(t, srv, "news", 0)
	fakeList(t, srv, "club", 0)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs("GoogleAnalyticsDomainsToTrack[]", "example.com",
		"GoogleAnalyticsDomainsToTrack[]", "shop.example.com")...), `"CampaignID":1`)

	assert.Equal(t, `{"Success":true,"Campaign":{"CampaignID":"1","CampaignStatus":"Draft","CampaignName":"C","FromName":"Dana",`+
		`"FromEmail":"dana@example.com","ReplyToName":"Dana","ReplyToEmail":"dana@example.com","FetchURL":"","Subject":"S",`+
		`"PlainContent":"","HTMLContent":"<a href=\"%Link:Unsubscribe%\">Unsubscribe<\/a>","ScheduleType":"Not Scheduled",`+
		`"SendDate":"0000-00-00","SendTime":"00:00:00","SendTimeZone":"UTC","TotalRecipients":"0","TotalSent":"0","TotalFailed":"0",`+
		`"TotalOpens":"0","UniqueOpens":"0","TotalClicks":"0","UniqueClicks":"0","TotalForwards":"0","UniqueForwards":"0",`+
		`"TotalViewsOnBrowser":"0","UniqueViewsOnBrowser":"0","TotalUnsubscriptions":"0","TotalHardBounces":"0","TotalSoftBounces":"0",`+
		`"GoogleAnalyticsEnable":"Enabled","GoogleAnalyticsDomains":"example.com,shop.example.com",`+
		`"PublicTinyContentLink":"https:\/\/sendloop.test\/c\/1","Lists":["1"],"SendProcessFinishedOn":"0000-00-00 00:00:00","ThumbnailURL":false}}`, v3Command(t, srv, "campaign.get", "CampaignID", "1"))

	_, xmlBody := post(t, srv, "/api/v3/campaign.get/xml", url.Values{"APIKey": {"k"}, "CampaignID": {"1"}})
	assert.Contains(t, xmlBody, "<CampaignStatus>Draft</CampaignStatus>")

	// All or nothing: the bad address leaves the name unchanged.
	assert.Contains(t, v3Command(t, srv, "campaign.update", "CampaignID", "1", "CampaignName", "New", "ReplyToEmail", "x"), `"ErrorCode":111`)
	assert.Contains(t, v3Command(t, srv, "campaign.get", "CampaignID", "1"), `"CampaignName":"C"`)
	for _, tt := range []struct{ pairs []string }{
		{[]string{"CampaignName", " "}}, {[]string{"FromName", "me@example.com"}}, {[]string{"TargetListIDs[]", "9"}},
		{[]string{"TargetSegmentIDs[]", "9"}}, {[]string{"CustomerIDs[]", "-1"}}, {[]string{"TargetListIDs[]", "x"}},
	} {
		body := v3Command(t, srv, "campaign.update", append([]string{"CampaignID", "1"}, tt.pairs...)...)
		assert.Contains(t, body, `"Success":false`, "%v", tt.pairs)
	}
	assert.Equal(t, `{"Success":true}`, v3Command(t, srv, "campaign.update", "CampaignID", "1", "CampaignName", "New",
		"Subject", "Subject 2", "TargetListIDs[]", "2"))
	got := v3Command(t, srv, "campaign.get", "CampaignID", "1")
	assert.Contains(t, got, `"CampaignName":"New"`)
	assert.Contains(t, got, `"Subject":"Subject 2"`)

	for _, name := range []string{"campaign.get", "campaign.update", "campaign.delete"} {
		assert.Contains(t, v3Command(t, srv, name, "CampaignID", "2", "Subject", "x"),
			`{"Success":false,"ErrorCode":106,"ErrorMessage":"Requested data not found","ErrorFields":["CampaignID"]}`, name)
		assert.Contains(t, v3Command(t, srv, name, "CampaignID", "one"), `"ErrorCode":106`, name)
		assert.Contains(t, v3Command(t, srv, name), `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["CampaignID"]`, name)
	}
	assert.Equal(t, `{"Success":true}`, v3Command(t, srv, "campaign.delete", "CampaignID", "1"))
	assert.Zero(t, srv.CampaignCount())
	_, exists := srv.CampaignStatus(1)
	assert.False(t, exists)
	assert.Contains(t, v3Command(t, srv, "campaign.delete", "CampaignID", "1"), `"ErrorCode":106`)
}

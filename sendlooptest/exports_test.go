package sendlooptest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExports(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	_, news := fakeList(t, srv, "news", 3)
	_, club := fakeList(t, srv, "club", 1)
	require.Contains(t, v3Command(t, srv, "campaign.create", campaignPairs("TargetListIDs[]", "2")...), `"CampaignID":1`)
	deliver(t, srv, 1)
	require.NoError(t, srv.SimulateEvents(1,
		CampaignEvent{Kind: EventUnsubscription, Email: news[0], After: oneDay, IP: "198.51.100.7"},
		CampaignEvent{Kind: EventHardBounce, Email: news[1], After: time.Minute},
		CampaignEvent{Kind: EventSoftBounce, Email: club[0], After: 2 * time.Minute},
		CampaignEvent{Kind: EventSpamComplaint, Email: news[2], After: 3 * oneDay},
	))
	require.Contains(t, v3Command(t, srv, "suppression.list.add", "ListID", "2", "EmailAddress", "blocked@example.com"), `"Success":true`)
	require.Contains(t, v3Command(t, srv, "subscriber.unsubscribe", "EmailAddress", club[0]), `"Success":true`)
	// Exports outlive the campaign.
	require.Equal(t, `{"Success":true}`, v3Command(t, srv, "campaign.delete", "CampaignID", "1"))

	assert.Equal(t, `{"Success":true,"Unsubscriptions":[`+
		`{"CampaignID":"1","ListID":"1","SubscriberID":"1","EmailAddress":"news0@example.com","UnsubscriptionDate":"2026-03-03","UnsubscriptionIP":"198.51.100.7"},`+
		// unsubscribed through the API at the fake's now, readClock
		`{"CampaignID":"0","ListID":"2","SubscriberID":"4","EmailAddress":"club0@example.com","UnsubscriptionDate":"2026-05-01","UnsubscriptionIP":"127.0.0.1"}]}`,
		v3Command(t, srv, "export.unsubscriptions"))
	assert.Contains(t, v3Command(t, srv, "export.unsubscriptions", "ListID", "2"), `"Unsubscriptions":[{"CampaignID":"0","ListID":"2"`)
	assert.Contains(t, v3Command(t, srv, "export.unsubscriptions", "ListID", "9"), `"ErrorCode":118`)

	assert.Equal(t, `{"Success":true,"SuppressionList":[["news2@example.com","FBL Report"],["blocked@example.com","Manual"]]}`,
		v3Command(t, srv, "export.suppressionlist"))
	assert.Equal(t, `{"Success":true,"SpamComplaints":[["news2@example.com","2026-03-05 10:00:00"]]}`, v3Command(t, srv, "export.spamcomplaints"))

	assert.Equal(t, `{"Success":true,"BounceData":[{"CampaignID":"1","ListID":"1","SubscriberID":"2","EmailAddress":"news1@example.com",`+
		`"BounceType":"Hard","DetectionDate":"2026-03-02 10:01:00"}]}`, v3Command(t, srv, "export.bounces", "BounceType", "hard"))
	assert.Contains(t, v3Command(t, srv, "export.bounces", "BounceType", "SOFT"), `"EmailAddress":"club0@example.com","BounceType":"Soft"`)
	assert.Equal(t, `{"Success":false,"ErrorCode":119,"ErrorMessage":"BounceType value must be 'hard' or 'soft'","ErrorFields":["BounceType"]}`,
		v3Command(t, srv, "export.bounces", "BounceType", "Not Bounced"))
	assert.Contains(t, v3Command(t, srv, "export.bounces"), `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["BounceType"]`)

	_, xmlBody := post(t, srv, "/api/v3/export.suppressionlist/xml", map[string][]string{"APIKey": {"k"}})
	assert.Contains(t, xmlBody, "<SuppressionList><item><item>news2@example.com</item><item>FBL Report</item></item>")
}

func TestExportsOfAnEmptyAccount(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	for name, member := range map[string]string{"export.unsubscriptions": "Unsubscriptions", "export.suppressionlist": "SuppressionList",
		"export.spamcomplaints": "SpamComplaints"} {
		assert.Equal(t, `{"Success":true,"`+member+`":[]}`, v3Command(t, srv, name), name)
	}
	assert.Equal(t, `{"Success":true,"BounceData":[]}`, v3Command(t, srv, "export.bounces", "BounceType", "soft"))
}

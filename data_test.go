package sendloop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// forwardWorld delivers a campaign to n subscribers, each of whom forwards it once, an hour
// apart, so that forward i comes from subscriber i+1.
func forwardWorld(t *testing.T, n int) (*campaignWorld, int) {
	t.Helper()
	w := newCampaignWorld(t, n)
	id := w.sentCampaign(t)
	events := make([]sendlooptest.CampaignEvent, n)
	for i, email := range w.emails {
		events[i] = sendlooptest.CampaignEvent{Kind: sendlooptest.EventForward, Email: email, After: time.Duration(i+1) * time.Hour}
	}
	require.NoError(t, w.srv.SimulateEvents(id, events...))
	return w, id
}

func forwarders(records []sendloop.CampaignForward) []int {
	var ids []int
	for _, r := range records {
		ids = append(ids, r.SubscriberID)
	}
	return ids
}

func idRange(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestCampaignDataPages(t *testing.T) {
	t.Parallel()
	w, id := forwardWorld(t, 23)
	ctx := context.Background()
	tests := []struct {
		name string
		p    sendloop.CampaignDataParams
		body string
		want []int
	}{
		{"defaults", sendloop.CampaignDataParams{}, "&CampaignID=1", idRange(1, 10)},
		{"second page", sendloop.CampaignDataParams{Page: 2}, "&CampaignID=1&Page=2", idRange(11, 20)},
		{"short last page", sendloop.CampaignDataParams{Limit: 10, Page: 3}, "&CampaignID=1&Limit=10&Page=3", idRange(21, 23)},
		{"past the end", sendloop.CampaignDataParams{Page: 4}, "&CampaignID=1&Page=4", nil},
		{"largest page", sendloop.CampaignDataParams{Limit: 50}, "&CampaignID=1&Limit=50", idRange(1, 23)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.c.CampaignData.Forwards(ctx, id, tt.p)
			require.NoError(t, err)
			assert.Equal(t, tt.want, forwarders(got))
			req := w.srv.LastRequest()
			assert.Equal(t, "data.campaign.forwards", req.Command)
			assert.Equal(t, keyParam(w.srv)+tt.body, string(req.Body))
		})
	}
	got, err := w.c.CampaignData.Forwards(ctx, id, sendloop.CampaignDataParams{Limit: 1})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, sendloop.CampaignForward{SubscriberID: 1, ListID: w.listID,
		ForwardDate: sendloop.DateTime{Time: campaignClock.Add(time.Hour)}}, got[0])
}

func TestCampaignDataIterWalksEveryPage(t *testing.T) {
	t.Parallel()
	w, id := forwardWorld(t, 23)
	ctx := context.Background()
	collect := func(p sendloop.CampaignDataParams, stopAfter int) ([]int, int) {
		before := len(requestsFor(w.srv, "data.campaign.forwards"))
		var ids []int
		for r, err := range w.c.CampaignData.ForwardsIter(ctx, id, p) {
			require.NoError(t, err)
			ids = append(ids, r.SubscriberID)
			if len(ids) == stopAfter {
				break
			}
		}
		return ids, len(requestsFor(w.srv, "data.campaign.forwards")) - before
	}
	ids, calls := collect(sendloop.CampaignDataParams{Limit: 5}, 0)
	assert.Equal(t, idRange(1, 23), ids)
	assert.Equal(t, 5, calls, "the short fifth page ends the walk")

	ids, calls = collect(sendloop.CampaignDataParams{}, 0)
	assert.Equal(t, idRange(1, 23), ids)
	assert.Equal(t, 3, calls, "default page size 10")

	ids, calls = collect(sendloop.CampaignDataParams{Limit: 5, Page: 3}, 0)
	assert.Equal(t, idRange(11, 23), ids, "from the given page")
	assert.Equal(t, 3, calls)

	ids, calls = collect(sendloop.CampaignDataParams{Limit: 5}, 7)
	assert.Equal(t, idRange(1, 7), ids)
	assert.Equal(t, 2, calls, "breaking stops the walk")

	// Each walk starts afresh from the caller's parameters.
	it := w.c.CampaignData.ForwardsIter(ctx, id, sendloop.CampaignDataParams{Limit: 20})
	for range 2 {
		n := 0
		for _, err := range it {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, 23, n)
	}
}

func TestCampaignDataIterStopsOnAFullLastPage(t *testing.T) {
	t.Parallel()
	w, id := forwardWorld(t, 20)
	n := 0
	for _, err := range w.c.CampaignData.ForwardsIter(context.Background(), id, sendloop.CampaignDataParams{}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 20, n)
	reqs := requestsFor(w.srv, "data.campaign.forwards")
	require.Len(t, reqs, 3, "two full pages and an empty one")
	assert.Equal(t, keyParam(w.srv)+"&CampaignID=1&Page=3", string(reqs[2].Body))
}

func TestCampaignDataIterErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("an error is yielded once and ends the walk", func(t *testing.T) {
		t.Parallel()
		w, id := forwardWorld(t, 12)
		var records, errs int
		for _, err := range w.c.CampaignData.ForwardsIter(ctx, id, sendloop.CampaignDataParams{Limit: 5}) {
			if err != nil {
				errs++
				require.ErrorIs(t, err, sendloop.ErrCommandDisabled)
				continue
			}
			if records++; records == 1 {
				w.srv.InjectFault("data.campaign.forwards", sendlooptest.Fault{ErrorCode: 123})
			}
		}
		assert.Equal(t, 5, records)
		assert.Equal(t, 1, errs)
	})

	t.Run("a page that repeats the previous one", func(t *testing.T) {
		t.Parallel()
		w, id := forwardWorld(t, 12)
		first, err := w.c.CallRaw(ctx, "data.campaign.forwards", map[string]string{"CampaignID": "1", "Limit": "5"}, sendloop.FormatJSON)
		require.NoError(t, err)
		var records int
		var walkErr error
		for _, err := range w.c.CampaignData.ForwardsIter(ctx, id, sendloop.CampaignDataParams{Limit: 5}) {
			if err != nil {
				require.NoError(t, walkErr, "one error only")
				walkErr = err
				continue
			}
			if records++; records == 1 {
				// The service ignores Page from now on.
				w.srv.InjectFault("data.campaign.forwards", sendlooptest.Fault{Status: 200, Body: string(first), Times: 5})
			}
		}
		assert.Equal(t, 5, records)
		require.ErrorContains(t, walkErr, "data.campaign.forwards: page 2: the page repeats the previous one")
		assert.Len(t, requestsFor(w.srv, "data.campaign.forwards"), 3, "one raw call, then pages 1 and 2")
	})

	t.Run("invalid parameters are yielded before anything is sent", func(t *testing.T) {
		t.Parallel()
		c, srv := newTestClient(t)
		var errs []error
		for _, err := range c.CampaignData.BouncesIter(ctx, 1, sendloop.CampaignDataParams{Limit: 51}) {
			errs = append(errs, err)
		}
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], sendloop.ErrInvalidParameterValue)
		assert.Empty(t, srv.Requests())
	})
}

func TestCampaignDataRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		id    int
		p     sendloop.CampaignDataParams
		want  error
		field string
	}{
		{"no campaign", 0, sendloop.CampaignDataParams{Limit: 5}, sendloop.ErrMissingParameters, "CampaignID"},
		{"negative campaign", -1, sendloop.CampaignDataParams{}, sendloop.ErrInvalidParameterValue, "CampaignID"},
		{"limit over 50", 1, sendloop.CampaignDataParams{Limit: sendloop.MaxDataLimit + 1}, sendloop.ErrInvalidParameterValue, "Limit"},
		{"negative limit", 1, sendloop.CampaignDataParams{Limit: -1}, sendloop.ErrInvalidParameterValue, "Limit"},
		{"negative page", 1, sendloop.CampaignDataParams{Page: -2}, sendloop.ErrInvalidParameterValue, "Page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			ctx := context.Background()
			calls := []func() error{
				func() error { _, err := c.CampaignData.Unsubscriptions(ctx, tt.id, tt.p); return err },
				func() error { _, err := c.CampaignData.OpenLocations(ctx, tt.id, tt.p); return err },
				func() error { _, err := c.CampaignData.Forwards(ctx, tt.id, tt.p); return err },
				func() error { _, err := c.CampaignData.BrowserViews(ctx, tt.id, tt.p); return err },
				func() error { _, err := c.CampaignData.Bounces(ctx, tt.id, tt.p); return err },
			}
			for _, call := range calls {
				err := call()
				require.ErrorIs(t, err, tt.want)
				var ve *sendloop.ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, []string{tt.field}, ve.Fields)
			}
			assert.Empty(t, srv.Requests(), "nothing may be sent")
		})
	}
}

func TestCampaignDataServerChecks(t *testing.T) {
	t.Parallel()
	w, id := forwardWorld(t, 1)
	ctx := context.Background()
	_, err := w.c.CampaignData.Forwards(ctx, id+1, sendloop.CampaignDataParams{})
	require.ErrorIs(t, err, sendloop.ErrNotFound)
	// What the client refuses, the fake refuses as well.
	for _, params := range []map[string]string{
		{"CampaignID": "1", "Limit": "51"}, {"CampaignID": "1", "Limit": "0"}, {"CampaignID": "1", "Page": "0"}, {"CampaignID": "1", "Limit": "ten"},
	} {
		err := w.c.Call(ctx, "data.campaign.forwards", params, nil)
		require.ErrorIs(t, err, sendloop.ErrInvalidParameterValue, "%v", params)
	}
	err = w.c.Call(ctx, "data.campaign.forwards", map[string]string{"Limit": "5"}, nil)
	require.ErrorIs(t, err, sendloop.ErrMissingParameters)
}

func TestCampaignDataRecords(t *testing.T) {
	t.Parallel()
	w := newCampaignWorld(t, 3)
	id := w.sentCampaign(t)
	e := w.emails
	require.NoError(t, w.srv.SimulateEvents(id,
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: e[0], After: time.Hour, Country: "GB", City: "London",
			Latitude: 51.5072, Longitude: -0.1276, ContentCode: "A"},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventOpen, Email: e[1], After: time.Hour}, // no location: not a record
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventBrowserView, Email: e[1], After: 2 * time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventSoftBounce, Email: e[1], After: 3 * time.Hour},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventHardBounce, Email: e[2]},
		sendlooptest.CampaignEvent{Kind: sendlooptest.EventUnsubscription, Email: e[0], After: oneDay, Channel: "Email link"},
	))
	ctx := context.Background()
	p := sendloop.CampaignDataParams{}
	at := func(d time.Duration) sendloop.DateTime { return sendloop.DateTime{Time: campaignClock.Add(d)} }

	locations, err := w.c.CampaignData.OpenLocations(ctx, id, p)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignOpenLocation{{SubscriberID: 1, DetectionDate: at(time.Hour), CountryCode: "GB",
		City: "London", Latitude: 51.5072, Longitude: -0.1276, ContentCode: "A"}}, locations)

	views, err := w.c.CampaignData.BrowserViews(ctx, id, p)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignBrowserView{{SubscriberID: 2, ListID: w.listID, ViewDate: at(2 * time.Hour)}}, views)

	bounces, err := w.c.CampaignData.Bounces(ctx, id, p)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignBounce{
		{SubscriberID: 3, ListID: w.listID, BounceType: sendloop.BounceHard, BounceDate: at(0)},
		{SubscriberID: 2, ListID: w.listID, BounceType: sendloop.BounceSoft, BounceDate: at(3 * time.Hour)},
	}, bounces)

	unsubs, err := w.c.CampaignData.Unsubscriptions(ctx, id, p)
	require.NoError(t, err)
	assert.Equal(t, []sendloop.CampaignUnsubscription{{SubscriberID: 1, ListID: w.listID, UnsubscriptionDate: at(oneDay),
		Channel: "Email link"}}, unsubs)

	assert.Equal(t, 1, countRecords(t, w.c.CampaignData.UnsubscriptionsIter(ctx, id, p)))
	assert.Equal(t, 1, countRecords(t, w.c.CampaignData.OpenLocationsIter(ctx, id, p)))
	assert.Equal(t, 1, countRecords(t, w.c.CampaignData.BrowserViewsIter(ctx, id, p)))
	assert.Equal(t, 2, countRecords(t, w.c.CampaignData.BouncesIter(ctx, id, p)))
	for _, command := range []string{"data.campaign.unsubscriptions", "data.campaign.openlocations", "data.campaign.browserviews", "data.campaign.bounces"} {
		reqs := requestsFor(w.srv, command)
		require.Len(t, reqs, 2, command) // the page, then the walk's one short page
		assert.Equal(t, "/api/v3/"+command+"/json", reqs[0].Path)
		assert.Equal(t, keyParam(w.srv)+"&CampaignID=1", string(reqs[0].Body), command)
		assert.Equal(t, keyParam(w.srv)+"&CampaignID=1&Page=1", string(reqs[1].Body), "the walk names its pages: "+command)
	}
}

func TestOpenLocationAcceptsBothSpellings(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"SubscriberID":"4","Latitude":"48.85","Longtitude":"2.35","CountryCode":"FR"}`,
		`{"SubscriberID":4,"Latitude":48.85,"Longitude":2.35,"CountryCode":"FR"}`,
	} {
		var r sendloop.CampaignOpenLocation
		require.NoError(t, r.UnmarshalJSON([]byte(in)))
		assert.Equal(t, sendloop.CampaignOpenLocation{SubscriberID: 4, Latitude: 48.85, Longitude: 2.35, CountryCode: "FR"}, r)
	}
	var u sendloop.CampaignUnsubscription
	require.NoError(t, u.UnmarshalJSON([]byte(`{"UnsubscriptionDate":"2026-01-02","ListID":"3"}`)))
	assert.Equal(t, "2026-01-02 00:00:00", u.UnsubscriptionDate.String(), "a bare date is accepted")
	assert.Error(t, new(sendloop.CampaignBounce).UnmarshalJSON([]byte(`{"BounceDate":"yesterday"}`)))
}

// Records carry no unique ID: a page whose first record equals the previous page's first
// is not a repeated page unless all of it is.
func TestCampaignDataIterKeepsEqualRecordsOfDifferentPages(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"1": `{"Success":true,"Data":[{"SubscriberID":"7","ListID":"1","ViewDate":"2026-11-21 10:00:00"},{"SubscriberID":"8","ListID":"1","ViewDate":"2026-11-21 10:00:01"}]}`,
		"2": `{"Success":true,"Data":[{"SubscriberID":"7","ListID":"1","ViewDate":"2026-11-21 10:00:00"},{"SubscriberID":"9","ListID":"1","ViewDate":"2026-11-21 10:00:02"}]}`,
		"3": `{"Success":true,"Data":[]}`,
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		_, _ = w.Write([]byte(pages[r.PostForm.Get("Page")]))
	}))
	defer hs.Close()
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(hs.URL))
	require.NoError(t, err)
	var ids []int
	for v, err := range c.CampaignData.BrowserViewsIter(context.Background(), 1, sendloop.CampaignDataParams{Limit: 2}) {
		require.NoError(t, err)
		ids = append(ids, v.SubscriberID)
	}
	assert.Equal(t, []int{7, 8, 7, 9}, ids)
}

func TestFakeAnswersAHugePageWithNothing(t *testing.T) {
	t.Parallel()
	w, _ := forwardWorld(t, 3)
	var out struct{ Data []any }
	require.NoError(t, w.c.Call(context.Background(), "data.campaign.forwards",
		map[string]string{"CampaignID": "1", "Limit": "50", "Page": "999999999999999999"}, &out))
	assert.Empty(t, out.Data)
}

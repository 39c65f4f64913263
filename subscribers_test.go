package sendloop_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/webhook"
)

func TestSubscribeSingleOptIn(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	field, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "Name"})
	require.NoError(t, err)

	res, err := c.Subscribers.Subscribe(context.Background(), id, sendloop.SubscriberSubscribeParams{EmailAddress: "ann@example.com", SubscriptionIP: "192.0.2.7", Fields: sendloop.CustomFields{field: "Ann Ó"}})
	require.NoError(t, err)
	assert.Equal(t, keyParam(srv)+"&EmailAddress=ann%40example.com&Fields%5BCustomField1%5D=Ann+%C3%93&ListID=1&SubscriptionIP=192.0.2.7",
		string(srv.LastRequest().Body))
	assert.Equal(t, 1, res.SubscriberID)
	assert.Equal(t, sendloop.StatusSubscribed, res.SubscriptionStatus)
	assert.NotEmpty(t, res.RedirectURL)
	assert.Empty(t, srv.Outbox(), "single opt-in sends no confirmation")

	sub, err := c.Subscribers.Get(context.Background(), id, sendloop.SubscriberGetParams{EmailAddress: "ann@example.com"})
	require.NoError(t, err)
	assert.Equal(t, "Ann Ó", sub.CustomFields[field])
	assert.Equal(t, "192.0.2.7", sub.SubscriptionIP)
	assert.False(t, sub.OptInDate.IsZero())
	assert.True(t, sub.UnsubscriptionDate.IsZero())
	assert.Equal(t, sendloop.BounceNone, sub.BounceType)
}

// TestSubscriptionStateMachine walks the spec's table: double opt-in → Confirmation
// Pending with a confirmation email; confirmation → Subscribed, webhook, welcome email;
// unsubscription → Unsubscribed and its webhook, all received by the webhook package.
func TestSubscriptionStateMachine(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []*webhook.Event
	handler, err := webhook.NewHandler(func(_ context.Context, ev *webhook.Event) error {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
		return nil
	}, webhook.WithToken("s3cret"), webhook.WithListIDParam("list"))
	require.NoError(t, err)
	hooks := httptest.NewServer(handler)
	defer hooks.Close()

	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInDouble)
	field, _ := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "Plan"})
	welcome := sendloop.FinalActionSendEmail
	require.NoError(t, c.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{
		SubscriptionFinalAction: &welcome,
		// The callback names no list: each list's URLs carry its ID.
		WebServiceSubscriptionURL:   sendloop.String(fmt.Sprintf("%s/subscribed?token=s3cret&list=%d", hooks.URL, id)),
		WebServiceUnsubscriptionURL: sendloop.String(fmt.Sprintf("%s/unsubscribed?token=s3cret&list=%d", hooks.URL, id)),
	}))

	res, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: "bo@example.com", SubscriptionIP: "192.0.2.8", Fields: sendloop.CustomFields{field: "pro"}})
	require.NoError(t, err)
	assert.Equal(t, sendloop.StatusConfirmationPending, res.SubscriptionStatus)
	outbox := srv.Outbox()
	require.Len(t, outbox, 1)
	assert.Equal(t, sendlooptest.OptInConfirmation, outbox[0].Kind)
	assert.Equal(t, "bo@example.com", outbox[0].To)
	assert.Empty(t, srv.Webhooks(), "no webhook before confirmation")

	require.NoError(t, srv.Confirm(id, "bo@example.com"))
	sub, err := c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{SubscriberID: res.SubscriberID})
	require.NoError(t, err)
	assert.Equal(t, sendloop.StatusSubscribed, sub.SubscriptionStatus)
	outbox = srv.Outbox()
	require.Len(t, outbox, 2)
	assert.Equal(t, sendlooptest.Welcome, outbox[1].Kind)
	require.Error(t, srv.Confirm(id, "bo@example.com"), "nothing left to confirm")

	require.NoError(t, c.Subscribers.UnsubscribeFromAllLists(ctx, "bo@example.com"))
	assert.Equal(t, keyParam(srv)+"&EmailAddress=bo%40example.com", string(srv.LastRequest().Body))
	sub, err = c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{EmailAddress: "bo@example.com"})
	require.NoError(t, err)
	assert.Equal(t, sendloop.StatusUnsubscribed, sub.SubscriptionStatus)
	assert.False(t, sub.UnsubscriptionDate.IsZero())

	deliveries := srv.Webhooks()
	require.Len(t, deliveries, 2)
	for _, d := range deliveries {
		assert.True(t, d.Delivered, "%+v", d)
		assert.Equal(t, 1, d.Attempts)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 2)
	assert.Equal(t, webhook.KindSubscription, events[0].Kind)
	assert.Equal(t, webhook.KindUnsubscription, events[1].Kind)
	for _, ev := range events {
		assert.Equal(t, id, ev.ListID)
		assert.Equal(t, "bo@example.com", ev.Subscriber.EmailAddress)
		assert.Equal(t, res.SubscriberID, ev.Subscriber.SubscriberID)
		assert.Equal(t, "pro", ev.Subscriber.CustomFields[field])
		assert.False(t, ev.Time.IsZero())
	}
	assert.Equal(t, sendloop.StatusSubscribed, events[0].Subscriber.SubscriptionStatus)
	assert.Equal(t, sendloop.StatusUnsubscribed, events[1].Subscriber.SubscriptionStatus)
}

func TestWebhookDeliveryRetriesAndGivesUp(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer hooks.Close()
	c, srv := newTestClient(t)
	srv.SetWebhookPolicy(sendlooptest.WebhookPolicy{Attempts: 3, Backoff: 1})
	id := newList(t, c, sendloop.OptInSingle)
	require.NoError(t, c.Lists.UpdateSettings(context.Background(), id, sendloop.ListSettingsUpdateParams{WebServiceUnsubscriptionURL: sendloop.String(hooks.URL)}))
	subscribe(t, c, id, "cy@example.com")
	require.NoError(t, c.Subscribers.UnsubscribeFromAllLists(context.Background(), "cy@example.com"))
	d := srv.Webhooks()
	require.Len(t, d, 1)
	assert.False(t, d[0].Delivered)
	assert.Equal(t, 3, d[0].Attempts)
	assert.Equal(t, 500, d[0].StatusCode)
	mu.Lock()
	assert.Equal(t, 3, calls)
	mu.Unlock()
}

func TestSubscriberErrorCodes(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)
	subscribe(t, c, id, "dup@example.com")
	_, err := srv.Suppress(0, "blocked@example.com", "FBL Report")
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"already in the list", func() error {
			_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: "dup@example.com", SubscriptionIP: "192.0.2.1"})
			return err
		}, sendloop.ErrEmailExists},
		{"unknown list", func() error {
			_, err := c.Subscribers.Subscribe(ctx, 99, sendloop.SubscriberSubscribeParams{EmailAddress: "x@example.com", SubscriptionIP: "192.0.2.1"})
			return err
		}, sendloop.ErrListNotFound},
		{"suppressed", func() error {
			_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: "blocked@example.com", SubscriptionIP: "192.0.2.1"})
			return err
		}, sendloop.ErrInvalidEmail},
		{"unknown custom field", func() error {
			_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: "f@example.com", SubscriptionIP: "192.0.2.1", Fields: sendloop.CustomFields{77: "x"}})
			return err
		}, sendloop.ErrCustomFieldNotFound},
		{"unsubscribe a stranger", func() error { return c.Subscribers.UnsubscribeFromAllLists(ctx, "nobody@example.com") }, sendloop.ErrSubscriberNotFound},
		{"get a stranger", func() error {
			_, err := c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{EmailAddress: "nobody@example.com"})
			return err
		}, sendloop.ErrSubscriberNotFound},
		{"update a stranger", func() error {
			return c.Subscribers.Update(ctx, id, sendloop.SubscriberUpdateParams{SubscriberID: 999, EmailAddress: "new@example.com"})
		}, sendloop.ErrSubscriberNotFound},
		{"browse an unknown segment", func() error {
			_, err := c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{SegmentID: 5})
			return err
		}, sendloop.ErrSegmentNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.ErrorIs(t, err, tt.want)
			var apiErr *sendloop.APIError
			require.ErrorAs(t, err, &apiErr, "the service said so")
		})
	}

	// The fake refuses bad addresses too (111), for callers that bypass the SDK's checks.
	err = c.Call(ctx, "subscriber.subscribe", map[string]string{"ListID": "1", "EmailAddress": "not-an-address", "SubscriptionIP": "192.0.2.1"}, nil)
	require.ErrorIs(t, err, sendloop.ErrInvalidEmailFormat)
}

func TestSubscriberRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		command string
		call    func(c *sendloop.Client) error
		want    error
	}{
		{"subscribe without list", "subscriber.subscribe", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Subscribe(ctx, 0, sendloop.SubscriberSubscribeParams{EmailAddress: "a@example.com", SubscriptionIP: "192.0.2.1"})
			return err
		}, sendloop.ErrMissingParameters},
		{"subscribe a malformed address", "subscriber.subscribe", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: "a@", SubscriptionIP: "192.0.2.1"})
			return err
		}, sendloop.ErrInvalidEmailFormat},
		{"subscribe without IP", "subscriber.subscribe", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: "a@example.com"})
			return err
		}, sendloop.ErrMissingParameters},
		{"subscribe from an IP holding a control character", "subscriber.subscribe", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: "a@example.com", SubscriptionIP: "192.0.2.1\x00"})
			return err
		}, sendloop.ErrInvalidParameterValue},
		{"get by neither", "subscriber.get", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{})
			return err
		}, sendloop.ErrMissingParameters},
		{"get by both", "subscriber.get", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{SubscriberID: 1, EmailAddress: "a@example.com"})
			return err
		}, sendloop.ErrInvalidParameterValue},
		{"update nobody", "subscriber.update", func(c *sendloop.Client) error {
			return c.Subscribers.Update(ctx, 1, sendloop.SubscriberUpdateParams{})
		}, sendloop.ErrMissingParameters},
		{"unsubscribe empty", "subscriber.unsubscribe", func(c *sendloop.Client) error {
			return c.Subscribers.UnsubscribeFromAllLists(ctx, "")
		}, sendloop.ErrMissingParameters},
		{"search empty", "subscriber.search", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Search(ctx, " ")
			return err
		}, sendloop.ErrMissingParameters},
		{"browse a negative page", "subscriber.browse", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Browse(ctx, 1, sendloop.SubscriberBrowseParams{StartIndex: -1})
			return err
		}, sendloop.ErrInvalidParameterValue},
		{"import nothing", "subscriber.import", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Import(ctx, 1, sendloop.SubscriberImportParams{Subscribers: nil})
			return err
		}, sendloop.ErrMissingParameters},
		{"import a malformed row", "subscriber.import", func(c *sendloop.Client) error {
			_, err := c.Subscribers.Import(ctx, 1, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "ok@example.com"}, {EmailAddress: "bad"}}})
			return err
		}, sendloop.ErrInvalidEmailFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			err := tt.call(c)
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Empty(t, requestsFor(srv, tt.command))
		})
	}
}

func TestSubscriberUpdate(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)
	field, _ := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "City"})
	res := subscribe(t, c, id, "old@example.com")

	require.NoError(t, c.Subscribers.Update(ctx, id, sendloop.SubscriberUpdateParams{EmailAddress: "old@example.com", Fields: sendloop.CustomFields{field: "Lyon"}}))
	assert.Equal(t, keyParam(srv)+"&EmailAddress=old%40example.com&Fields%5BCustomField1%5D=Lyon&ListID=1", string(srv.LastRequest().Body))

	require.NoError(t, c.Subscribers.Update(ctx, id, sendloop.SubscriberUpdateParams{SubscriberID: res.SubscriberID, EmailAddress: "new@example.com"}))
	sub, err := c.Subscribers.Get(ctx, id, sendloop.SubscriberGetParams{SubscriberID: res.SubscriberID})
	require.NoError(t, err)
	assert.Equal(t, "new@example.com", sub.EmailAddress)
	assert.Equal(t, "Lyon", sub.CustomFields[field])
}

func TestBrowsePagingAndSegments(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)
	field, _ := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "Tier"})
	rows := make([]sendloop.ImportSubscriber, 250)
	for i := range rows {
		tier := "basic"
		if i%10 == 0 {
			tier = "gold"
		}
		rows[i] = sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("s%03d@example.com", i), Fields: sendloop.CustomFields{field: tier}}
	}
	res, err := c.Subscribers.Import(ctx, id, sendloop.SubscriberImportParams{Subscribers: rows})
	require.NoError(t, err)
	assert.Equal(t, sendloop.SubscriberImportResult{Imported: 250}, *res)

	page, err := c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{})
	require.NoError(t, err)
	require.Len(t, page, 100)
	assert.Equal(t, "s000@example.com", page[0].EmailAddress)
	page, err = c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{StartIndex: 2})
	require.NoError(t, err)
	assert.Equal(t, keyParam(srv)+"&ListID=1&StartIndex=2", string(srv.LastRequest().Body))
	require.Len(t, page, 50)
	assert.Equal(t, "s200@example.com", page[0].EmailAddress)
	page, err = c.Subscribers.Browse(ctx, id, sendloop.SubscriberBrowseParams{StartIndex: 3})
	require.NoError(t, err)
	assert.Empty(t, page)

	var all []string
	for sub, err := range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}) {
		require.NoError(t, err)
		all = append(all, sub.EmailAddress)
	}
	assert.Len(t, all, 250)
	assert.Equal(t, "s249@example.com", all[249])
	assert.Len(t, requestsFor(srv, "subscriber.browse"), 3+3, "three pages, the last one short")

	seg, err := srv.DefineSegment(id, "Gold", field, "gold")
	require.NoError(t, err)
	gold := 0
	for sub, err := range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{SegmentID: seg}) {
		require.NoError(t, err)
		assert.Equal(t, "gold", sub.CustomFields[field])
		gold++
	}
	assert.Equal(t, 25, gold)
}

func TestBrowseIterStopsEarlyAndOnErrors(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)
	rows := make([]sendloop.ImportSubscriber, 150)
	for i := range rows {
		rows[i].EmailAddress = fmt.Sprintf("r%d@example.com", i)
	}
	_, err := c.Subscribers.Import(ctx, id, sendloop.SubscriberImportParams{Subscribers: rows})
	require.NoError(t, err)

	n := 0
	for range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}) {
		n++
		if n == 5 {
			break
		}
	}
	assert.Equal(t, 5, n)
	assert.Len(t, requestsFor(srv, "subscriber.browse"), 1, "breaking out fetches no further page")

	srv.InjectFault("subscriber.browse", sendlooptest.Fault{Status: 500})
	var errs []error
	for _, err := range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1, "one error, then the iterator stops")
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, errs[0], &httpErr)
}

func TestBrowseIterRefusesAPageThatDoesNotAdvance(t *testing.T) {
	t.Parallel()
	page := `{"Success":true,"Subscribers":[` + repeatJoin(`{"SubscriberID":"1","EmailAddress":"same@example.com"}`, 100) + `]}`
	c := cannedClient(t, 200, page)
	n := 0
	var last error
	for _, err := range c.Subscribers.BrowseIter(context.Background(), 1, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			last = err
			break
		}
		n++
	}
	assert.Equal(t, 100, n)
	require.ErrorContains(t, last, "repeats")
}

func repeatJoin(s string, n int) string {
	out := s
	for i := 1; i < n; i++ {
		out += "," + s
	}
	return out
}

func TestImportCountsDuplicatesAndFailures(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInDouble)
	subscribe(t, c, id, "old@example.com")
	_, _ = srv.Suppress(id, "blocked@example.com", "Manual")
	field, _ := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "N"})

	res, err := c.Subscribers.Import(ctx, id, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{
		{EmailAddress: "new@example.com", Fields: sendloop.CustomFields{field: "x"}},
		{EmailAddress: "old@example.com"},
		{EmailAddress: "new@example.com"},
		{EmailAddress: "blocked@example.com"},
	}})
	require.NoError(t, err)
	assert.Equal(t, sendloop.SubscriberImportResult{Imported: 1, Duplicate: 2, Failed: 1}, *res)
	assert.Equal(t, keyParam(srv)+"&ListID=1&Subscribers%5B0%5D%5BEmailAddress%5D=new%40example.com&Subscribers%5B0%5D%5BCustomField1%5D=x"+
		"&Subscribers%5B1%5D%5BEmailAddress%5D=old%40example.com&Subscribers%5B2%5D%5BEmailAddress%5D=new%40example.com"+
		"&Subscribers%5B3%5D%5BEmailAddress%5D=blocked%40example.com", string(srv.LastRequest().Body))
	status, ok := srv.SubscriberStatus(id, "new@example.com")
	assert.True(t, ok)
	assert.Equal(t, "Subscribed", status, "imports skip the opt-in")
	assert.Len(t, srv.Outbox(), 1, "only the earlier double opt-in subscription mailed")
}

// rowsOf turns addresses into an import sequence.
func rowsOf(emails ...string) iter.Seq[sendloop.ImportSubscriber] {
	return func(yield func(sendloop.ImportSubscriber) bool) {
		for _, e := range emails {
			if !yield(sendloop.ImportSubscriber{EmailAddress: e}) {
				return
			}
		}
	}
}

func TestImportAllReportsEveryFailedRow(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id := newList(t, c, sendloop.OptInSingle)
	subscribe(t, c, id, "r3@example.com")
	for _, e := range []string{"r17@example.com", "r40@example.com", "r41@example.com"} {
		_, err := srv.Suppress(0, e, "FBL Report")
		require.NoError(t, err)
	}
	emails := make([]string, 100)
	for i := range emails {
		emails[i] = fmt.Sprintf("r%d@example.com", i)
	}
	emails[55] = "not an address"

	var mu sync.Mutex
	var progress []sendloop.ImportProgress
	report, err := c.Subscribers.ImportAll(ctx, id, rowsOf(emails...), sendloop.ImportOptions{
		BatchSize: 16, Concurrency: 3,
		OnProgress: func(p sendloop.ImportProgress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
	})
	require.NoError(t, err)
	assert.Equal(t, 100, report.Rows)
	assert.Equal(t, 95, report.Imported)
	assert.Equal(t, 1, report.Duplicate)
	assert.Equal(t, 0, report.Unattributed)
	failed := map[int]error{}
	for _, f := range report.Failed {
		failed[f.Index] = f.Err
		assert.Equal(t, emails[f.Index], f.Subscriber.EmailAddress)
	}
	require.Len(t, failed, 4)
	assert.ErrorIs(t, failed[55], sendloop.ErrInvalidEmailFormat, "refused before sending")
	for _, i := range []int{17, 40, 41} {
		assert.ErrorIs(t, failed[i], sendloop.ErrRowRefused)
	}
	assert.Equal(t, 96, srv.SubscriberCount(id))
	for _, r := range requestsFor(srv, "subscriber.import") {
		assert.NotContains(t, string(r.Body), "not+an+address", "an invalid row is never sent")
	}

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, progress)
	finalProgress := progress[len(progress)-1]
	assert.Equal(t, sendloop.ImportProgress{Rows: 100, Imported: 95, Duplicate: 1, Failed: 4}, finalProgress)
}

func TestImportAllStopsOnAnErrorEveryBatchWouldGet(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	emails := make([]string, 1000)
	for i := range emails {
		emails[i] = fmt.Sprintf("x%d@example.com", i)
	}
	report, err := c.Subscribers.ImportAll(context.Background(), 77, rowsOf(emails...), sendloop.ImportOptions{BatchSize: 10, Concurrency: 2})
	require.ErrorIs(t, err, sendloop.ErrListNotFound)
	assert.Less(t, len(requestsFor(srv, "subscriber.import")), 20, "it stops early")
	assert.Equal(t, report.Rows, len(report.Failed)+report.NotAttempted, "every row read is accounted for")
	assert.Less(t, report.Rows, 1000, "rows not read are left in the sequence")
	for _, f := range report.Failed {
		require.ErrorIs(t, f.Err, sendloop.ErrListNotFound, "a failed row carries its call's answer, never the stop")
	}
}

func TestImportAllFailsABatchOnACallError(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	srv.InjectFault("subscriber.import", sendlooptest.Fault{Status: 500})
	report, err := c.Subscribers.ImportAll(context.Background(), id, rowsOf("a@example.com", "b@example.com", "c@example.com"),
		sendloop.ImportOptions{BatchSize: 2, Concurrency: 1})
	require.NoError(t, err, "a failed batch does not stop the import")
	require.Len(t, report.Failed, 2)
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, report.Failed[0].Err, &httpErr)
	assert.Equal(t, 1, report.Imported)
}

func TestImportAllHonoursCancellation(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	ctx, cancel := context.WithCancel(context.Background())
	endless := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := 0; ; i++ {
			if i == 250 {
				cancel()
			}
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("e%d@example.com", i)}) {
				return
			}
		}
	}
	report, err := c.Subscribers.ImportAll(ctx, id, endless, sendloop.ImportOptions{BatchSize: 50, Concurrency: 2})
	require.ErrorIs(t, err, context.Canceled, "a cut-short import says so")
	assert.Equal(t, report.Rows, report.Imported+report.Duplicate+len(report.Failed)+report.Unattributed+report.NotAttempted)
	assert.GreaterOrEqual(t, report.Rows, 251, "the row in hand when the context ended is counted")
	assert.Empty(t, report.Failed, "nothing refused the rows a cancellation left unsent")
	assert.Positive(t, report.NotAttempted)
}

func TestImportAllCountsRowsAFatalErrorLeftUnsentAsNotAttempted(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			// The first batch is held until the import, stopped by the fatal answer to
			// another, gives up on it: rows are then queued, and some never sent.
			_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client go away
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
				t.Error("the import did not cancel the batch in flight after a fatal answer")
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Success":false,"ErrorCode":104,"ErrorMessage":"Invalid API key"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL), sendloop.WithInsecureHTTP())
	require.NoError(t, err)
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range 1000 {
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("f%d@example.com", i)}) {
				return
			}
		}
	}
	report, err := c.Subscribers.ImportAll(context.Background(), 1, rows, sendloop.ImportOptions{BatchSize: 10, Concurrency: 2})
	require.ErrorIs(t, err, sendloop.ErrInvalidAPIKey)
	assert.Equal(t, report.Rows, report.Imported+report.Duplicate+len(report.Failed)+report.Unattributed+report.NotAttempted)
	assert.Less(t, report.Rows, 1000, "the import stops reading at a fatal error")
	assert.Positive(t, report.NotAttempted)
	for _, f := range report.Failed {
		assert.ErrorIs(t, f.Err, sendloop.ErrInvalidAPIKey, "only rows the service answered for are failed")
	}
}

func TestImportAllAccountsForEveryRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		rows     []string
		want     sendloop.ImportReport // Failed compared by length
		failures int
	}{
		{"totals that leave rows out", `{"Success":true,"TotalImported":1,"TotalDuplicate":0,"TotalFailed":0}`,
			[]string{"a@example.com", "b@example.com", "c@example.com"}, sendloop.ImportReport{Rows: 3, Imported: 1, Unattributed: 2}, 0},
		{"repeats in a batch are duplicates, not sent", `{"Success":true,"TotalImported":2,"TotalDuplicate":0,"TotalFailed":0}`,
			[]string{"a@example.com", "A@example.com", "b@example.com"}, sendloop.ImportReport{Rows: 3, Imported: 2, Duplicate: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cannedClient(t, 200, tt.body)
			report, err := c.Subscribers.ImportAll(context.Background(), 1, rowsOf(tt.rows...), sendloop.ImportOptions{BatchSize: 10})
			require.NoError(t, err)
			assert.Len(t, report.Failed, tt.failures)
			report.Failed = nil
			assert.Equal(t, tt.want.Rows, report.Rows)
			assert.Equal(t, report.Rows, report.Imported+report.Duplicate+tt.failures+report.Unattributed)
			assert.Equal(t, tt.want.Imported, report.Imported)
			assert.Equal(t, tt.want.Duplicate, report.Duplicate)
		})
	}
}

func TestImportAllGivesUpWhenEveryBatchFails(t *testing.T) {
	t.Parallel()
	emails := make([]string, 1000)
	for i := range emails {
		emails[i] = fmt.Sprintf("g%d@example.com", i)
	}
	for _, status := range []int{404, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			id := newList(t, c, sendloop.OptInSingle)
			srv.InjectFault("subscriber.import", sendlooptest.Fault{Times: 1000, Status: status})
			report, err := c.Subscribers.ImportAll(context.Background(), id, rowsOf(emails...), sendloop.ImportOptions{BatchSize: 10, Concurrency: 1})
			var httpErr *sendloop.HTTPError
			require.ErrorAs(t, err, &httpErr)
			assert.Equal(t, status, httpErr.HTTPStatus)
			calls := len(requestsFor(srv, "subscriber.import"))
			assert.LessOrEqual(t, calls, 4)
			assert.Equal(t, report.Rows, len(report.Failed)+report.NotAttempted)
			assert.Len(t, report.Failed, 10*calls, "the rows of every answered call are failed, the rest not attempted")
		})
	}
}

func TestSubscribeRetriedAfterItRanIsASuccess(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	srv.InjectFault("subscriber.subscribe", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	res := subscribe(t, c, id, "once@example.com")
	assert.Equal(t, 1, res.SubscriberID)
	assert.Equal(t, 2, srv.Executions("subscriber.subscribe"))
	assert.Equal(t, 1, srv.SubscriberCount(id))

	srv.InjectFault("subscriber.unsubscribe", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	require.NoError(t, c.Subscribers.UnsubscribeFromAllLists(context.Background(), "once@example.com"))
	status, _ := srv.SubscriberStatus(id, "once@example.com")
	assert.Equal(t, "Unsubscribed", status)

	// Without an ambiguous failure, "already exists" is the caller's to see.
	srv.InjectFault("subscriber.subscribe", sendlooptest.Fault{Status: 503})
	res2, err := c.Subscribers.Subscribe(context.Background(), id, sendloop.SubscriberSubscribeParams{EmailAddress: "twice@example.com", SubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)
	_, err = c.Subscribers.Subscribe(context.Background(), id, sendloop.SubscriberSubscribeParams{EmailAddress: "twice@example.com", SubscriptionIP: "192.0.2.1"})
	require.ErrorIs(t, err, sendloop.ErrEmailExists)
	assert.NotZero(t, res2.SubscriberID)
}

func TestSubscriberUpdateWithNothingToChange(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	for _, p := range []sendloop.SubscriberUpdateParams{
		{SubscriberID: 3},
		{EmailAddress: "ann@example.com"},
	} {
		err := c.Subscribers.Update(context.Background(), 1, p)
		require.ErrorIs(t, err, sendloop.ErrMissingParameters)
		var ve *sendloop.ValidationError
		require.ErrorAs(t, err, &ve)
	}
	assert.Empty(t, requestsFor(srv, "subscriber.update"))
}

func TestSubscriptionIPIsSentAsGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want error // nil: sent as given
	}{
		{"192.0.2.7", nil},
		{"2001:db8::1", nil},
		{"unknown", nil},
		{"10.0.0.1, 192.0.2.7", nil}, // a proxy chain, as some frameworks record it
		{"", sendloop.ErrMissingParameters},
		{"  ", sendloop.ErrMissingParameters},
		{"192.0.2.7\r\nX: y", sendloop.ErrInvalidParameterValue},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			id := newList(t, c, sendloop.OptInSingle)
			_, err := c.Subscribers.Subscribe(context.Background(), id, sendloop.SubscriberSubscribeParams{EmailAddress: "ann@example.com", SubscriptionIP: tt.ip})
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Empty(t, requestsFor(srv, "subscriber.subscribe"))
				return
			}
			require.NoError(t, err)
			sub, err := c.Subscribers.Get(context.Background(), id, sendloop.SubscriberGetParams{EmailAddress: "ann@example.com"})
			require.NoError(t, err)
			assert.Equal(t, tt.ip, sub.SubscriptionIP)
		})
	}
}

// TestImportAllTellsUnknownFromFailed makes every attempt of some import calls end in a way
// that either proves nothing ran or leaves the outcome unknown: rows of calls that may have
// run are Unknown, never Failed, and the counts still add up to the rows read.
func TestImportAllTellsUnknownFromFailed(t *testing.T) {
	t.Parallel()
	emails := make([]string, 30)
	for i := range emails {
		emails[i] = fmt.Sprintf("u%d@example.com", i)
	}
	tests := []struct {
		name          string
		fault         sendlooptest.Fault
		failed, known int // rows in Failed and Unknown
		imported      int
	}{
		// The first batch's every attempt runs and loses its answer.
		{"reset after execution", sendlooptest.Fault{Times: 100, Reset: sendlooptest.ResetAfterExecution}, 0, 10, 0},
		// The service runs nothing and says so, on every attempt: a known failure.
		{"503 on every attempt", sendlooptest.Fault{Times: 100, Status: 503}, 10, 0, 20},
		{"a 500", sendlooptest.Fault{Status: 500}, 10, 0, 20},
		{"one lost answer, then an answer", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, 0, 0, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			id := newList(t, c, sendloop.OptInSingle)
			if tt.fault.Times > 1 {
				// Every attempt of the first call only: the others are answered.
				tt.fault.Times = fastRetry.MaxRetries + 1
			}
			srv.InjectFault("subscriber.import", tt.fault)
			var last sendloop.ImportProgress
			report, err := c.Subscribers.ImportAll(context.Background(), id, rowsOf(emails...),
				sendloop.ImportOptions{BatchSize: 10, Concurrency: 1, OnProgress: func(p sendloop.ImportProgress) { last = p }})
			require.NoError(t, err)
			assert.Len(t, report.Failed, tt.failed)
			require.Len(t, report.Unknown, tt.known)
			for i, row := range report.Unknown {
				assert.ErrorIs(t, row.Err, sendloop.ErrOutcomeUnknown)
				assert.Equal(t, i, row.Index)
				assert.Equal(t, emails[i], row.Subscriber.EmailAddress)
			}
			for _, row := range report.Failed {
				assert.NotErrorIs(t, row.Err, sendloop.ErrOutcomeUnknown)
			}
			if tt.known == 0 {
				assert.Equal(t, tt.imported, report.Imported)
			} else {
				// The lost attempts did import the rows: a second run finds them there.
				assert.Equal(t, 20, report.Imported)
				assert.Equal(t, 30, srv.SubscriberCount(id))
			}
			assert.Equal(t, 30, report.Rows)
			assert.Equal(t, report.Rows, report.Imported+report.Duplicate+len(report.Failed)+len(report.Unknown)+
				report.Unattributed+report.NotAttempted)
			assert.Equal(t, len(report.Unknown), last.Unknown)
			assert.Equal(t, last.Rows, last.Imported+last.Duplicate+last.Failed+last.Unknown)
		})
	}
}

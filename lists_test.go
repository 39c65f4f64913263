package sendloop_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestListsCreateGetUpdate(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()

	id, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Newsletter & Offers", OptInMode: sendloop.OptInDouble})
	require.NoError(t, err)
	assert.Equal(t, 1, id)
	assert.Equal(t, keyParam(srv)+"&Name=Newsletter+%26+Offers&OptInMode=Double", string(srv.LastRequest().Body))

	l, err := c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: false})
	require.NoError(t, err)
	assert.Equal(t, keyParam(srv)+"&GetCustomFields=0&ListID=1", string(srv.LastRequest().Body))
	assert.Equal(t, 1, l.ListID)
	assert.Equal(t, "Newsletter & Offers", l.Name)
	assert.Equal(t, sendloop.OptInDouble, l.OptInMode)
	assert.Equal(t, "This list", l.OptOutScope)
	assert.False(t, l.CreatedOn.IsZero())
	assert.Nil(t, l.CustomFields)

	require.NoError(t, c.Lists.Update(ctx, id, sendloop.ListUpdateParams{Name: "Offers", OptInMode: sendloop.OptInSingle}))
	assert.Equal(t, keyParam(srv)+"&ListID=1&Name=Offers&OptInMode=Single", string(srv.LastRequest().Body))
	l, err = c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: false})
	require.NoError(t, err)
	assert.Equal(t, "Offers", l.Name)
	assert.Equal(t, sendloop.OptInSingle, l.OptInMode)
}

func TestListsGetWithCustomFields(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	first, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "First name"})
	require.NoError(t, err)
	_, err = srv.DefineCustomField(id, sendlooptest.CustomField{Name: "Plan", Type: "Drop down", Options: "free|pro", DefaultValue: "free"})
	require.NoError(t, err)

	l, err := c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: true})
	require.NoError(t, err)
	assert.Equal(t, "1", srv.LastRequest().Form.Get("GetCustomFields"))
	require.Len(t, l.CustomFields, 2)
	assert.Equal(t, sendloop.CustomField{CustomFieldID: first, FieldName: "First name", FieldType: "Single line", FieldDataType: "Text"}, l.CustomFields[0])
	assert.Equal(t, "free|pro", l.CustomFields[1].FieldOptions)
	assert.Equal(t, "free", l.CustomFields[1].FieldDefaultValue)
}

func TestCustomFieldKeepsUnknownKeys(t *testing.T) {
	t.Parallel()
	var f sendloop.CustomField
	require.NoError(t, f.UnmarshalJSON([]byte(`{"CustomFieldID":"7","FieldName":"Age","FieldOptions":["a","b"],"IsRequired":"Yes","Validation":{"Min":1}}`)))
	assert.Equal(t, 7, f.CustomFieldID)
	assert.Equal(t, `["a","b"]`, f.FieldOptions)
	assert.Equal(t, map[string]string{"IsRequired": "Yes", "Validation": `{"Min":1}`}, f.Extra)
}

func TestListsList(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	now := day
	srv := sendlooptest.NewServer(t, sendlooptest.WithClock(func() time.Time { return now }))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()

	lists, err := c.Lists.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, lists, "no list yet: the service's [] decodes as none")

	a, _ := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "A", OptInMode: sendloop.OptInSingle})
	_, _ = c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "B", OptInMode: sendloop.OptInDouble})
	for i, email := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		now = day.AddDate(0, 0, -i%2)
		_, err := c.Subscribers.Subscribe(ctx, a, sendloop.SubscriberSubscribeParams{EmailAddress: email, SubscriptionIP: "192.0.2.1"})
		require.NoError(t, err)
	}
	now = day
	lists, err = c.Lists.List(ctx)
	require.NoError(t, err)
	require.Len(t, lists, 2)
	assert.Equal(t, "A", lists[0].Name)
	assert.Equal(t, 3, lists[0].ActiveSubscribers)
	assert.Equal(t, []sendloop.DailyCount{
		{Date: sendloop.NewDate(day.AddDate(0, 0, -1)), Count: 1},
		{Date: sendloop.NewDate(day), Count: 2},
	}, lists[0].SubscriptionActivity)
	assert.Empty(t, lists[1].SubscriptionActivity)
	assert.Equal(t, 0, lists[1].ActiveSubscribers)
}

func TestListsSettings(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id, _ := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInDouble})

	settings, err := c.Lists.Settings(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.FinalActionNothing, settings.SubscriptionFinalAction)
	assert.Equal(t, "", settings.WebServiceSubscriptionURL)

	action := sendloop.FinalActionSendEmail
	require.NoError(t, c.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{
		SubscriptionFinalAction:   &action,
		SubscriptionFinalSubject:  sendloop.String("Welcome aboard"),
		WebServiceSubscriptionURL: sendloop.String("https://hooks.example.com/subscribed?token=abc"),
	}))
	assert.Equal(t, keyParam(srv)+"&ListID=1&SubscriptionFinalAction=Send+Email&SubscriptionFinalSubject=Welcome+aboard"+
		"&WebServiceSubscriptionURL=https%3A%2F%2Fhooks.example.com%2Fsubscribed%3Ftoken%3Dabc", string(srv.LastRequest().Body))
	settings, err = c.Lists.Settings(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, sendloop.FinalActionSendEmail, settings.SubscriptionFinalAction)
	assert.Equal(t, "Welcome aboard", settings.SubscriptionFinalSubject)

	// A pointer to "" clears a setting.
	require.NoError(t, c.Lists.UpdateSettings(ctx, id, sendloop.ListSettingsUpdateParams{WebServiceSubscriptionURL: sendloop.String("")}))
	settings, err = c.Lists.Settings(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "", settings.WebServiceSubscriptionURL)
}

func TestListsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	bad := sendloop.FinalAction("Party")
	tests := []struct {
		name    string
		command string
		call    func(c *sendloop.Client) error
		want    error
	}{
		{"create without a name", "list.create", func(c *sendloop.Client) error {
			_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: " ", OptInMode: sendloop.OptInSingle})
			return err
		}, sendloop.ErrMissingParameters},
		{"create with an unknown mode", "list.create", func(c *sendloop.Client) error {
			_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "L", OptInMode: "Triple"})
			return err
		}, sendloop.ErrInvalidParameterValue},
		{"create without a mode", "list.create", func(c *sendloop.Client) error {
			_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "L", OptInMode: ""})
			return err
		}, sendloop.ErrMissingParameters},
		{"update to an unknown mode", "list.update", func(c *sendloop.Client) error {
			return c.Lists.Update(context.Background(), 1, sendloop.ListUpdateParams{OptInMode: "Triple"})
		}, sendloop.ErrInvalidParameterValue},
		{"update nothing", "list.update", func(c *sendloop.Client) error {
			return c.Lists.Update(context.Background(), 1, sendloop.ListUpdateParams{})
		}, sendloop.ErrMissingParameters},
		{"get list 0", "list.get", func(c *sendloop.Client) error {
			_, err := c.Lists.Get(context.Background(), 0, sendloop.ListGetParams{CustomFields: false})
			return err
		}, sendloop.ErrMissingParameters},
		{"settings of list -1", "list.settings.get", func(c *sendloop.Client) error {
			_, err := c.Lists.Settings(context.Background(), -1)
			return err
		}, sendloop.ErrInvalidParameterValue},
		{"unknown final action", "list.settings.update", func(c *sendloop.Client) error {
			return c.Lists.UpdateSettings(context.Background(), 1, sendloop.ListSettingsUpdateParams{SubscriptionFinalAction: &bad})
		}, sendloop.ErrInvalidParameterValue},
		{"webhook URL not http", "list.settings.update", func(c *sendloop.Client) error {
			return c.Lists.UpdateSettings(context.Background(), 1, sendloop.ListSettingsUpdateParams{WebServiceUnsubscriptionURL: sendloop.String("ftp://x")})
		}, sendloop.ErrInvalidParameterValue},
		{"bad from address", "list.settings.update", func(c *sendloop.Client) error {
			return c.Lists.UpdateSettings(context.Background(), 1, sendloop.ListSettingsUpdateParams{SubscriptionOptInFromEmail: sendloop.String("nope")})
		}, sendloop.ErrInvalidEmailFormat},
		{"no settings", "list.settings.update", func(c *sendloop.Client) error {
			return c.Lists.UpdateSettings(context.Background(), 1, sendloop.ListSettingsUpdateParams{})
		}, sendloop.ErrMissingParameters},
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

func TestListsServerErrors(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t)
	ctx := context.Background()
	_, err := c.Lists.Get(ctx, 42, sendloop.ListGetParams{CustomFields: false})
	require.ErrorIs(t, err, sendloop.ErrListNotFound)
	require.ErrorIs(t, c.Lists.Update(ctx, 42, sendloop.ListUpdateParams{Name: "x"}), sendloop.ErrListNotFound)
	_, err = c.Lists.Settings(ctx, 42)
	require.ErrorIs(t, err, sendloop.ErrListNotFound)
}

// A create whose answer carries no ID must fail: a caller told "0" can neither use it nor
// safely retry a one-shot write.
func TestCreateWithoutAnIDFails(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"Success":true}`, `{"foo":1}`, `{"Success":true,"ListID":"0","CampaignID":"","NewSuppressionID":null}`} {
		c := cannedClient(t, 200, body)
		_, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
		require.ErrorContains(t, err, "no ListID", body)
	}
}

func TestListModeNamesInAnyCase(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	id, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: " double "})
	require.NoError(t, err)
	assert.Contains(t, string(srv.LastRequest().Body), "OptInMode=Double")
	require.NoError(t, c.Lists.Update(ctx, id, sendloop.ListUpdateParams{OptInMode: "SINGLE"}))
	assert.Contains(t, string(srv.LastRequest().Body), "OptInMode=Single")
	list, err := c.Lists.Get(ctx, id, sendloop.ListGetParams{CustomFields: false})
	require.NoError(t, err)
	assert.Equal(t, sendloop.OptInSingle, list.OptInMode)
}

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

func TestAccountGet(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	info, err := c.Account.Get(context.Background())
	require.NoError(t, err)

	assert.Equal(t, "demo", info.Username)
	assert.Equal(t, "Dana", info.FirstName)
	assert.Equal(t, "dana@example.com", info.Email)
	assert.Equal(t, "Europe/London", info.TimeZone)
	assert.Equal(t, "Confirmed", info.EmailVerificationStatus)
	assert.False(t, info.MemberSince.IsZero())
	assert.True(t, info.LastAccountUpdateDate.IsZero(), "0000-00-00 00:00:00 decodes as the zero DateTime")

	req := srv.LastRequest()
	assert.Equal(t, "POST", req.Method)
	assert.Equal(t, "/api/v3/account.info.get/json", req.Path)
	assert.Equal(t, keyParam(srv), string(req.Body))
	assert.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
}

func TestAccountUpdate(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()
	err := c.Account.Update(ctx, sendloop.AccountUpdate{
		FirstName:   "Zoë",
		TimeZone:    "Europe/Paris",
		NewPassword: "s3cret-pass",
	})
	require.NoError(t, err)

	updates := requestsFor(srv, "account.info.update")
	require.Len(t, updates, 1)
	assert.Equal(t, keyParam(srv)+"&FirstName=Zo%C3%AB&NewPassword=s3cret-pass&TimeZone=Europe%2FParis",
		string(updates[0].Body))

	info, err := c.Account.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, "Zoë", info.FirstName)
	assert.Equal(t, "Europe/Paris", info.TimeZone)
	assert.False(t, info.LastAccountUpdateDate.IsZero())

	// The zone list is fetched once per client, whatever the number of updates.
	require.NoError(t, c.Account.Update(ctx, sendloop.AccountUpdate{TimeZone: "UTC"}))
	assert.Len(t, requestsFor(srv, "system.timezones.Get"), 1)
}

func TestAccountUpdateRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		update sendloop.AccountUpdate
		want   error
		field  string
	}{
		{"nothing set", sendloop.AccountUpdate{}, sendloop.ErrMissingParameters, ""},
		{"bad email", sendloop.AccountUpdate{Email: "not-an-address"}, sendloop.ErrInvalidEmailFormat, "Email"},
		{"display name", sendloop.AccountUpdate{Email: "Ann <ann@example.com>"}, sendloop.ErrInvalidEmailFormat, "Email"},
		{"unknown zone", sendloop.AccountUpdate{TimeZone: "Mars/Olympus_Mons"}, sendloop.ErrInvalidParameterValue, "TimeZone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			err := c.Account.Update(context.Background(), tt.update)
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, "account.info.update", ve.Command)
			if tt.field != "" {
				assert.Equal(t, []string{tt.field}, ve.Fields)
			}
			assert.Empty(t, requestsFor(srv, "account.info.update"), "nothing may be sent")
		})
	}
}

func TestAccountUpdateServerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		update sendloop.AccountUpdate
		want   error
	}{
		{"username too short", sendloop.AccountUpdate{Username: "ab"}, sendloop.ErrInvalidUsername},
		{"password too short", sendloop.AccountUpdate{NewPassword: "abc"}, sendloop.ErrInvalidPassword},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newTestClient(t)
			err := c.Account.Update(context.Background(), tt.update)
			require.ErrorIs(t, err, tt.want)
			var apiErr *sendloop.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, "account.info.update", apiErr.Command)
			assert.Equal(t, 200, apiErr.HTTPStatus)
			assert.NotContains(t, err.Error(), "abc", "a password never shows in an error")
		})
	}
}

func TestAccountUpdateZoneListFailureIsNotCached(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}))
	srv.InjectFault("system.timezones.Get", sendlooptest.Fault{Status: 503})
	err := c.Account.Update(context.Background(), sendloop.AccountUpdate{TimeZone: "UTC"})
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, err, &httpErr)
	assert.Equal(t, 503, httpErr.StatusCode)

	require.NoError(t, c.Account.Update(context.Background(), sendloop.AccountUpdate{TimeZone: "UTC"}))
	assert.Len(t, requestsFor(srv, "system.timezones.Get"), 2)
}

func TestDateTimeWallClock(t *testing.T) {
	t.Parallel()
	var dt sendloop.DateTime
	require.NoError(t, dt.UnmarshalJSON([]byte(`"2026-03-29 10:30:00"`)))
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	got := dt.WallClockIn(paris)
	assert.Equal(t, "2026-03-29T10:30:00+02:00", got.Format(time.RFC3339))
}

func TestAccountUpdateWhenTheZoneListIsRefused(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("system.timezones.Get", sendlooptest.Fault{ErrorCode: 123})
	// The list cannot be had: the service judges the zone itself.
	err := c.Account.Update(context.Background(), sendloop.AccountUpdate{TimeZone: "Mars/Olympus_Mons"})
	require.ErrorIs(t, err, sendloop.ErrInvalidParameterValue)
	var apiErr *sendloop.APIError
	require.ErrorAs(t, err, &apiErr, "refused by the service, not before sending")
	require.NoError(t, c.Account.Update(context.Background(), sendloop.AccountUpdate{TimeZone: "Asia/Tokyo"}))
	assert.Len(t, requestsFor(srv, "system.timezones.Get"), 1, "the refusal is remembered")
}

func TestAccountUpdateWaitsForTheZoneListWithinItsContext(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("system.timezones.Get", sendlooptest.Fault{Delay: 300 * time.Millisecond})
	first := make(chan error, 1)
	go func() { first <- c.Account.Update(context.Background(), sendloop.AccountUpdate{TimeZone: "UTC"}) }()
	for len(requestsFor(srv, "system.timezones.Get")) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Account.Update(ctx, sendloop.AccountUpdate{TimeZone: "UTC"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 200*time.Millisecond, "the waiter keeps to its own deadline")
	require.NoError(t, <-first)
}

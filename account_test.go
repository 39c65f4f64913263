package sendloop_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
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
	err := c.Account.Update(ctx, sendloop.AccountUpdateParams{
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
	assert.Empty(t, requestsFor(srv, "system.timezones.Get"), "no hidden call checks the zone")
}

func TestAccountUpdateRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		update sendloop.AccountUpdateParams
		want   error
		field  string
	}{
		{"nothing set", sendloop.AccountUpdateParams{}, sendloop.ErrMissingParameters, ""},
		{"bad email", sendloop.AccountUpdateParams{Email: "not-an-address"}, sendloop.ErrInvalidEmailFormat, "Email"},
		{"display name", sendloop.AccountUpdateParams{Email: "Ann <ann@example.com>"}, sendloop.ErrInvalidEmailFormat, "Email"},
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
		update sendloop.AccountUpdateParams
		want   error
	}{
		{"username too short", sendloop.AccountUpdateParams{Username: "ab"}, sendloop.ErrInvalidUsername},
		{"password too short", sendloop.AccountUpdateParams{NewPassword: "abc"}, sendloop.ErrInvalidPassword},
		{"unknown zone, judged by the service", sendloop.AccountUpdateParams{TimeZone: "Mars/Olympus_Mons"}, sendloop.ErrInvalidParameterValue},
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

package sendloop_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestSystemDate(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 9, 30, 15, 0, time.UTC)
	srv := sendlooptest.NewServer(t, sendlooptest.WithClock(func() time.Time { return at }))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)

	got, err := c.System.Date(context.Background())
	require.NoError(t, err)
	assert.Equal(t, at, got.Date.Time)
	assert.Equal(t, "2026-11-21 09:30:15", got.Date.String())
	assert.Equal(t, "UTC", got.TimeZone)

	req := srv.LastRequest()
	assert.Equal(t, "/api/v3/System.SystemDate.Get/json", req.Path)
	assert.Equal(t, keyParam(srv), string(req.Body))
}

func TestSystemTimeZones(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	zones, err := c.System.TimeZones(context.Background())
	require.NoError(t, err)
	assert.Contains(t, zones, sendloop.TimeZone{Name: "Europe/London"})
	assert.Contains(t, zones, sendloop.TimeZone{Name: "UTC"})
	assert.Equal(t, "/api/v3/system.timezones.Get/json", srv.LastRequest().Path)
	assert.Equal(t, keyParam(srv), string(srv.LastRequest().Body))
}

// The response of system.timezones.Get is not specified: every plausible shape decodes.
func TestSystemTimeZonesShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []sendloop.TimeZone
	}{
		{"array of names", `{"Success":true,"TimeZones":["UTC","Europe\/Paris"]}`,
			[]sendloop.TimeZone{{Name: "UTC"}, {Name: "Europe/Paris"}}},
		{"other member name", `{"Success":true,"Timezones":["UTC"]}`, []sendloop.TimeZone{{Name: "UTC"}}},
		{"name to label", `{"Success":true,"TimeZones":{"Europe/Paris":"(GMT+01:00) Paris","UTC":"UTC"}}`,
			[]sendloop.TimeZone{{Name: "Europe/Paris", Label: "(GMT+01:00) Paris"}, {Name: "UTC", Label: "UTC"}}},
		{"numeric keys", `{"Success":true,"TimeZones":{"0":"UTC","1":"Asia/Tokyo"}}`,
			[]sendloop.TimeZone{{Name: "UTC"}, {Name: "Asia/Tokyo"}}},
		{"array of objects", `{"Success":true,"List":[{"TimeZone":"UTC","Title":"Coordinated"},{"name":"Asia/Tokyo"}]}`,
			[]sendloop.TimeZone{{Name: "UTC", Label: "Coordinated"}, {Name: "Asia/Tokyo"}}},
		{"scalar members skipped", `{"Success":true,"Count":"2","TimeZones":["UTC"]}`, []sendloop.TimeZone{{Name: "UTC"}}},
		{"empty as PHP writes it", `{"Success":true,"TimeZones":[]}`, nil},
		{"no list at all", `{"Success":true}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cannedClient(t, http.StatusOK, tt.body)
			zones, err := c.System.TimeZones(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tt.want, zones)
		})
	}
}

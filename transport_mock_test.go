package sendloop_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// The default host is reached through whatever transport the caller's client has: here
// httpmock's, injected (its global Activate would not reach the retrying client).
func TestDefaultHostThroughAnInjectedTransport(t *testing.T) {
	t.Parallel()
	mock := httpmock.NewMockTransport()
	mock.RegisterResponder(http.MethodPost, sendloop.DefaultBaseURL+"/api/v3/System.SystemDate.Get/json",
		func(req *http.Request) (*http.Response, error) {
			if err := req.ParseForm(); err != nil || req.PostForm.Get("APIKey") != "mock-key" || req.URL.RawQuery != "" {
				return httpmock.NewStringResponse(http.StatusBadRequest, "bad request"), nil
			}
			return httpmock.NewStringResponse(http.StatusOK, `{"Success":true,"SystemDate":"2026-11-21 08:00:00","SystemTimeZone":"Europe\/Istanbul"}`), nil
		})
	c, err := sendloop.NewClient("mock-key", sendloop.WithHTTPClient(&http.Client{Transport: mock}))
	require.NoError(t, err)

	now, err := c.System.Date(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "Europe/Istanbul", now.TimeZone)
	assert.Equal(t, "2026-11-21 08:00:00", now.Date.String())
	assert.Equal(t, 1, mock.GetTotalCallCount())
}

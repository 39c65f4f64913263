package legacy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// v3Subscriber reads a subscriber through the v3 API.
func v3Subscriber(t *testing.T, root *sendloop.Client, listID int, email string) map[string]any {
	t.Helper()
	var out struct{ Subscriber map[string]any }
	require.NoError(t, root.Call(context.Background(), "subscriber.get",
		map[string]string{"ListID": strconv.Itoa(listID), "EmailAddress": email}, &out))
	return out.Subscriber
}

// TestStateSharedWithV3 checks that both APIs act on the same subscribers.
func TestStateSharedWithV3(t *testing.T) {
	t.Parallel()
	for _, form := range allForms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := sendlooptest.NewServer(t)
			root, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
			require.NoError(t, err)
			c := newClient(t, srv, form)
			double := createList(t, srv, "Double")
			single := createList(t, srv, "Single")

			// Legacy → v3: the pending subscription is the v3 'Confirmation Pending'.
			res, err := c.SubscriberAdd(ctx, double, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "192.0.2.1"})
			require.NoError(t, err)
			require.Equal(t, legacy.StatusWaitingForOptIn, res.Status)
			sub := v3Subscriber(t, root, double, "ann@example.com")
			assert.Equal(t, "Confirmation Pending", sub["SubscriptionStatus"])
			assert.Equal(t, strconv.Itoa(res.SubscriberID), sub["SubscriberID"])
			assert.Equal(t, "192.0.2.1", sub["SubscriptionIP"])
			status, _ := srv.SubscriberStatus(double, "ann@example.com")
			assert.Equal(t, "Confirmation Pending", status)
			require.Len(t, srv.Outbox(), 1, "the opt-in confirmation email was sent")

			// Confirmation, then legacy sees 'Subscribed'.
			require.NoError(t, srv.Confirm(double, "ann@example.com"))
			st, err := c.Call(ctx, "Subscriber.Get", map[string]string{"ListID": strconv.Itoa(double), "EmailAddress": "ann@example.com"})
			require.NoError(t, err)
			assert.Equal(t, "Subscribed", st.Text("SubscriptionStatus"))

			// v3 → legacy: an address subscribed through v3 exists for Subscriber.Add and
			// can be unsubscribed through legacy, which v3 then sees.
			require.NoError(t, root.Call(ctx, "subscriber.subscribe", map[string]string{"ListID": strconv.Itoa(single),
				"EmailAddress": "bob@example.com", "SubscriptionIP": "192.0.2.2"}, nil))
			_, err = c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "bob@example.com", SubscriptionIP: "192.0.2.3"})
			assert.ErrorIs(t, err, legacy.ErrEmailExists)
			_, err = c.SubscriberUnsubscribe(ctx, single, legacy.SubscriberUnsubscribeParams{EmailAddress: "bob@example.com", UnsubscriptionIP: "192.0.2.4"})
			require.NoError(t, err)
			sub = v3Subscriber(t, root, single, "bob@example.com")
			assert.Equal(t, "Unsubscribed", sub["SubscriptionStatus"])
			assert.Equal(t, "192.0.2.4", sub["UnsubscriptionIP"])

			// The unsubscribed address may come back through legacy: same record.
			again, err := c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "bob@example.com", SubscriptionIP: "192.0.2.5"})
			require.NoError(t, err)
			assert.Equal(t, legacy.StatusSubscribed, again.Status)
			assert.Equal(t, sub["SubscriberID"], strconv.Itoa(again.SubscriberID))
			assert.Equal(t, 1, srv.SubscriberCount(single))
		})
	}
}

func TestNewSharedClientRefusesSharedOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opt  legacy.Option
		want string // "" for an option NewSharedClient takes
	}{
		{"base URL", legacy.WithBaseURL("https://acme.sendloop.com"), "legacy.WithBaseURL"},
		{"HTTP client", legacy.WithHTTPClient(&http.Client{}), "legacy.WithHTTPClient"},
		{"logger", legacy.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), "legacy.WithLogger"},
		{"retry", legacy.WithRetry(legacy.RetryPolicy{MaxRetries: -1}), "legacy.WithRetry"},
		{"user agent", legacy.WithUserAgent("app/1"), "legacy.WithUserAgent"},
		{"plain http", legacy.WithInsecureHTTP(), "legacy.WithInsecureHTTP"},
		{"rate limiter", legacy.WithRateLimiter(noWait{}), "legacy.WithRateLimiter"},
		{"input form", legacy.WithInputForm(legacy.GetForm), ""},
		{"media size", legacy.WithMaxMediaSize(5), ""},
		{"chart days", legacy.WithMaxChartDays(5), ""},
		{"secrets", legacy.WithSecrets("pw-123456"), ""},
		{"a nil HTTP client sets nothing", legacy.WithHTTPClient(nil), ""},
		{"a zero policy sets nothing", legacy.WithRetry(legacy.RetryPolicy{}), ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := legacy.NewSharedClient("test-key-123", legacy.Shared{BaseURL: "https://acme.sendloop.com"}, tt.opt)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "https://acme.sendloop.com", c.BaseURL())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want+": the legacy client of a sendloop.Client shares")
		})
	}
}

// noWait is a rate limiter that never waits.
type noWait struct{}

func (noWait) Wait(context.Context) error { return nil }

// TestWithSecretsRedacts: the texts given to WithSecrets leave the errors and the log lines
// as the key does, in every form a server might echo them.
func TestWithSecretsRedacts(t *testing.T) {
	t.Parallel()
	const secret = "pass/word+zq7k"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "<html>refused %s</html>", body)
	}))
	t.Cleanup(echo.Close)
	tests := []struct {
		name    string
		secrets []string
		leaks   bool
	}{
		{"given", []string{"", secret}, false},
		{"not given", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs testkit.SyncBuffer
			c, err := legacy.NewClient("test-key-0123", legacy.WithBaseURL(echo.URL), legacy.WithSecrets(tt.secrets...),
				legacy.WithRetry(legacy.RetryPolicy{MaxRetries: -1}),
				legacy.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			_, err = c.Call(context.Background(), "Subscriber.Get", map[string]string{"Password": secret})
			require.Error(t, err)
			assert.Equal(t, tt.leaks, strings.Contains(err.Error(), "zq7k"), err.Error())
			assert.NotContains(t, logs.String(), "zq7k")
			assert.NotContains(t, err.Error(), "test-key-0123")
		})
	}
}

package sendloop_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestUnsubscribeScope: Unsubscribe leaves one list, UnsubscribeFromAllLists every list.
func TestUnsubscribeScope(t *testing.T) {
	t.Parallel()
	const email = "dee@example.com"
	tests := []struct {
		name        string
		unsubscribe func(ctx context.Context, c *sendloop.Client, listID int) error
		wantOther   string // the status left in the second list
		wantCommand string // what the fake received
	}{
		{"one list", func(ctx context.Context, c *sendloop.Client, listID int) error {
			res, err := c.Subscribers.Unsubscribe(ctx, listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: email, UnsubscriptionIP: "0.0.0.0"})
			if err == nil {
				assert.Equal(t, sendloop.StatusUnsubscribed, res.SubscriptionStatus)
				assert.NotEmpty(t, res.RedirectURL)
				assert.False(t, res.ConfirmedOnRetry)
			}
			return err
		}, "Subscribed", legacy.CommandSubscriberUnsubscribe},
		{"every list", func(ctx context.Context, c *sendloop.Client, _ int) error {
			return c.Subscribers.UnsubscribeFromAllLists(ctx, email)
		}, "Unsubscribed", "subscriber.unsubscribe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			first, second := newList(t, c, sendloop.OptInSingle), newList(t, c, sendloop.OptInSingle)
			subscribe(t, c, first, email)
			subscribe(t, c, second, email)

			require.NoError(t, tt.unsubscribe(context.Background(), c, first))

			status, _ := srv.SubscriberStatus(first, email)
			assert.Equal(t, "Unsubscribed", status)
			status, _ = srv.SubscriberStatus(second, email)
			assert.Equal(t, tt.wantOther, status)
			assert.Equal(t, 1, srv.Executions(tt.wantCommand))
		})
	}
}

func TestUnsubscribeSendsTheLegacyCommand(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, sendloop.WithUserAgent("job/1"))
	id := newList(t, c, sendloop.OptInSingle)
	subscribe(t, c, id, "eve@example.com")

	_, err := c.Subscribers.Unsubscribe(context.Background(), id, sendloop.SubscriberUnsubscribeParams{EmailAddress: "eve@example.com", UnsubscriptionIP: "0.0.0.0"})
	require.NoError(t, err)

	req := srv.LastRequest()
	assert.Equal(t, "/api/index.php", req.Path)
	assert.Equal(t, "Subscriber.Unsubscribe", req.Form.Get("FormValue_Command"))
	assert.Equal(t, srv.APIKey, req.Form.Get("FormValue_APIKey"))
	assert.Equal(t, "eve@example.com", req.Form.Get("FormValue_EmailAddress"))
	assert.Equal(t, "0.0.0.0", req.Form.Get("FormValue_UnsubscriptionIP"))
	assert.Equal(t, "job/1 sendloop-go/legacy", req.Header.Get("User-Agent"), "the root's product, the legacy token")
	sub, err := c.Subscribers.Get(context.Background(), id, sendloop.SubscriberGetParams{EmailAddress: "eve@example.com"})
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0", sub.UnsubscriptionIP)
}

func TestUnsubscribeErrors(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	ok := sendloop.SubscriberUnsubscribeParams{EmailAddress: "x@example.com", UnsubscriptionIP: "192.0.2.1"}
	with := func(f func(*sendloop.SubscriberUnsubscribeParams)) sendloop.SubscriberUnsubscribeParams {
		p := ok
		f(&p)
		return p
	}
	tests := []struct {
		name   string
		listID int
		params sendloop.SubscriberUnsubscribeParams
		want   error
		field  string // the field a *ValidationError names; "" for an answer of the service
	}{
		{"no list", 0, ok, sendloop.ErrMissingParameters, "ListID"},
		{"negative list", -3, ok, sendloop.ErrInvalidParameterValue, "ListID"},
		{"no address", id, with(func(p *sendloop.SubscriberUnsubscribeParams) { p.EmailAddress = " " }), sendloop.ErrMissingParameters, "EmailAddress"},
		{"bad address", id, with(func(p *sendloop.SubscriberUnsubscribeParams) { p.EmailAddress = "x@" }), sendloop.ErrInvalidEmailFormat, "EmailAddress"},
		{"no IP", id, with(func(p *sendloop.SubscriberUnsubscribeParams) { p.UnsubscriptionIP = "" }), sendloop.ErrMissingParameters, "UnsubscriptionIP"},
		{"IP with a newline", id, with(func(p *sendloop.SubscriberUnsubscribeParams) { p.UnsubscriptionIP = "1.2.3.4\n" }), sendloop.ErrInvalidParameterValue, "UnsubscriptionIP"},
		{"not in the list", id, ok, sendloop.ErrNotInList, ""},
		{"no such list", id + 100, ok, legacy.ErrListNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			_, err := c.Subscribers.Unsubscribe(context.Background(), tt.listID, tt.params)
			require.ErrorIs(t, err, tt.want)
			var ve *sendloop.ValidationError
			if tt.field == "" {
				assert.Len(t, srv.Requests(), before+1, "sent once")
				assert.False(t, errors.As(err, &ve))
				return
			}
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, []string{tt.field}, ve.Fields)
			assert.Equal(t, legacy.CommandSubscriberUnsubscribe, ve.Command)
			assert.Len(t, srv.Requests(), before, "nothing sent")
		})
	}
}

// TestUnsubscribeNotInList: an address the list does not hold fails with an error that
// matches the root sentinel and is still the legacy answer; no other failure matches it.
func TestUnsubscribeNotInList(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	subscribe(t, c, id, "gone@example.com")
	_, err := c.Subscribers.Unsubscribe(context.Background(), id, sendloop.SubscriberUnsubscribeParams{EmailAddress: "gone@example.com", UnsubscriptionIP: "0.0.0.0"})
	require.NoError(t, err)
	tests := []struct {
		name      string
		listID    int
		email     string
		notInList bool
		code      legacy.ErrorCode // of the *legacy.Error, 0 for none
	}{
		{"never subscribed", id, "never@example.com", true, legacy.ErrEmailNotInList},
		{"already unsubscribed", id, "gone@example.com", true, legacy.ErrEmailNotInList},
		{"no such list", id + 100, "never@example.com", false, legacy.ErrListNotFound},
		{"refused before sending", id, "not an address", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.Subscribers.Unsubscribe(context.Background(), tt.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: tt.email, UnsubscriptionIP: "0.0.0.0"})
			require.Error(t, err)
			assert.Nil(t, res)
			assert.Equal(t, tt.notInList, errors.Is(err, sendloop.ErrNotInList), "the root sentinel")
			assert.Equal(t, tt.notInList, errors.Is(err, legacy.ErrEmailNotInList), "the legacy sentinel")
			assert.NotErrorIs(t, err, sendloop.ErrOutcomeUnknown)
			var legacyErr *legacy.Error
			if tt.code == 0 {
				assert.False(t, errors.As(err, &legacyErr))
				return
			}
			require.ErrorAs(t, err, &legacyErr, "the service's answer is still reachable")
			assert.Equal(t, tt.code, legacyErr.Code)
			assert.Equal(t, legacyErr.Error(), err.Error(), "the answer's text, unchanged")
		})
	}
}

// TestLegacySharesTheRootClient: one HTTP client, logger, rate limiter, retry policy and
// base URL for both APIs.
func TestLegacySharesTheRootClient(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	limiter := &countingLimiter{}
	seen := &countingTransport{next: testkit.Transport()}
	hc := &http.Client{Transport: seen}
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, srv := newTestClient(t, sendloop.WithHTTPClient(hc), sendloop.WithRateLimiter(limiter),
		sendloop.WithLogger(logger), sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}))
	lc := c.Legacy()
	require.NotNil(t, lc)
	assert.Same(t, lc, c.Legacy(), "built once")
	assert.Equal(t, c.BaseURL(), lc.BaseURL())
	assert.Equal(t, legacy.PostForm, lc.InputForm())

	id := newList(t, c, sendloop.OptInSingle)
	_, err := lc.SubscriberAdd(context.Background(), id, legacy.SubscriberAddParams{EmailAddress: "fay@example.com", SubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), seen.n.Load(), "both requests went through the caller's transport")
	assert.Equal(t, 2, limiter.count(), "both waited on the limiter")
	assert.Contains(t, logs.String(), "command=list.create")
	assert.Contains(t, logs.String(), "command=Subscriber.Add")

	srv.InjectFault(legacy.CommandSubscriberUnsubscribe, sendlooptest.Fault{Status: 503})
	_, err = c.Subscribers.Unsubscribe(context.Background(), id, sendloop.SubscriberUnsubscribeParams{EmailAddress: "fay@example.com", UnsubscriptionIP: "0.0.0.0"})
	var httpErr *legacy.HTTPError
	require.ErrorAs(t, err, &httpErr, "no retry: the root's policy says none")
	assert.Equal(t, 1, httpErr.Attempts)
}

func TestWithLegacyOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []legacy.Option
		form    legacy.InputForm
		wantErr string
	}{
		{"defaults", nil, legacy.PostForm, ""},
		{"input form", []legacy.Option{legacy.WithInputForm(legacy.MessageForm)}, legacy.MessageForm, ""},
		{"nil option", []legacy.Option{nil}, legacy.PostForm, ""},
		{"unknown input form", []legacy.Option{legacy.WithInputForm(legacy.InputForm(9))}, 0, "unknown input form 9"},
		{"a shared setting", []legacy.Option{legacy.WithBaseURL("https://other.example"), legacy.WithRetry(legacy.RetryPolicy{MaxRetries: 1})}, 0,
			"legacy.WithBaseURL, legacy.WithRetry: the legacy client of a sendloop.Client shares the root client's settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL("http://127.0.0.1:1"), sendloop.WithLegacyOptions(tt.opts...))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.True(t, strings.HasPrefix(err.Error(), "sendloop: WithLegacyOptions: sendloop/legacy: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.form, c.Legacy().InputForm())
		})
	}
}

func TestLegacyInputFormThroughTheRootClient(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, sendloop.WithLegacyOptions(legacy.WithInputForm(legacy.GetForm)))
	id := newList(t, c, sendloop.OptInSingle)
	subscribe(t, c, id, "gus@example.com")
	_, err := c.Subscribers.Unsubscribe(context.Background(), id, sendloop.SubscriberUnsubscribeParams{EmailAddress: "gus@example.com", UnsubscriptionIP: "0.0.0.0"})
	require.NoError(t, err)
	assert.Equal(t, "GET", srv.LastRequest().Method)
	assert.Equal(t, "Subscriber.Unsubscribe", srv.LastRequest().Form.Get("Command"))
}

// TestLegacyOfTheRootClientNeverLeaksTheKey: the legacy client of a root client removes the
// key in the legacy spellings too (XML-escaped in the message forms, then query-escaped in
// the GET ones), though the root API never sends them.
func TestLegacyOfTheRootClientNeverLeaksTheKey(t *testing.T) {
	t.Parallel()
	const key = "MARKER&KEY<zq7k>/9+a"
	for _, form := range []legacy.InputForm{legacy.PostForm, legacy.GetForm, legacy.MessageForm, legacy.MessageGetForm} {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			var logs testkit.SyncBuffer
			failing := &http.Client{Transport: failingTransport{}}
			c, err := sendloop.NewClient(key, sendloop.WithBaseURL("https://legacy.example"), sendloop.WithHTTPClient(failing),
				sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}), sendloop.WithLegacyOptions(legacy.WithInputForm(form)),
				sendloop.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			require.NoError(t, err)
			// Media.Browse is a read: the GET forms send it as a GET.
			_, err = c.Legacy().MediaBrowse(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "proxy refused")
			for _, text := range []string{err.Error(), logs.String(), c.Legacy().String()} {
				assert.NotContains(t, text, "zq7k")
			}
		})
	}
}

// failingTransport fails every request with an error quoting its URL and body, as some
// proxies' clients do.
type failingTransport struct{}

func (failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body = make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
	}
	return nil, errors.New("proxy refused " + r.URL.String() + " with body " + string(body))
}

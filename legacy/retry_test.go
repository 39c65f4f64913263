package legacy_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	upload := func(c *legacy.Client) error {
		_, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif})
		return err
	}
	add := func(c *legacy.Client) error {
		_, err := c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "ann@example.com", SubscriptionIP: "192.0.2.1"})
		return err
	}
	chart := func(c *legacy.Client) error {
		_, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 1})
		return err
	}
	update := func(c *legacy.Client) error {
		_, err := c.Call(ctx, "Subscriber.Update", map[string]string{"ListID": "1", "EmailAddress": "taken@example.com"})
		return err
	}
	tests := []struct {
		name       string
		command    string
		fault      sendlooptest.Fault
		call       func(*legacy.Client) error
		wantErr    func(t *testing.T, err error)
		requests   int
		executions int
	}{
		{name: "one-shot upload reset after execution is not sent again", command: "Media.Upload",
			fault: sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, call: upload,
			wantErr: func(t *testing.T, err error) {
				assert.Contains(t, err.Error(), "Media.Upload")
				var e *legacy.Error
				assert.False(t, errors.As(err, &e))
			},
			requests: 1, executions: 1},
		{name: "one-shot upload after a 502 is not sent again", command: "Media.Upload",
			fault: sendlooptest.Fault{Status: http.StatusBadGateway}, call: upload,
			wantErr: func(t *testing.T, err error) {
				var he *legacy.HTTPError
				require.True(t, errors.As(err, &he))
				assert.Equal(t, http.StatusBadGateway, he.HTTPStatus)
				assert.Equal(t, 1, he.Attempts)
			},
			requests: 1, executions: 0},
		{name: "one-shot upload after a 503 is retried", command: "Media.Upload",
			fault: sendlooptest.Fault{Status: http.StatusServiceUnavailable}, call: upload, requests: 2, executions: 1},
		{name: "one-shot upload after a 429 is retried", command: "Media.Upload",
			fault: sendlooptest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "0"}, call: upload, requests: 2, executions: 1},
		{name: "idempotent add reset before execution is retried", command: "Subscriber.Add",
			fault: sendlooptest.Fault{Reset: sendlooptest.ResetBeforeExecution, Times: 2}, call: add, requests: 3, executions: 1},
		{name: "idempotent add after a 502 is retried", command: "Subscriber.Add",
			fault: sendlooptest.Fault{Status: http.StatusBadGateway}, call: add, requests: 2, executions: 1},
		{name: "idempotent add reset after execution is confirmed on the retry", command: "Subscriber.Add",
			fault: sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, call: add,
			requests: 3, executions: 2}, // two adds and the subscriber.get read-back
		{name: "a plain 500 is never retried", command: "Subscriber.Add",
			fault: sendlooptest.Fault{Status: http.StatusInternalServerError}, call: add,
			wantErr: func(t *testing.T, err error) {
				var he *legacy.HTTPError
				require.True(t, errors.As(err, &he))
				assert.Equal(t, http.StatusInternalServerError, he.HTTPStatus)
				assert.Contains(t, he.Excerpt, "500 Internal Server Error")
			},
			requests: 1, executions: 0},
		{name: "read chart after a 504 is retried", command: "Chart.ListActivity",
			fault: sendlooptest.Fault{Status: http.StatusGatewayTimeout, Times: 3}, call: chart, requests: 4, executions: 1},
		{name: "retries run out", command: "Chart.ListActivity",
			fault: sendlooptest.Fault{Status: http.StatusServiceUnavailable, Times: 10}, call: chart,
			wantErr: func(t *testing.T, err error) {
				var he *legacy.HTTPError
				require.True(t, errors.As(err, &he))
				assert.Equal(t, 4, he.Attempts)
			},
			requests: 4, executions: 0},
		{name: "Retry-After over the cap fails at once", command: "Chart.ListActivity",
			fault: sendlooptest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "3600"}, call: chart,
			wantErr: func(t *testing.T, err error) {
				var he *legacy.HTTPError
				require.True(t, errors.As(err, &he))
				assert.Equal(t, time.Hour, he.RetryAfter)
			},
			requests: 1, executions: 0},
		{name: "Call infers an idempotent update", command: "Subscriber.Update",
			fault: sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, call: update, requests: 2, executions: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			createList(t, srv, "Single")
			seed := newClient(t, srv, legacy.PostForm)
			_, err := seed.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "taken@example.com", SubscriptionIP: "192.0.2.1"})
			require.NoError(t, err)
			before, executed := len(srv.Requests()), srv.Executions(tt.command)

			srv.InjectFault(tt.command, tt.fault)
			err = tt.call(newClient(t, srv, legacy.MessageForm))
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				tt.wantErr(t, err)
			}
			assert.Equal(t, tt.requests, len(srv.Requests())-before, "requests")
			assert.Equal(t, tt.executions, srv.Executions(tt.command)-executed, "executions")
		})
	}
}

func TestMediaUploadExecutedOnceUnderReset(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	srv.InjectFault("Media.Upload", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	c := newClient(t, srv, legacy.PostForm)
	_, err := c.MediaUpload(context.Background(), legacy.MediaUploadParams{Data: gif})
	require.Error(t, err)
	assert.Equal(t, 1, srv.Executions("Media.Upload"))
	assert.Len(t, srv.MediaItems(), 1, "stored once, never twice")
}

func TestContextBoundsTheCall(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	srv.InjectFault("Media.Browse", sendlooptest.Fault{Delay: time.Hour})
	// Wherever the deadline lands (before the request is sent or while the fake holds it),
	// the call ends with it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newClient(t, srv, legacy.GetForm).MediaBrowse(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	// Time is what is tested: the answer is an hour away. The bound is far above the
	// median under -race (30 ms, 20 runs).
	assert.Less(t, time.Since(start), 5*time.Second)
}

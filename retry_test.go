package sendloop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

var createParams = map[string]string{"Name": "Newsletter", "OptInMode": "Single"}

func TestRetryClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		command    string // account.info.get: read; account.info.update: idempotent; list.create: one-shot
		fault      sendlooptest.Fault
		wantErr    bool
		requests   int // requests the fake received
		executions int // times the command really ran
	}{
		{"read retried after a reset after execution", "account.info.get", sendlooptest.Fault{Times: 2, Reset: sendlooptest.ResetAfterExecution}, false, 3, 3},
		{"read retried after a reset before execution", "account.info.get", sendlooptest.Fault{Times: 2, Reset: sendlooptest.ResetBeforeExecution}, false, 3, 1},
		{"read retried after 503", "account.info.get", sendlooptest.Fault{Times: 3, Status: 503}, false, 4, 1},
		{"read retried after 502", "account.info.get", sendlooptest.Fault{Status: 502}, false, 2, 1},
		{"read retried after 504", "account.info.get", sendlooptest.Fault{Status: 504}, false, 2, 1},
		{"read retried after 429", "account.info.get", sendlooptest.Fault{Status: 429, RetryAfter: "0"}, false, 2, 1},
		{"plain 500 never retried", "account.info.get", sendlooptest.Fault{Status: 500}, true, 1, 0},
		{"500 with an error envelope never retried", "account.info.get", sendlooptest.Fault{Status: 500, ErrorCode: 116}, true, 1, 0},
		{"404 not retried", "account.info.get", sendlooptest.Fault{Status: 404}, true, 1, 0},
		{"read gives up after the retries", "account.info.get", sendlooptest.Fault{Times: 4, Status: 503}, true, 4, 0},
		{"idempotent write retried after a reset after execution", "account.info.update", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, false, 2, 2},
		{"one-shot write not retried after a reset after execution", "list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, true, 1, 1},
		{"one-shot write not retried after a reset before execution", "list.create", sendlooptest.Fault{Reset: sendlooptest.ResetBeforeExecution}, true, 1, 0},
		{"one-shot write not retried after 502", "list.create", sendlooptest.Fault{Status: 502}, true, 1, 0},
		{"one-shot write not retried after 504", "list.create", sendlooptest.Fault{Status: 504}, true, 1, 0},
		{"one-shot write retried after 503", "list.create", sendlooptest.Fault{Status: 503}, false, 2, 1},
		{"one-shot write retried after 429", "list.create", sendlooptest.Fault{Status: 429}, false, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			srv.InjectFault(tt.command, tt.fault)
			var err error
			switch tt.command {
			case "account.info.get":
				_, err = c.Account.Get(context.Background())
			case "account.info.update":
				err = c.Account.Update(context.Background(), sendloop.AccountUpdateParams{FirstName: "Ann"})
			case "list.create":
				err = c.Call(context.Background(), "list.create", createParams, nil)
			}
			if tt.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			assert.Len(t, requestsFor(srv, tt.command), tt.requests, "requests")
			assert.Equal(t, tt.executions, srv.Executions(tt.command), "executions")
		})
	}
}

func TestOneShotWriteIsNeverDuplicated(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	err := c.Call(context.Background(), "list.create", createParams, nil)
	require.Error(t, err, "the client cannot know the list was made, and must say so")
	assert.Equal(t, 1, srv.Executions("list.create"))
	assert.Equal(t, 1, srv.ListCount(), "exactly one list exists")
	assert.Contains(t, err.Error(), "list.create")
}

func TestRetryAfterOverTheCapFailsWithTheWait(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 429, RetryAfter: "120"})
	start := time.Now()
	_, err := c.Account.Get(context.Background())
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, err, &httpErr)
	assert.Equal(t, 429, httpErr.HTTPStatus)
	assert.Equal(t, 120*time.Second, httpErr.RetryAfter)
	assert.Len(t, requestsFor(srv, "account.info.get"), 1)
	// Time is what is tested: the wait asked for is 2 minutes. The bound is far above the
	// median under -race (under 10 ms, 20 runs).
	assert.Less(t, time.Since(start), 5*time.Second, "no wait for a Retry-After over the cap")
	assert.Contains(t, err.Error(), "retry after 2m0s")
}

func TestRetryExhaustedReportsAttempts(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	srv.InjectFault("account.info.get", sendlooptest.Fault{Times: 10, Reset: sendlooptest.ResetBeforeExecution})
	_, err := c.Account.Get(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after 4 attempts")
	assert.Contains(t, err.Error(), "account.info.get")
}

func TestRetriesDisabled(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}))
	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 503})
	_, err := c.Account.Get(context.Background())
	require.Error(t, err)
	assert.Len(t, requestsFor(srv, "account.info.get"), 1)
}

func TestDialErrorRetriedEvenForOneShot(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL("http://"+addr), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	err = c.Call(context.Background(), "list.create", createParams, nil)
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr, "the cause is kept")
	assert.Equal(t, "dial", opErr.Op)
	assert.Contains(t, err.Error(), "after 4 attempts")
}

// The first attempt is held until the client's per-attempt timeout ends it, and the retry
// is answered at once. The timeout is 2 s, far above a call to the fake under -race, so
// that the retry cannot time out too on a loaded machine, as it could with 50 ms.
func TestPerAttemptTimeoutIsRetriedForReads(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t, sendloop.WithHTTPClient(&http.Client{Transport: testkit.Transport(), Timeout: 2 * time.Second}))
	srv.InjectFault("account.info.get", sendlooptest.Fault{Delay: time.Hour})
	_, err := c.Account.Get(context.Background())
	require.NoError(t, err)
	// At least the held attempt and the one answered: on a loaded machine the answered
	// attempt itself may overrun the 2 s and be retried too, which is the same rule.
	assert.GreaterOrEqual(t, len(requestsFor(srv, "account.info.get")), 2)
}

// The context is cancelled while the fake holds the request (from its request hook), or once
// the 503 that asks for a wait has been read (from the client's transport): during the step
// named, whatever the machine's load.
func TestCancellationReturnsPromptly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fault       sendlooptest.Fault
		afterAnswer bool // cancelled once the answer is read, not as the request arrives
	}{
		{"while waiting for the answer", sendlooptest.Fault{Delay: time.Hour}, false},
		{"during a Retry-After wait", sendlooptest.Fault{Status: 503, RetryAfter: "50"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv := sendlooptest.NewServer(t, sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
				if r.Command == "account.info.get" && !tt.afterAnswer {
					cancel()
				}
			}))
			hc := &http.Client{Transport: testkit.Transport()}
			if tt.afterAnswer {
				hc.Transport = cancelAfterAnswer{testkit.Transport(), cancel}
			}
			c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(hc),
				sendloop.WithRetry(sendloop.RetryPolicy{MaxRetryAfter: time.Minute, MinWait: time.Millisecond}))
			require.NoError(t, err)
			srv.InjectFault("account.info.get", tt.fault)
			start := time.Now()
			_, err = c.Account.Get(ctx)
			require.ErrorIs(t, err, context.Canceled)
			// Time is what is tested: the answer or the wait is an hour or 50 s away. The
			// bound is far above the median under -race (under 10 ms, 20 runs).
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Len(t, requestsFor(srv, "account.info.get"), 1, "no attempt after the cancellation")
		})
	}
}

// cancelAfterAnswer is a transport over base that calls cancel once an answer's body has
// been read.
type cancelAfterAnswer struct {
	base   http.RoundTripper
	cancel func()
}

func (c cancelAfterAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.cancel()
	return resp, nil
}

// The deadline passes while the fake holds the request: the call fails with it and is not
// retried.
func TestDeadlineIsKept(t *testing.T) {
	t.Parallel()
	ctx := testkit.NewEndingContext(context.DeadlineExceeded)
	srv := sendlooptest.NewServer(t, sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
		if r.Command == "account.info.get" {
			ctx.End()
		}
	}))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	srv.InjectFault("account.info.get", sendlooptest.Fault{Delay: time.Hour})
	_, err = c.Account.Get(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, errors.Is(err, context.DeadlineExceeded))
	assert.Len(t, requestsFor(srv, "account.info.get"), 1, "an expired deadline is not retried")
}

// Each typed write keeps its retry class: a reset after execution is retried by idempotent
// writes and never by one-shot ones.
func TestCallTakesARetryClass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	params := map[string]string{"Name": "L", "OptInMode": "Single"}

	c, srv := newTestClient(t)
	srv.InjectFault("list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	err := c.Call(ctx, "list.create", params, nil)
	require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown, "a create is one-shot by default")
	assert.Equal(t, 1, srv.Executions("list.create"))

	srv.InjectFault("list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	require.NoError(t, c.Call(ctx, "list.create", params, nil, sendloop.WithRetryClass(sendloop.RetryIdempotent)))
	assert.Equal(t, 3, srv.Executions("list.create"), "the caller's class is used: sent again")

	err = c.Call(ctx, "list.getlist", nil, nil, sendloop.WithRetryClass(sendloop.RetryClass(9)))
	var ve *sendloop.ValidationError
	require.ErrorAs(t, err, &ve)
}

// countingLimiter counts its waits and fails once told to.
type countingLimiter struct {
	mu    sync.Mutex
	waits int
	err   error
}

func (l *countingLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	if l.err != nil {
		return l.err
	}
	return ctx.Err()
}

func (l *countingLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waits
}

func TestRateLimiterIsWaitedOnBeforeEveryAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limiter := &countingLimiter{}
	c, srv := newTestClient(t, sendloop.WithRateLimiter(limiter))
	srv.InjectFault("account.info.get", sendlooptest.Fault{Status: 503})
	_, err := c.Account.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, limiter.count(), "the retry waited too")

	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	before, requests := limiter.count(), len(srv.Requests())
	_, err = c.Subscribers.ImportAll(ctx, listID, func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range 25 {
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("r%d@example.com", i)}) {
				return
			}
		}
	}, sendloop.ImportOptions{BatchSize: 10})
	require.NoError(t, err)
	assert.Equal(t, len(srv.Requests())-requests, limiter.count()-before, "ImportAll waits before each request")

	lc, err := legacy.NewClient(srv.APIKey, legacy.WithBaseURL(srv.URL), legacy.WithRateLimiter(limiter))
	require.NoError(t, err)
	before = limiter.count()
	_, err = lc.MediaBrowse(ctx)
	require.NoError(t, err)
	assert.Equal(t, before+1, limiter.count(), "the legacy client waits too")

	refused := &countingLimiter{err: errors.New("over the budget")}
	c2, srv2 := newTestClient(t, sendloop.WithRateLimiter(refused))
	_, err = c2.Account.Get(ctx)
	require.ErrorContains(t, err, "over the budget")
	assert.Equal(t, 1, refused.count(), "a refusal of the limiter is final, not retried")
	_, err = c2.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
	require.ErrorContains(t, err, "over the budget")
	assert.NotErrorIs(t, err, sendloop.ErrOutcomeUnknown, "nothing was sent: the outcome is known")
	assert.Empty(t, srv2.Requests(), "nothing is sent when the limiter refuses")
}

package sendloop_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// recordingObserver keeps every event it is told of.
type recordingObserver struct {
	mu       sync.Mutex
	started  []sendloop.CallStart
	attempts []sendloop.AttemptEnd
	ended    []sendloop.CallEnd
}

type observedKey struct{}

func (o *recordingObserver) CallStarted(ctx context.Context, c sendloop.CallStart) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, c)
	return context.WithValue(ctx, observedKey{}, c.Command)
}

func (o *recordingObserver) AttemptEnded(ctx context.Context, a sendloop.AttemptEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Value(observedKey{}) != a.Command {
		panic("AttemptEnded without the context CallStarted returned")
	}
	o.attempts = append(o.attempts, a)
}

func (o *recordingObserver) CallEnded(ctx context.Context, e sendloop.CallEnd) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Value(observedKey{}) != e.Command {
		panic("CallEnded without the context CallStarted returned")
	}
	o.ended = append(o.ended, e)
}

func TestObserverSeesCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fault        *sendlooptest.Fault
		legacy       bool
		wantAttempts int
		wantStatus   int
		wantCode     int
		wantFailure  string
		wantClass    sendloop.RetryClass
		maxRetries   int // 0: the default policy
	}{
		{name: "answered at once", wantAttempts: 1, wantStatus: http.StatusOK},
		{name: "retried once after 503", fault: &sendlooptest.Fault{Status: http.StatusServiceUnavailable},
			wantAttempts: 2, wantStatus: http.StatusOK},
		{name: "a service error", fault: &sendlooptest.Fault{ErrorCode: 1},
			wantAttempts: 1, wantStatus: http.StatusOK, wantCode: 1, wantFailure: sendloop.FailureService},
		{name: "a reset on the last attempt is not retried", fault: &sendlooptest.Fault{Times: 2, Reset: sendlooptest.ResetBeforeExecution},
			maxRetries: 1, wantAttempts: 2, wantFailure: sendloop.FailureTransport},
		{name: "the legacy client shares the observer", legacy: true, wantAttempts: 1, wantStatus: http.StatusOK,
			wantFailure: sendloop.FailureOther, wantClass: sendloop.RetryOneShot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			obs := &recordingObserver{}
			client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
				sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
				sendloop.WithRetry(sendloop.RetryPolicy{MinWait: time.Millisecond, MaxWait: time.Millisecond, MaxRetries: tt.maxRetries}),
				sendloop.WithObserver(obs))
			require.NoError(t, err)
			command := "account.info.get"
			if tt.legacy {
				command = "Account.Info" // unknown to sendlooptest: a fault, sent as a one-shot write
				_, err = client.Legacy().Call(t.Context(), command, nil)
			} else {
				if tt.fault != nil {
					srv.InjectFault(command, *tt.fault)
				}
				_, err = client.Account.Get(t.Context())
			}
			if tt.wantFailure == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			require.Len(t, obs.started, 1)
			require.Len(t, obs.attempts, tt.wantAttempts)
			require.Len(t, obs.ended, 1)
			start, end := obs.started[0], obs.ended[0]
			assert.Equal(t, command, start.Command)
			wantClass := tt.wantClass
			if wantClass == 0 {
				wantClass = sendloop.RetryRead
			}
			assert.Equal(t, wantClass, start.Class)
			assert.Equal(t, http.MethodPost, start.Method)
			assert.Equal(t, srv.URL[len("http://"):], start.Host)
			assert.Positive(t, start.RequestSize)
			assert.Equal(t, tt.wantAttempts, end.Attempts)
			assert.Equal(t, tt.wantStatus, end.StatusCode)
			assert.Equal(t, tt.wantCode, end.ErrorCode)
			assert.Equal(t, tt.wantFailure, end.Failure)
			assert.False(t, end.OutcomeUnknown)
			if tt.wantStatus != 0 {
				assert.Positive(t, end.ResponseSize)
			}
			assert.False(t, end.End.Before(end.Start))
			for i, a := range obs.attempts {
				assert.Equal(t, i+1, a.Attempt)
				assert.Equal(t, i < len(obs.attempts)-1, a.Retry, "attempt %d", a.Attempt)
			}
			// Nothing the observer got holds the key.
			assert.NotContains(t, fmt.Sprintf("%+v %+v %+v", obs.started, obs.attempts, obs.ended), srv.APIKey)
		})
	}
}

func TestObserverSeesAnOutcomeUnknownWrite(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	obs := &recordingObserver{}
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}),
		sendloop.WithObserver(obs))
	require.NoError(t, err)
	srv.InjectFault("list.create", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
	_, err = client.Lists.Create(t.Context(), sendloop.ListCreateParams{Name: "observed", OptInMode: sendloop.OptInSingle})
	require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
	require.NotEmpty(t, obs.ended)
	end := obs.ended[0]
	assert.Equal(t, "list.create", end.Command)
	assert.True(t, end.OutcomeUnknown)
	assert.Equal(t, sendloop.FailureOutcomeUnknown, end.Failure)
	assert.Equal(t, sendloop.RetryOneShot, end.Class)
	assert.Len(t, obs.started, len(obs.ended), "every call started has ended")
}

// BenchmarkObserver measures Account.Get against sendlooptest with no observer and with one
// that does nothing: the request path's allocations without an observer are the baseline.
func BenchmarkObserver(b *testing.B) {
	for _, bench := range []struct {
		name string
		opts []sendloop.Option
	}{
		{name: "none"},
		{name: "noop", opts: []sendloop.Option{sendloop.WithObserver(noopObserver{})}},
	} {
		b.Run(bench.name, func(b *testing.B) {
			srv := sendlooptest.NewServer(b)
			client, err := sendloop.NewClient(srv.APIKey, append([]sendloop.Option{sendloop.WithBaseURL(srv.URL),
				sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}})}, bench.opts...)...)
			require.NoError(b, err)
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.Account.Get(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type noopObserver struct{}

func (noopObserver) CallStarted(ctx context.Context, _ sendloop.CallStart) context.Context {
	return ctx
}
func (noopObserver) AttemptEnded(context.Context, sendloop.AttemptEnd) {}
func (noopObserver) CallEnded(context.Context, sendloop.CallEnd)       {}

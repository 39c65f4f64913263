package otel_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/go-sendloop/sendloop"
	sendloopotel "github.com/go-sendloop/sendloop/otel"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const markerPassword = "MARKER-otel-PASSWORD-9d2e"

type recorded struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	obs    *sendloopotel.Observer
}

func newRecorded(t testing.TB) *recorded {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	obs, err := sendloopotel.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	require.NoError(t, err)
	return &recorded{spans: spans, reader: reader, obs: obs}
}

func (r *recorded) client(t testing.TB, srv *sendlooptest.Server) *sendloop.Client {
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		sendloop.WithRetry(sendloop.RetryPolicy{MinWait: time.Millisecond, MaxWait: time.Millisecond}),
		sendloop.WithObserver(r.obs))
	require.NoError(t, err)
	return client
}

// newRecordedClient is newRecorded, and a client it observes of a server of its own.
func newRecordedClient(t testing.TB) (*recorded, *sendloop.Client) {
	rec := newRecorded(t)
	return rec, rec.client(t, sendlooptest.NewServer(t))
}

func (r *recorded) metrics(t testing.TB) metricdata.ResourceMetrics {
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	return rm
}

func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// counter returns the sum of the Int64 sum named name.
func counter(rm metricdata.ResourceMetrics, name string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

func TestCallSpans(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fault       sendlooptest.Fault
		retries     int
		wantSpans   []string
		wantAttrs   map[string]string
		wantUnknown int64
		// the counters over both calls, the list's create and the subscribe
		wantAttempts, wantErrors int64
	}{
		{name: "a subscribe retried once", fault: sendlooptest.Fault{Status: http.StatusServiceUnavailable},
			wantSpans: []string{"sendloop subscriber.subscribe attempt", "sendloop subscriber.subscribe attempt", "sendloop subscriber.subscribe"},
			wantAttrs: map[string]string{"sendloop.attempts": "2", "sendloop.outcome_unknown": "false",
				"sendloop.command": "subscriber.subscribe", "sendloop.retry_class": "idempotent",
				"http.request.method": "POST", "http.response.status_code": "200"},
			wantAttempts: 3},
		{name: "an outcome-unknown subscribe", fault: sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, retries: -1,
			wantSpans:   []string{"sendloop subscriber.subscribe"}, // one attempt: no child
			wantAttrs:   map[string]string{"sendloop.attempts": "1", "sendloop.outcome_unknown": "true", "error.type": sendloop.FailureOutcomeUnknown},
			wantUnknown: 1, wantAttempts: 2, wantErrors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorded(t)
			srv := sendlooptest.NewServer(t)
			client := rec.client(t, srv)
			if tt.retries < 0 {
				var err error
				client, err = sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
					sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
					sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}), sendloop.WithObserver(rec.obs))
				require.NoError(t, err)
			}
			listID, err := client.Lists.Create(t.Context(), sendloop.ListCreateParams{Name: "traced", OptInMode: sendloop.OptInSingle})
			require.NoError(t, err)
			rec.spans.Reset()
			srv.InjectFault("subscriber.subscribe", tt.fault)
			_, _ = client.Subscribers.Subscribe(t.Context(), listID, sendloop.SubscriberSubscribeParams{EmailAddress: "traced@example.com", SubscriptionIP: "192.0.2.1"})
			ended := rec.spans.Ended()
			require.NotEmpty(t, ended)
			var call sdktrace.ReadOnlySpan
			var names []string
			for _, s := range ended {
				names = append(names, s.Name())
				if s.Name() == "sendloop subscriber.subscribe" {
					call = s
				}
			}
			if tt.wantSpans != nil {
				assert.Equal(t, tt.wantSpans, names)
			}
			require.NotNil(t, call, "spans: %v", names)
			for _, s := range ended {
				if s != call {
					assert.Equal(t, call.SpanContext().SpanID(), s.Parent().SpanID(), "%s is a child of the call's span", s.Name())
				}
			}
			got := attrs(call)
			for k, v := range tt.wantAttrs {
				assert.Equal(t, v, got[k], k)
			}
			base, err := url.Parse(srv.URL)
			require.NoError(t, err)
			assert.Equal(t, base.Host, got["server.address"], "the host and port, nothing of the path")
			rm := rec.metrics(t)
			assert.Equal(t, tt.wantUnknown, counter(rm, "sendloop.outcome_unknown"))
			assert.Equal(t, int64(2), counter(rm, "sendloop.calls"))
			assert.Equal(t, tt.wantAttempts, counter(rm, "sendloop.attempts"))
			assert.Equal(t, tt.wantErrors, counter(rm, "sendloop.errors"))
		})
	}
}

func TestRelaySpanAndMetric(t *testing.T) {
	t.Parallel()
	rec := newRecorded(t)
	fake, err := sendlooptest.StartRelay(t, "sender", markerPassword)
	require.NoError(t, err)
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender", Password: markerPassword},
		smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithMessageObserver(rec.obs))
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	_, err = relay.Send(t.Context(), &smtp.Message{From: "shop@example.com", To: []string{"zoe@example.net"},
		Subject: "Hi {{NAME}}", Text: "Hi {{NAME}}"})
	require.NoError(t, err)
	ended := rec.spans.Ended()
	require.Len(t, ended, 1)
	assert.Equal(t, "sendloop smtp.send", ended[0].Name())
	got := attrs(ended[0])
	assert.Equal(t, "1", got["sendloop.smtp.recipients"])
	assert.Equal(t, smtp.OutcomeDelivered, got["sendloop.smtp.outcome"])
	assert.Equal(t, "250", got["sendloop.smtp.reply_code"])
	assert.Equal(t, int64(1), counter(rec.metrics(t), "sendloop.smtp.messages"))
}

// TestNoSecretInAnySpanOrMetric pushes the marker key and password through calls, a
// failure and a relay send, and looks for them, and for any address, in everything
// recorded.
func TestNoSecretInAnySpanOrMetric(t *testing.T) {
	t.Parallel()
	rec := newRecorded(t)
	const markerKey = "MARKER-otel-KEY-41b7aa"
	srv := sendlooptest.NewServer(t, sendlooptest.WithAPIKey(markerKey))
	client := rec.client(t, srv)
	listID, err := client.Lists.Create(t.Context(), sendloop.ListCreateParams{Name: "secret", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	srv.InjectFault("subscriber.subscribe", sendlooptest.Fault{Status: http.StatusServiceUnavailable})
	_, _ = client.Subscribers.Subscribe(t.Context(), listID, sendloop.SubscriberSubscribeParams{EmailAddress: "who@example.com", SubscriptionIP: "192.0.2.1"})
	_, _ = client.Subscribers.Subscribe(t.Context(), 999999, sendloop.SubscriberSubscribeParams{EmailAddress: "who@example.com", SubscriptionIP: "192.0.2.1"})
	_, _ = client.Legacy().Call(t.Context(), "Account.Info", nil)

	fake, err := sendlooptest.StartRelay(t, "sender", markerPassword)
	require.NoError(t, err)
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender", Password: markerPassword},
		smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithMessageObserver(rec.obs))
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	_, _ = relay.Send(t.Context(), &smtp.Message{From: "shop@example.com", To: []string{"merge@example.net"},
		Subject: "x", Text: "x", Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"NAME": "MARKER-merge"})}})

	var all strings.Builder
	for _, s := range rec.spans.Ended() {
		fmt.Fprintf(&all, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
	}
	fmt.Fprintf(&all, "%+v", rec.metrics(t))
	text := all.String()
	require.Contains(t, text, "sendloop subscriber.subscribe")
	require.Contains(t, text, "sendloop smtp.send")
	for _, secret := range []string{markerKey, markerPassword, "@", "MARKER-merge"} {
		assert.NotContains(t, text, secret)
	}
}

// histogram returns the count and sum of the Float64 histogram named name.
func histogram(rm metricdata.ResourceMetrics, name string) (count uint64, sum float64) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				for _, dp := range h.DataPoints {
					count += dp.Count
					sum += dp.Sum
				}
			}
		}
	}
	return count, sum
}

// The durations are buffered and recorded a batch at a time: a collection still sees every
// call that ended before it, once, whether the buffer was full or not, and however many
// goroutines called.
func TestCallDurationsAllCollected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		goroutines, calls int // calls per goroutine
		collectEvery      int // collect after this many calls of each goroutine; 0: at the end only
	}{
		{name: "one call", goroutines: 1, calls: 1},
		{name: "a batch less one", goroutines: 1, calls: 63},
		{name: "a batch", goroutines: 1, calls: 64},
		{name: "a batch and one", goroutines: 1, calls: 65},
		{name: "collected between calls", goroutines: 1, calls: 150, collectEvery: 40},
		{name: "concurrent", goroutines: 8, calls: 40},
		{name: "concurrent, collected between", goroutines: 4, calls: 60, collectEvery: 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, client := newRecordedClient(t)
			start := time.Now()
			errs := make(chan error, tt.goroutines)
			for range tt.goroutines {
				go func() {
					for i := range tt.calls {
						if _, err := client.Account.Get(t.Context()); err != nil {
							errs <- err
							return
						}
						if tt.collectEvery > 0 && (i+1)%tt.collectEvery == 0 {
							var rm metricdata.ResourceMetrics
							if err := rec.reader.Collect(context.Background(), &rm); err != nil {
								errs <- err
								return
							}
						}
					}
					errs <- nil
				}()
			}
			for range tt.goroutines {
				require.NoError(t, <-errs)
			}
			elapsed := time.Since(start).Seconds()
			rm := rec.metrics(t)
			count, sum := histogram(rm, "sendloop.call.duration")
			want := uint64(tt.goroutines * tt.calls)
			assert.Equal(t, want, count)
			assert.Equal(t, int64(want), counter(rm, "sendloop.calls"))
			assert.Positive(t, sum)
			assert.LessOrEqual(t, sum, elapsed*float64(tt.goroutines), "the calls' durations fit in the time they took")
			count, _ = histogram(rec.metrics(t), "sendloop.call.duration")
			assert.Equal(t, want, count, "a second collection counts no call twice")
		})
	}
}

// The duration's buckets are in seconds, not the SDK's default milliseconds.
func TestCallDurationBuckets(t *testing.T) {
	t.Parallel()
	rec, client := newRecordedClient(t)
	_, err := client.Account.Get(t.Context())
	require.NoError(t, err)
	rm := rec.metrics(t)
	var bounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "sendloop.call.duration" {
				require.Len(t, h.DataPoints, 1)
				bounds = h.DataPoints[0].Bounds
			}
		}
	}
	assert.Equal(t, []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}, bounds)
}

// Calls of one command that end differently each get their own attributes, though the
// observer keeps the latest call's to reuse.
func TestCallSpanAttributesFollowEachEnd(t *testing.T) {
	t.Parallel()
	rec := newRecorded(t)
	srv := sendlooptest.NewServer(t)
	client, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}), sendloop.WithObserver(rec.obs))
	require.NoError(t, err)
	steps := []struct {
		fault     *sendlooptest.Fault
		wantAttrs map[string]string
		wantError bool
	}{
		{wantAttrs: map[string]string{"http.response.status_code": "200", "error.type": ""}},
		{fault: &sendlooptest.Fault{Status: http.StatusServiceUnavailable}, wantError: true,
			wantAttrs: map[string]string{"http.response.status_code": "503", "error.type": sendloop.FailureHTTP}},
		{fault: &sendlooptest.Fault{ErrorCode: 1}, wantError: true,
			wantAttrs: map[string]string{"sendloop.error_code": "1", "error.type": sendloop.FailureService}},
		{wantAttrs: map[string]string{"http.response.status_code": "200", "error.type": "", "sendloop.error_code": ""}},
	}
	for i, step := range steps {
		rec.spans.Reset()
		if step.fault != nil {
			srv.InjectFault("account.info.get", *step.fault)
		}
		_, err := client.Account.Get(t.Context())
		assert.Equal(t, step.wantError, err != nil, "step %d: %v", i, err)
		ended := rec.spans.Ended()
		require.Len(t, ended, 1, "step %d", i)
		got := attrs(ended[0])
		for k, v := range step.wantAttrs {
			assert.Equal(t, v, got[k], "step %d: %s", i, k)
		}
	}
}

// Durations are mostly recorded a batch at a time, without their calls' contexts; the first
// call after each batch records its own with its context, so each collection still has an
// exemplar that links to a call's trace.
func TestCallDurationExemplarsLinkToCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		calls []int // calls before each collection
	}{
		{name: "fewer calls than a batch", calls: []int{3, 2}},
		{name: "more calls than a batch", calls: []int{150, 70}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, client := newRecordedClient(t)
			for round, calls := range tt.calls {
				rec.spans.Reset()
				for range calls {
					_, err := client.Account.Get(t.Context())
					require.NoError(t, err)
				}
				traces := map[string]bool{}
				for _, s := range rec.spans.Ended() {
					traces[s.SpanContext().TraceID().String()] = true
				}
				var exemplars []metricdata.Exemplar[float64]
				for _, sm := range rec.metrics(t).ScopeMetrics {
					for _, m := range sm.Metrics {
						if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "sendloop.call.duration" {
							for _, dp := range h.DataPoints {
								exemplars = append(exemplars, dp.Exemplars...)
							}
						}
					}
				}
				require.NotEmpty(t, exemplars, "round %d", round)
				for _, ex := range exemplars {
					assert.True(t, traces[fmt.Sprintf("%x", ex.TraceID)], "round %d: exemplar of a call of this round", round)
				}
			}
		})
	}
}

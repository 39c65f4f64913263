package otel_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
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

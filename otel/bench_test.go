package otel_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-sendloop/sendloop"
	sendloopotel "github.com/go-sendloop/sendloop/otel"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// discardExporter exports spans nowhere.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkAccountGet measures Account.Get against sendlooptest with no observer, with the
// observer on no-op providers, and with the SDK recording every span (batched to an
// exporter) and metric (a manual reader).
func BenchmarkAccountGet(b *testing.B) {
	noop, err := sendloopotel.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	require.NoError(b, err)
	// Every span recorded and exported, as in production: a batch processor in front of an
	// exporter (here one that drops what it gets). A SpanRecorder would keep every span of
	// the run in memory, and the benchmark would measure its growth.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	recording, err := sendloopotel.New(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	require.NoError(b, err)
	for _, bench := range []struct {
		name string
		obs  sendloop.Observer
	}{
		{name: "none"},
		{name: "noop", obs: noop},
		{name: "recording", obs: recording},
	} {
		b.Run(bench.name, func(b *testing.B) {
			srv := sendlooptest.NewServer(b)
			opts := []sendloop.Option{sendloop.WithBaseURL(srv.URL),
				sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}})}
			if bench.obs != nil {
				opts = append(opts, sendloop.WithObserver(bench.obs))
			}
			client, err := sendloop.NewClient(srv.APIKey, opts...)
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

// BenchmarkObserverCall measures the observer alone, without a request: one call's start,
// attempt and end, as Account.Get makes them, on no-op providers and on the SDK recording
// (as in BenchmarkAccountGet). Its time, against BenchmarkAccountGet/none's, is the share
// of a call the observer takes, without the noise of a request's round trip.
func BenchmarkObserverCall(b *testing.B) {
	noop, err := sendloopotel.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	require.NoError(b, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	recording, err := sendloopotel.New(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	require.NoError(b, err)
	for _, bench := range []struct {
		name string
		obs  *sendloopotel.Observer
	}{
		{name: "noop", obs: noop},
		{name: "recording", obs: recording},
	} {
		b.Run(bench.name, func(b *testing.B) {
			ctx := b.Context()
			start := sendloop.CallStart{Package: "sendloop", Command: "account.info.get", Class: sendloop.RetryRead,
				Method: http.MethodPost, Host: "127.0.0.1:8080", RequestSize: 40}
			b.ReportAllocs()
			for b.Loop() {
				start.Start = time.Now()
				callCtx := bench.obs.CallStarted(ctx, start)
				bench.obs.AttemptEnded(callCtx, sendloop.AttemptEnd{Package: "sendloop", Command: start.Command, Attempt: 1,
					StatusCode: http.StatusOK, Window: 16, Start: start.Start, End: time.Now()})
				bench.obs.CallEnded(callCtx, sendloop.CallEnd{Command: start.Command, Class: start.Class, Attempts: 1,
					StatusCode: http.StatusOK, Start: start.Start, End: time.Now()})
			}
		})
	}
}

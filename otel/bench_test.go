package otel_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-sendloop/sendloop"
	sendloopotel "github.com/go-sendloop/sendloop/otel"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// BenchmarkAccountGet measures Account.Get against sendlooptest with no observer, with the
// observer on no-op providers, and with the SDK recording every span (in memory) and
// metric (a manual reader).
func BenchmarkAccountGet(b *testing.B) {
	noop, err := sendloopotel.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	require.NoError(b, err)
	recording, err := sendloopotel.New(
		sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
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

package otel_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/go-sendloop/sendloop"
	sendloopotel "github.com/go-sendloop/sendloop/otel"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// discardExporter exports spans nowhere.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// benchObservers returns the observer on no-op providers, and on the SDK recording every
// span and metric: a batch processor in front of an exporter (here one that drops what it
// gets), as in production, and a manual reader. A SpanRecorder would keep every span of
// the run in memory, and the benchmark would measure its growth.
func benchObservers(b *testing.B) (noop, recording *sendloopotel.Observer) {
	noop, recording, _ = benchProviders(b)
	return noop, recording
}

// benchProviders is benchObservers, and the recording observer's tracer provider.
func benchProviders(b *testing.B) (noop, recording *sendloopotel.Observer, tp *sdktrace.TracerProvider) {
	noop, err := sendloopotel.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	require.NoError(b, err)
	tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	recording, err = sendloopotel.New(tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
	require.NoError(b, err)
	return noop, recording, tp
}

// BenchmarkAccountGet measures Account.Get against sendlooptest with no observer, with the
// observer on no-op providers, and with the SDK recording every span (batched to an
// exporter) and metric (a manual reader).
func BenchmarkAccountGet(b *testing.B) {
	noop, recording := benchObservers(b)
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
// (as in BenchmarkAccountGet), and sdkFloor on the recording provider. Its time, against
// BenchmarkAccountGet/none's, is the share of a call the observer takes, without the noise
// of a request's round trip.
func BenchmarkObserverCall(b *testing.B) {
	noop, recording, tp := benchProviders(b)
	for _, bench := range []struct {
		name string
		obs  sendloop.Observer
	}{
		{name: "noop", obs: noop},
		{name: "recording", obs: recording},
		{name: "sdkfloor", obs: newSDKFloor(tp)},
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
				bench.obs.CallEnded(callCtx, sendloop.CallEnd{Command: start.Command, Class: start.Class, Method: start.Method, Host: start.Host, Attempts: 1,
					StatusCode: http.StatusOK, Start: start.Start, End: time.Now()})
			}
		})
	}
}

// sdkFloor is the least an instrumentation giving a call's span the observer's attributes
// can make the SDK do: start a client span named for the command, and end it with the
// attributes the observer gives a call answered at once (made once). No metric, no
// cache, no count. Its cost against no observer's is the SDK's floor for such a span;
// the recording observer's against it is what the observer adds.
type sdkFloor struct {
	tracer trace.Tracer
	attrs  []attribute.KeyValue
}

func newSDKFloor(tp trace.TracerProvider) *sdkFloor {
	return &sdkFloor{tracer: tp.Tracer(sendloopotel.ScopeName), attrs: []attribute.KeyValue{
		attribute.String("http.request.method", http.MethodPost), attribute.String("server.address", "127.0.0.1:8080"),
		attribute.String("sendloop.command", "account.info.get"), attribute.String("sendloop.retry_class", "read"),
		attribute.Int("sendloop.attempts", 1), attribute.Bool("sendloop.outcome_unknown", false),
		attribute.Int("http.response.status_code", http.StatusOK)}}
}

func (f *sdkFloor) CallStarted(ctx context.Context, c sendloop.CallStart) context.Context {
	ctx, _ = f.tracer.Start(ctx, "sendloop account.info.get", trace.WithSpanKind(trace.SpanKindClient))
	return ctx
}

func (f *sdkFloor) AttemptEnded(context.Context, sendloop.AttemptEnd) {}

func (f *sdkFloor) CallEnded(ctx context.Context, _ sendloop.CallEnd) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(f.attrs...)
	span.End()
}

// BenchmarkAccountGetInterleaved measures the same three cases as BenchmarkAccountGet, and
// sdkFloor on the recording case's tracer provider, interleaved in small blocks, so that a
// host whose speed drifts from second to second (a shared VM) slows every case alike:
// each iteration is a block of blockCalls calls of each case, in an order of chance, all
// against one sendlooptest server, and the benchmark reports the median over the blocks
// of each case's time per call, and of the cases' time against no observer's (and the
// recording observer's against sdkFloor's) in the same block. The garbage a case makes is
// collected in whichever block runs when the collector does: a case's collection costs
// are shared among all four, which favours the cases that allocate more by about a
// quarter of their extra collection, a percent or so here.
func BenchmarkAccountGetInterleaved(b *testing.B) {
	const blockCalls = 200
	noop, recording, tp := benchProviders(b)
	srv := sendlooptest.NewServer(b)
	names := []string{"none", "noop", "recording", "sdkfloor"}
	observers := []sendloop.Observer{nil, noop, recording, newSDKFloor(tp)}
	clients := make([]*sendloop.Client, len(names))
	// Made in an order of chance: clients alike measured about 1% apart by the order
	// they were made in.
	for _, i := range rand.Perm(len(names)) {
		opts := []sendloop.Option{sendloop.WithBaseURL(srv.URL),
			sendloop.WithHTTPClient(&http.Client{Transport: &http.Transport{}})}
		if observers[i] != nil {
			opts = append(opts, sendloop.WithObserver(observers[i]))
		}
		c, err := sendloop.NewClient(srv.APIKey, opts...)
		require.NoError(b, err)
		clients[i] = c
	}
	ctx := b.Context()
	perCall := make([][]float64, len(names)) // ns a call, per block
	// The ratios reported, of one case's time in a block to another's (indexes in names).
	ratios := []struct {
		name     string
		num, den int
		blocks   []float64
	}{{name: "noop/none", num: 1}, {name: "recording/none", num: 2}, {name: "sdkfloor/none", num: 3},
		{name: "recording/sdkfloor", num: 2, den: 3}}
	for b.Loop() {
		took := make([]time.Duration, len(clients))
		// Each block in an order of chance: in an order that rotated, each case mostly
		// following the same other, four clients alike measured up to 2% apart.
		for _, i := range rand.Perm(len(clients)) {
			start := time.Now()
			for range blockCalls {
				if _, err := clients[i].Account.Get(ctx); err != nil {
					b.Fatal(err)
				}
			}
			took[i] = time.Since(start)
		}
		for i := range took {
			perCall[i] = append(perCall[i], float64(took[i].Nanoseconds())/blockCalls)
		}
		for k := range ratios {
			r := &ratios[k]
			r.blocks = append(r.blocks, float64(took[r.num])/float64(took[r.den]))
		}
	}
	for i, name := range names {
		b.ReportMetric(median(perCall[i]), "ns/"+name)
	}
	for _, r := range ratios {
		b.ReportMetric(median(r.blocks), r.name)
	}
	b.ReportMetric(0, "ns/op") // an iteration is a block of every case: its time means nothing alone
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

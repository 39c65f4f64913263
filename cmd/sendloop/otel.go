package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-sendloop/sendloop"
	sljob "github.com/go-sendloop/sendloop/job"
	slotel "github.com/go-sendloop/sendloop/otel"
)

// The standard OpenTelemetry variables the tool reads to export its traces.
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envOTLPHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	envOTLPTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	envTracesExporter     = "OTEL_TRACES_EXPORTER"
	envServiceName        = "OTEL_SERVICE_NAME"
)

const (
	// otlpProtocol is the one protocol the tool exports with: the gRPC exporter would pull
	// gRPC into the binary for a choice the collectors also accept over HTTP.
	otlpProtocol = "http/protobuf"
	// otlpDefaultEndpoint is the specification's default for OTLP/HTTP, used by --otel
	// without an endpoint variable: a collector on this host.
	otlpDefaultEndpoint = "http://localhost:4318"
	// tracingFlushTimeout bounds the flush at exit, so that a collector that is down or
	// slow never holds up the tool for longer.
	tracingFlushTimeout = 5 * time.Second
	// cliScope is the instrumentation scope of the span of a CLI command.
	cliScope = "github.com/go-sendloop/sendloop/cmd/sendloop"
)

// tracing is the OTLP export of one invocation: the observer the clients report to and the
// provider to flush at exit.
type tracing struct {
	provider *sdktrace.TracerProvider
	observer *slotel.Observer
	exporter *notingExporter
	secrets  []string // what an export error must not show: the endpoint and header values
}

// startTracing sets up the export of traces when --otel or the environment asks for it;
// it returns nil when neither does. It does no I/O: the exporter connects on its first
// export. The errors name the variable that is wrong, never its value, which may hold a
// credential.
func (a *app) startTracing(ctx context.Context) (*tracing, error) {
	endpointVar, endpoint := envOTLPTracesEndpoint, strings.TrimSpace(a.getenv(envOTLPTracesEndpoint))
	if endpoint == "" {
		endpointVar, endpoint = envOTLPEndpoint, strings.TrimSpace(a.getenv(envOTLPEndpoint))
	}
	exporterName := strings.TrimSpace(a.getenv(envTracesExporter))
	if !a.otel && (endpoint == "" || exporterName == "none") {
		return nil, nil
	}
	if exporterName != "" && exporterName != "otlp" && exporterName != "none" {
		return nil, usagef("", "%s=%s: sendloop exports traces with otlp only", envTracesExporter, exporterName)
	}
	protocolVar, protocol := envOTLPTracesProtocol, strings.TrimSpace(a.getenv(envOTLPTracesProtocol))
	if protocol == "" {
		protocolVar, protocol = envOTLPProtocol, strings.TrimSpace(a.getenv(envOTLPProtocol))
	}
	if protocol != "" && protocol != otlpProtocol {
		return nil, usagef("", "%s=%s: sendloop exports traces over %s only", protocolVar, protocol, otlpProtocol)
	}
	tracesURL, err := otlpTracesURL(endpointVar, endpoint)
	if err != nil {
		return nil, err
	}
	headers, err := otlpHeaders(a.getenv)
	if err != nil {
		return nil, err
	}
	t := &tracing{secrets: []string{endpoint, tracesURL}}
	if u, err := url.Parse(tracesURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			t.secrets = append(t.secrets, p)
		}
		t.secrets = append(t.secrets, u.User.String())
	}
	for _, v := range headers {
		t.secrets = append(t.secrets, v)
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(tracesURL),
		otlptracehttp.WithHeaders(headers),
		otlptracehttp.WithTimeout(a.flushTimeout()),
		// A short retry: the flush at exit is bounded anyway, and a CLI run is short.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 250 * time.Millisecond,
			MaxInterval: time.Second, MaxElapsedTime: 3 * time.Second}),
	}
	if a.otlpClient != nil {
		opts = append(opts, otlptracehttp.WithHTTPClient(a.otlpClient))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, configError("setting up the OTLP trace exporter: %s", t.redact(err.Error()))
	}
	t.exporter = &notingExporter{SpanExporter: exp}
	service := strings.TrimSpace(a.getenv(envServiceName))
	if service == "" {
		service = "sendloop"
	}
	t.provider = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(t.exporter),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", service),
			attribute.String("service.version", sendloop.Version),
		)),
	)
	if t.observer, err = slotel.New(t.provider, noop.NewMeterProvider()); err != nil {
		_ = t.provider.Shutdown(ctx)
		return nil, err
	}
	return t, nil
}

// otlpTracesURL returns the URL to post traces to: the traces variable's as it is, the
// general one's with the signal's path /v1/traces, as the specification has it.
func otlpTracesURL(name, endpoint string) (string, error) {
	if endpoint == "" {
		name, endpoint = envOTLPEndpoint, otlpDefaultEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", configError("%s is not an http or https URL", name)
	}
	if name == envOTLPEndpoint {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		u.RawPath = ""
	}
	return u.String(), nil
}

// otlpHeaders reads the headers to send with each export, e.g. an API key of the tracing
// backend: OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over it, each
// a comma-separated list of key=value with URL-encoded values.
func otlpHeaders(getenv func(string) string) (map[string]string, error) {
	headers := map[string]string{}
	for _, name := range []string{envOTLPHeaders, envOTLPTracesHeaders} {
		raw := strings.TrimSpace(getenv(name))
		if raw == "" {
			continue
		}
		for i, pair := range strings.Split(raw, ",") {
			k, v, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			value, err := url.PathUnescape(strings.TrimSpace(v))
			if !ok || k == "" || err != nil {
				return nil, configError("%s: entry %d is not key=value with a URL-encoded value", name, i+1)
			}
			headers[http.CanonicalHeaderKey(k)] = value
		}
	}
	return headers, nil
}

// clientOptions returns the option that reports a client's calls, none when not tracing.
func (t *tracing) clientOptions() []sendloop.Option {
	if t == nil {
		return nil
	}
	return []sendloop.Option{sendloop.WithObserver(t.observer)}
}

// jobObserver is what a job reports its phases to, nil when not tracing.
func (t *tracing) jobObserver() sljob.Observer {
	if t == nil {
		return nil
	}
	return t.observer
}

// start starts the span of the CLI command, the parent of its calls' spans.
func (t *tracing) start(ctx context.Context, command string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.provider.Tracer(cliScope).Start(ctx, "sendloop "+command,
		trace.WithAttributes(attribute.String("sendloop.cli.command", command)))
}

// end ends the command's span, flushes the spans, and notes on stderr, in one line, when
// they could not be exported: tracing is never a reason for the command to fail, and never
// a reason to wait longer than tracingFlushTimeout.
func (a *app) endTracing(ctx context.Context, t *tracing, span trace.Span, code int) {
	if t == nil {
		return
	}
	if code != exitOK {
		span.SetStatus(codes.Error, fmt.Sprintf("exit status %d", code))
	}
	span.SetAttributes(attribute.Int("sendloop.exit_code", code))
	span.End()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.flushTimeout())
	defer cancel()
	err := t.provider.Shutdown(ctx)
	if exportErr := t.exporter.failure(); exportErr != nil {
		err = exportErr
	}
	switch {
	case err == nil:
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
		a.note("traces not exported: the OTLP endpoint did not answer within %s", a.flushTimeout())
	default:
		a.note("traces not exported: %s", t.redact(exportReason(err)))
	}
}

// flushTimeout is how long the tool waits for the collector at exit.
func (a *app) flushTimeout() time.Duration {
	if a.otlpFlush > 0 {
		return a.otlpFlush
	}
	return tracingFlushTimeout
}

// exportReason is an export error without the URL a *url.Error carries.
func exportReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// redact blanks the endpoint and the header values out of msg.
func (t *tracing) redact(msg string) string {
	for _, s := range t.secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

// notingExporter keeps the first export error for the note at exit, rather than letting
// OpenTelemetry's global handler log each one.
type notingExporter struct {
	sdktrace.SpanExporter
	mu  sync.Mutex
	err error
}

// ExportSpans exports and keeps a failure.
func (e *notingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.mu.Lock()
		if e.err == nil {
			e.err = err
		}
		e.mu.Unlock()
	}
	return nil
}

func (e *notingExporter) failure() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

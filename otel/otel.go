// Package otel reports the calls of a sendloop.Client (and of its Legacy client) and the
// messages of an smtp.Relay to OpenTelemetry: a span per command call, and metrics. The
// root package never imports OpenTelemetry; a program that does not import this package
// builds none of it.
//
// Spans: one per command call, named "sendloop <command>" (e.g. "sendloop
// subscriber.import"), a child of the span in the caller's context; when a call took more
// than one attempt, one child span per attempt ("sendloop <command> attempt"), each made
// as its attempt ends (so a call whose retry was cut short by its context during the
// wait keeps the child of its one attempt). One span per relay message, "sendloop
// smtp.send". One per phase of a bulk job (Observer is a job.Observer: give it to
// mailmerge.SendOptions.Observer and listsync's Observer options):
// "sendloop send" for a send, "sendloop sync plan" and "sendloop sync apply" for a sync,
// with sendloop.job, sendloop.phase, sendloop.rows and one sendloop.rows.<fate> count per
// fate (sendloop.rows.done, sendloop.rows.rejected, …); the phase's calls and messages are
// its children. Attributes: http.request.method, server.address,
// http.response.status_code, error.type, sendloop.command, sendloop.retry_class,
// sendloop.error_code, sendloop.outcome_unknown, sendloop.attempts (and, on a relay span,
// sendloop.smtp.recipients, sendloop.smtp.size, sendloop.smtp.reply_code,
// sendloop.smtp.outcome). No span, attribute or metric ever holds the API key, the relay
// password, an address, a URL's path or query, a body or a merge value: the SDK does not
// give them to the observer.
//
// Metrics (meter "github.com/go-sendloop/sendloop/otel"):
//
//	| Instrument               | Kind               | Unit      | Attributes                                         |
//	|--------------------------|--------------------|-----------|----------------------------------------------------|
//	| sendloop.calls           | counter            | {call}    | sendloop.command, sendloop.retry_class             |
//	| sendloop.attempts        | counter            | {attempt} | sendloop.command, sendloop.retry_class             |
//	| sendloop.errors          | counter            | {call}    | sendloop.command, sendloop.retry_class, error.type |
//	| sendloop.call.duration   | histogram          | s         | sendloop.command, sendloop.retry_class             |
//	| sendloop.outcome_unknown | counter            | {call}    | sendloop.command, sendloop.retry_class             |
//	| sendloop.smtp.messages   | counter            | {message} | sendloop.smtp.outcome                              |
//	| sendloop.job.rows        | counter            | {row}     | sendloop.job, sendloop.phase, sendloop.fate        |
//	| sendloop.window          | gauge (observable) | {attempt} | sendloop.package                                   |
//
// sendloop.window is the congestion window as the package's latest attempt ended, read at
// each collection (two clients of one package in a program share its value; a client and
// its Legacy() share one window): how many attempts it lets be in flight at once, halved
// by each 429 or 503 the service answers and grown back by its answers, so a dashboard
// shows when and how hard the service pushed back. An attempt only stores the number; the
// meter reads it.
package otel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/smtp"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/go-sendloop/sendloop/otel"

// Observer implements sendloop.Observer and smtp.MessageObserver with OpenTelemetry. Give
// it to sendloop.WithObserver and smtp.WithMessageObserver. It is safe for concurrent use.
// An observer that wraps it (a fan-out to several) must give its AttemptEnded and
// CallEnded the context its CallStarted returned: the call's span is found there.
type Observer struct {
	tracer   trace.Tracer
	calls    metric.Int64Counter
	attempts metric.Int64Counter
	errors   metric.Int64Counter
	duration metric.Float64Histogram
	unknown  metric.Int64Counter
	messages metric.Int64Counter
	jobRows  metric.Int64Counter
	windows  cache[string, *atomic.Int64] // by package: the window as its latest attempt ended
	commands cache[commandKey, *commandEntry]
	ends     cache[commandKey, *commandEnd] // by command and class
}

// cache is a map read without a lock, for the few keys (commands, classes, packages) a
// program's clients use, each read on every call: a read loads the current map (a
// sync.Map, hashing its interface keys, took about 8% of the observer's time in a
// profile); a miss publishes a copy holding the new value.
type cache[K comparable, V any] struct {
	mu sync.Mutex
	m  atomic.Pointer[map[K]V]
}

// get returns k's value, made by build on its first use.
func (c *cache[K, V]) get(k K, build func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
	}
	v := build()
	if old != nil && len(*old) >= maxCached {
		// Keys past the bound (a program that calls many hosts, one an account) are built
		// each time: the cache stays small, and a copy stays cheap.
		return v
	}
	next := map[K]V{}
	if old != nil {
		maps.Copy(next, *old)
	}
	next[k] = v
	c.m.Store(&next)
	return v
}

// maxCached bounds a cache: a client calls a few dozen commands, of one class each, on a
// host or two.
const maxCached = 512

// each calls f with every key and value.
func (c *cache[K, V]) each(f func(K, V)) {
	if m := c.m.Load(); m != nil {
		for k, v := range *m {
			f(k, v)
		}
	}
}

// New returns an Observer that records with tp and mp (nil for OpenTelemetry's global
// providers, via otel.GetTracerProvider and otel.GetMeterProvider in the caller).
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Observer, error) {
	m := mp.Meter(ScopeName)
	o := &Observer{tracer: tp.Tracer(ScopeName)}
	var err error
	if o.calls, err = m.Int64Counter("sendloop.calls", metric.WithUnit("{call}"), metric.WithDescription("Command calls sent.")); err != nil {
		return nil, err
	}
	if o.attempts, err = m.Int64Counter("sendloop.attempts", metric.WithUnit("{attempt}"), metric.WithDescription("Attempts of command calls, retries included.")); err != nil {
		return nil, err
	}
	if o.errors, err = m.Int64Counter("sendloop.errors", metric.WithUnit("{call}"), metric.WithDescription("Command calls that failed.")); err != nil {
		return nil, err
	}
	if o.duration, err = m.Float64Histogram("sendloop.call.duration", metric.WithUnit("s"), metric.WithDescription("Duration of command calls, retries and waits included.")); err != nil {
		return nil, err
	}
	if o.unknown, err = m.Int64Counter("sendloop.outcome_unknown", metric.WithUnit("{call}"), metric.WithDescription("Writes whose outcome is unknown.")); err != nil {
		return nil, err
	}
	if o.messages, err = m.Int64Counter("sendloop.smtp.messages", metric.WithUnit("{message}"), metric.WithDescription("Relay messages by outcome.")); err != nil {
		return nil, err
	}
	if o.jobRows, err = m.Int64Counter("sendloop.job.rows", metric.WithUnit("{row}"), metric.WithDescription("Rows of bulk jobs done, by fate.")); err != nil {
		return nil, err
	}
	if _, err = m.Int64ObservableGauge("sendloop.window", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts the client lets be in flight at once (its congestion window)."),
		metric.WithInt64Callback(o.observeWindows)); err != nil {
		return nil, err
	}
	return o, nil
}

var (
	_ sendloop.Observer    = (*Observer)(nil)
	_ smtp.MessageObserver = (*Observer)(nil)
	_ job.Observer         = (*Observer)(nil)
)

// commandKey names what a command's calls share: their span's name and start options
// (kind and attributes), and their metrics' attribute set.
type commandKey struct {
	command, method, host string
	class                 sendloop.RetryClass
}

// commandEntry is what a command's calls share, made once per command, class, method and
// host: building a span name concatenates, an attribute set sorts, a variadic option
// allocates, and a client calls few commands many times.
type commandEntry struct {
	spanName  string
	startOpts []trace.SpanStartOption
}

func (o *Observer) command(k commandKey) *commandEntry {
	return o.commands.get(k, func() *commandEntry {
		// What a sampler may want (OpenTelemetry's HTTP conventions give it the method and
		// the server; the span's name holds the command) is given at the start; the rest
		// with the call's end, so that the span's attributes are copied once.
		return &commandEntry{spanName: "sendloop " + k.command, startOpts: []trace.SpanStartOption{clientKind,
			trace.WithAttributes(
				attribute.String("http.request.method", k.method),
				attribute.String("server.address", k.host))}}
	})
}

// commandEnd is what the ends of a command's calls share: its metrics' attribute set
// (sendloop.command, sendloop.retry_class) as the options of Add and Record, and the same
// attributes for its span.
type commandEnd struct {
	add    []metric.AddOption
	record []metric.RecordOption
	attrs  [2]attribute.KeyValue
}

func (o *Observer) commandEnd(command string, class sendloop.RetryClass) *commandEnd {
	return o.ends.get(commandKey{command: command, class: class}, func() *commandEnd {
		attrs := [2]attribute.KeyValue{attribute.String("sendloop.command", command),
			attribute.String("sendloop.retry_class", class.String())}
		set := metric.WithAttributeSet(attribute.NewSet(attrs[:]...))
		return &commandEnd{add: []metric.AddOption{set}, record: []metric.RecordOption{set}, attrs: attrs}
	})
}

// observeWindows reports the window as the latest attempt of each package ended
// (sendloop.package: "sendloop" or "sendloop/legacy"; a client and its Legacy() share one
// window, so both report it).
func (o *Observer) observeWindows(_ context.Context, obs metric.Int64Observer) error {
	o.windows.each(func(pkg string, w *atomic.Int64) {
		obs.Observe(w.Load(), metric.WithAttributes(attribute.String("sendloop.package", pkg)))
	})
	return nil
}

var clientKind = trace.WithSpanKind(trace.SpanKindClient)

func newWindow() *atomic.Int64 { return new(atomic.Int64) }

// CallStarted starts the call's span, a child of ctx's, and returns the context holding it:
// the one the call's attempts and its end are told with, as sendloop.Observer requires:
// AttemptEnded and CallEnded find the span there. The span starts and ends on the
// tracer's clock when CallStarted and CallEnded run (sendloop.call.duration is measured
// from CallStart.Start to CallEnd.End).
func (o *Observer) CallStarted(ctx context.Context, c sendloop.CallStart) context.Context {
	e := o.command(commandKey{command: c.Command, method: c.Method, host: c.Host, class: c.Class})
	ctx, _ = o.tracer.Start(ctx, e.spanName, e.startOpts...)
	return ctx
}

// AttemptEnded records the window and, for a call of more than one attempt, the attempt's
// child span: an attempt to be retried, or one after the first. So a call answered at once
// keeps no state between its events, and costs one span.
func (o *Observer) AttemptEnded(ctx context.Context, a sendloop.AttemptEnd) {
	if a.Window > 0 {
		o.windows.get(a.Package, newWindow).Store(int64(a.Window))
	}
	if !a.Retry && a.Attempt <= 1 {
		return
	}
	_, child := o.tracer.Start(ctx, "sendloop "+a.Command+" attempt", clientKind,
		trace.WithTimestamp(a.Start), trace.WithAttributes(attemptAttributes(a)...))
	if a.Failure != "" {
		child.SetStatus(codes.Error, a.Failure)
	}
	child.End(trace.WithTimestamp(a.End))
}

// CallEnded ends the call's span and records its metrics.
func (o *Observer) CallEnded(ctx context.Context, e sendloop.CallEnd) {
	end := o.commandEnd(e.Command, e.Class)
	// The call and attempt counts are added without the span's context, so that they
	// offer the meter no exemplar (two offers a call, about 5% of the observer's time in a
	// profile): the duration, the errors and the outcome-unknown count link to the trace.
	o.calls.Add(context.Background(), 1, end.add...)
	o.attempts.Add(context.Background(), int64(e.Attempts), end.add...)
	o.duration.Record(ctx, e.End.Sub(e.Start).Seconds(), end.record...)
	if e.Failure != "" {
		o.errors.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("sendloop.command", e.Command),
			attribute.String("sendloop.retry_class", e.Class.String()),
			attribute.String("error.type", e.Failure))))
	}
	if e.OutcomeUnknown {
		o.unknown.Add(ctx, 1, end.add...)
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	// One slice, as large as the attributes can be: a tracer may keep it (the SDK copies).
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, end.attrs[0], end.attrs[1],
		attribute.Int("sendloop.attempts", e.Attempts),
		attribute.Bool("sendloop.outcome_unknown", e.OutcomeUnknown))
	if e.StatusCode != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", e.StatusCode))
	}
	if e.ErrorCode != 0 {
		attrs = append(attrs, attribute.Int("sendloop.error_code", e.ErrorCode))
	}
	if e.Failure != "" {
		attrs = append(attrs, attribute.String("error.type", e.Failure))
		span.SetStatus(codes.Error, e.Failure)
	}
	span.SetAttributes(attrs...)
	span.End()
}

func attemptAttributes(a sendloop.AttemptEnd) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.Int("http.request.resend_count", a.Attempt-1)}
	if a.StatusCode != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", a.StatusCode))
	}
	switch {
	case a.Failure != "":
		attrs = append(attrs, attribute.String("error.type", a.Failure))
	case a.StatusCode >= 400:
		// As OpenTelemetry's HTTP conventions have it: the status, for an attempt answered so.
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(a.StatusCode)))
	}
	return attrs
}

// MessageSent records a relay message's span and metric.
func (o *Observer) MessageSent(ctx context.Context, m smtp.MessageEvent) {
	o.messages.Add(ctx, 1, metric.WithAttributes(attribute.String("sendloop.smtp.outcome", m.Outcome)))
	_, span := o.tracer.Start(ctx, "sendloop smtp.send", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(m.Start), trace.WithAttributes(
			attribute.Int("sendloop.smtp.recipients", m.Recipients),
			attribute.Int("sendloop.smtp.accepted", m.Accepted),
			attribute.Int("sendloop.smtp.size", m.Size),
			attribute.Int("sendloop.smtp.reply_code", m.ReplyCode),
			attribute.Int("sendloop.attempts", m.Attempts),
			attribute.String("sendloop.smtp.outcome", m.Outcome),
		))
	if m.Outcome != smtp.OutcomeDelivered {
		span.SetAttributes(attribute.String("error.type", m.Outcome))
		span.SetStatus(codes.Error, m.Outcome)
	}
	span.End(trace.WithTimestamp(nonZero(m.End)))
}

func nonZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

type phaseKey struct{}

// PhaseStarted starts the span of a job's phase, a child of ctx's.
func (o *Observer) PhaseStarted(ctx context.Context, p job.Phase) context.Context {
	ctx, span := o.tracer.Start(ctx, phaseName(p), trace.WithAttributes(
		attribute.String("sendloop.job", p.Job), attribute.String("sendloop.phase", p.Name)))
	return context.WithValue(ctx, phaseKey{}, span)
}

// RowsDone counts the rows done by fate.
func (o *Observer) RowsDone(ctx context.Context, p job.Phase, done job.Tally) {
	for _, f := range job.Fates() {
		if n := done.Of(f); n > 0 {
			o.jobRows.Add(ctx, int64(n), metric.WithAttributeSet(attribute.NewSet(
				attribute.String("sendloop.job", p.Job), attribute.String("sendloop.phase", p.Name),
				attribute.String("sendloop.fate", f.String()))))
		}
	}
}

// PhaseEnded ends the phase's span, with its rows by fate.
func (o *Observer) PhaseEnded(ctx context.Context, p job.Phase, rows job.Tally, err error) {
	span, ok := ctx.Value(phaseKey{}).(trace.Span)
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{attribute.Int("sendloop.rows", rows.Total())}
	for _, f := range job.Fates() {
		attrs = append(attrs, attribute.Int("sendloop.rows."+strings.ReplaceAll(f.String(), " ", "_"), rows.Of(f)))
	}
	span.SetAttributes(attrs...)
	if err != nil {
		// The kind of failure only: an error's text may quote an address.
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, errorType(err))
	}
	span.End()
}

// phaseName is a phase's span name: "sendloop send", "sendloop sync plan".
func phaseName(p job.Phase) string {
	if p.Name == p.Job || p.Name == "" {
		return "sendloop " + p.Job
	}
	return "sendloop " + p.Job + " " + p.Name
}

// errorType names an error by its type, as OpenTelemetry's error.type wants when there is
// no code: "*job.BudgetError", "context.Canceled".
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "context.Canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context.DeadlineExceeded"
	}
	var be *job.BudgetError
	if errors.As(err, &be) {
		return "*job.BudgetError"
	}
	return fmt.Sprintf("%T", err)
}

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
//	| Instrument               | Kind                 | Unit      | Attributes                                         |
//	|--------------------------|----------------------|-----------|----------------------------------------------------|
//	| sendloop.calls           | counter (observable) | {call}    | sendloop.command, sendloop.retry_class             |
//	| sendloop.attempts        | counter (observable) | {attempt} | sendloop.command, sendloop.retry_class             |
//	| sendloop.errors          | counter (observable) | {call}    | sendloop.command, sendloop.retry_class, error.type |
//	| sendloop.call.duration   | histogram            | s         | sendloop.command, sendloop.retry_class             |
//	| sendloop.outcome_unknown | counter (observable) | {call}    | sendloop.command, sendloop.retry_class             |
//	| sendloop.smtp.messages   | counter              | {message} | sendloop.smtp.outcome                              |
//	| sendloop.job.rows        | counter              | {row}     | sendloop.job, sendloop.phase, sendloop.fate        |
//	| sendloop.window          | gauge (observable)   | {attempt} | sendloop.package                                   |
//
// sendloop.call.duration advises the bucket boundaries OpenTelemetry's conventions give
// for HTTP client request durations (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75,
// 1, 2.5, 5, 7.5 and 10 seconds), and 30 and 60 for calls whose retries waited; a view
// can set others.
//
// The call counters are observable: a call adds to counts of the observer's own, which
// the meter reads at each collection (an exporter sees cumulative sums, as of any
// counter). A call's duration is buffered with its command's and recorded
// durationBatch at a time, and the rest at each collection, so a reader sees every call
// that ended before it collected: recording each on its own, a measurement the SDK
// resolves and offers to its exemplar reservoir, cost an Account.Get against
// sendlooptest about 3% more when its cost was taken apart (the histogram alone against
// no observer). A buffered duration is recorded without its call's context, so it can be
// no trace exemplar; the first call of each command after each record of the buffer (so
// at least one a collection, if the command was called) records its own at once with its
// context, and sendloop.call.duration's exemplars link to those calls' traces.
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
	"slices"
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

// durationBuckets is the bucket boundaries, in seconds, sendloop.call.duration advises the
// meter to use (see the package doc). Without them the SDK's defaults, made for
// milliseconds, would put every call below 5 seconds in one bucket.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60}

// Observer implements sendloop.Observer and smtp.MessageObserver with OpenTelemetry. Give
// it to sendloop.WithObserver and smtp.WithMessageObserver. It is safe for concurrent use.
// An observer that wraps it (a fan-out to several) must give its AttemptEnded and
// CallEnded the context its CallStarted returned: the call's span is found there.
type Observer struct {
	tracer    trace.Tracer
	calls     metric.Int64ObservableCounter
	attempts  metric.Int64ObservableCounter
	errors    metric.Int64ObservableCounter
	unknown   metric.Int64ObservableCounter
	duration  metric.Float64Histogram
	messages  metric.Int64Counter
	jobRows   metric.Int64Counter
	windows   cache[string, *atomic.Int64]   // by package: the window as its latest attempt ended
	spanNames cache[string, string]          // by command
	ends      cache[commandKey, *commandEnd] // by command and class; unbounded, see commandEnd
	spanEnds  cache[spanEndKey, *spanEndAttrs]
}

// cache is a map read without a lock, for the few keys (commands, classes, packages) a
// program's clients use, each read on every call: a read loads the current map (a
// sync.Map, hashing its interface keys, took about 8% of the observer's time in a
// profile); a miss publishes a copy holding the new value.
type cache[K comparable, V any] struct {
	mu sync.Mutex
	m  atomic.Pointer[map[K]V]
	// unbounded keeps every key: for values that must be kept (counts), of keys a
	// program's code names (its commands), never its data.
	unbounded bool
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
	if old != nil && len(*old) >= maxCached && !c.unbounded {
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
	o.ends.unbounded = true
	var err error
	if o.calls, err = m.Int64ObservableCounter("sendloop.calls", metric.WithUnit("{call}"), metric.WithDescription("Command calls sent.")); err != nil {
		return nil, err
	}
	if o.attempts, err = m.Int64ObservableCounter("sendloop.attempts", metric.WithUnit("{attempt}"), metric.WithDescription("Attempts of command calls, retries included.")); err != nil {
		return nil, err
	}
	if o.errors, err = m.Int64ObservableCounter("sendloop.errors", metric.WithUnit("{call}"), metric.WithDescription("Command calls that failed.")); err != nil {
		return nil, err
	}
	if o.unknown, err = m.Int64ObservableCounter("sendloop.outcome_unknown", metric.WithUnit("{call}"), metric.WithDescription("Writes whose outcome is unknown.")); err != nil {
		return nil, err
	}
	if _, err = m.RegisterCallback(o.observeCalls, o.calls, o.attempts, o.errors, o.unknown); err != nil {
		return nil, err
	}
	if o.duration, err = m.Float64Histogram("sendloop.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of command calls, retries and waits included."),
		metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
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

// commandKey names a command and its retry class: what its calls' metrics share.
type commandKey struct {
	command string
	class   sendloop.RetryClass
}

// spanName returns the name of command's spans, made once: a client calls few commands
// many times.
func (o *Observer) spanName(command string) string {
	return o.spanNames.get(command, func() string { return "sendloop " + command })
}

// commandEnd is what the ends of a command's calls share: its metrics' attribute set
// (sendloop.command, sendloop.retry_class), as the options of Record and of the
// observations, and its counts of calls, attempts, failures by kind and unknown outcomes.
// A call adds to the counts; the meter reads them at each collection (observeCalls):
// three synchronous counters' Adds a call, each resolving its attribute set, took about a
// seventh of the observer's time in a profile, and an atomic add next to nothing. The
// entries are kept however many
// (Observer.ends is unbounded), or counts would be lost: there is one a command and class
// the program calls, a few dozen.
type commandEnd struct {
	// Read by every call, written once.
	set      attribute.Set
	observe  []metric.ObserveOption
	record   []metric.RecordOption
	failures cache[string, *failureCount] // by CallEnd.Failure, a few fixed names
	// lastSpanEnd is the span attributes of the command's latest call to end, most often
	// those of the next one too: comparing its key costs less than hashing it. Written
	// only when a call ends otherwise.
	lastSpanEnd atomic.Pointer[spanEndAttrs]

	// Written by every call, kept off the cache line of what is only read (a write by a
	// call on another core would make the next call's reads of it miss), and together, so
	// that a call's writes touch few lines.
	_                        [64]byte
	calls, attempts, unknown atomic.Int64
	mu                       sync.Mutex
	pending                  int                    // how many of durations are
	exemplarTaken            bool                   // a call since the last record of durations recorded its own
	durations                [durationBatch]float64 // seconds, of the calls ended since the last record
}

// durationBatch is how many calls' durations a command buffers before it records them.
const durationBatch = 64

// addDuration records the duration of a call that ended with ctx: at once, with ctx (so it
// can be an exemplar), for the first call since the command's buffer was last recorded;
// otherwise buffered, and the buffer recorded when it holds durationBatch, outside the
// lock, so that the command's other calls wait for a copy, not for the histogram.
func (e *commandEnd) addDuration(ctx context.Context, h metric.Float64Histogram, seconds float64) {
	e.mu.Lock()
	if !e.exemplarTaken {
		e.exemplarTaken = true
		e.mu.Unlock()
		h.Record(ctx, seconds, e.record...)
		return
	}
	e.durations[e.pending] = seconds
	e.pending++
	if e.pending < durationBatch {
		e.mu.Unlock()
		return
	}
	batch := e.durations
	e.pending, e.exemplarTaken = 0, false
	e.mu.Unlock()
	e.recordDurations(h, batch[:])
}

// flushDurations records the command's buffered durations: as the meter collects, so that
// it sees them.
func (e *commandEnd) flushDurations(h metric.Float64Histogram) {
	e.mu.Lock()
	batch, n := e.durations, e.pending
	e.pending, e.exemplarTaken = 0, false
	e.mu.Unlock()
	e.recordDurations(h, batch[:n])
}

func (e *commandEnd) recordDurations(h metric.Float64Histogram, seconds []float64) {
	for _, s := range seconds {
		// Not a call's context: which would it be? See the package doc on exemplars.
		h.Record(context.Background(), s, e.record...)
	}
}

// failureCount is a command's count of failures of one kind, with its attribute set.
type failureCount struct {
	observe []metric.ObserveOption
	n       atomic.Int64
}

func (o *Observer) commandEnd(command string, class sendloop.RetryClass) *commandEnd {
	return o.ends.get(commandKey{command, class}, func() *commandEnd {
		set := attribute.NewSet(attribute.String("sendloop.command", command),
			attribute.String("sendloop.retry_class", class.String()))
		e := &commandEnd{set: set, observe: []metric.ObserveOption{metric.WithAttributeSet(set)},
			record: []metric.RecordOption{metric.WithAttributeSet(set)}}
		e.failures.unbounded = true
		return e
	})
}

// failure returns the count of e's failures of kind failure.
func (e *commandEnd) failure(failure string) *failureCount {
	return e.failures.get(failure, func() *failureCount {
		attrs := append(e.set.ToSlice(), attribute.String("error.type", failure))
		return &failureCount{observe: []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}}
	})
}

// observeCalls reports the commands' counts of calls, attempts, failures and unknown
// outcomes, and records their buffered durations: the SDK runs a meter's callbacks before
// it reads the aggregations of the collection, so these are in it.
func (o *Observer) observeCalls(_ context.Context, obs metric.Observer) error {
	o.ends.each(func(_ commandKey, e *commandEnd) {
		e.flushDurations(o.duration)
		obs.ObserveInt64(o.calls, e.calls.Load(), e.observe...)
		obs.ObserveInt64(o.attempts, e.attempts.Load(), e.observe...)
		obs.ObserveInt64(o.unknown, e.unknown.Load(), e.observe...)
		e.failures.each(func(_ string, f *failureCount) {
			obs.ObserveInt64(o.errors, f.n.Load(), f.observe...)
		})
	})
	return nil
}

// spanEndKey is what decides a call's span attributes as it ends.
type spanEndKey struct {
	command, method, host       string
	class                       sendloop.RetryClass
	attempts, status, errorCode int
	failure                     string
	unknown                     bool
}

// spanEndAttrs is the span attributes of a call's end, with what decided them.
type spanEndAttrs struct {
	key   spanEndKey
	attrs []attribute.KeyValue
}

// spanEnd returns the span attributes of a call of end's command that ended as k says:
// cached, as most calls end alike (answered at once, 200), so that the span's attributes
// cost one copy, the tracer's.
func (o *Observer) spanEnd(end *commandEnd, k spanEndKey) []attribute.KeyValue {
	if last := end.lastSpanEnd.Load(); last != nil && last.key == k {
		return last.attrs
	}
	a := o.spanEnds.get(k, func() *spanEndAttrs { return &spanEndAttrs{key: k, attrs: spanEndAttributes(k)} })
	end.lastSpanEnd.Store(a)
	return a.attrs
}

// spanEndAttributes makes the span attributes of a call that ended as k says.
func spanEndAttributes(k spanEndKey) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("http.request.method", k.method),
		attribute.String("server.address", k.host), attribute.String("sendloop.command", k.command),
		attribute.String("sendloop.retry_class", k.class.String()),
		attribute.Int("sendloop.attempts", k.attempts),
		attribute.Bool("sendloop.outcome_unknown", k.unknown)}
	if k.status != 0 {
		attrs = append(attrs, attribute.Int("http.response.status_code", k.status))
	}
	if k.errorCode != 0 {
		attrs = append(attrs, attribute.Int("sendloop.error_code", k.errorCode))
	}
	if k.failure != "" {
		attrs = append(attrs, attribute.String("error.type", k.failure))
	}
	return slices.Clip(attrs) // a tracer that appends to it copies
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

var (
	clientKind     = trace.WithSpanKind(trace.SpanKindClient)
	clientKindOpts = []trace.SpanStartOption{clientKind} // a variadic call of its own allocates
)

func newWindow() *atomic.Int64 { return new(atomic.Int64) }

// CallStarted starts the call's span, a child of ctx's, and returns the context holding it:
// the one the call's attempts and its end are told with, as sendloop.Observer requires:
// AttemptEnded and CallEnded find the span there. The span starts and ends on the
// tracer's clock when CallStarted and CallEnded run (sendloop.call.duration is measured
// from CallStart.Start to CallEnd.End).
//
// The span's attributes are all set as the call ends, in one slice (cached, as most calls
// end alike), so that the tracer copies them once: a sampler sees the span's name, which
// holds the command, and its kind. Giving it the method and server.address at the start,
// as OpenTelemetry's HTTP conventions suggest for samplers, made the SDK grow the span's
// attributes twice, an eighth of the observer's time in BenchmarkObserverCall.
func (o *Observer) CallStarted(ctx context.Context, c sendloop.CallStart) context.Context {
	ctx, _ = o.tracer.Start(ctx, o.spanName(c.Command), clientKindOpts...)
	return ctx
}

// AttemptEnded records the window and, for a call of more than one attempt, the attempt's
// child span: an attempt to be retried, or one after the first. So a call answered at once
// keeps no state between its events, and costs one span.
func (o *Observer) AttemptEnded(ctx context.Context, a sendloop.AttemptEnd) {
	if a.Window > 0 {
		// Stored only when it changed, as it seldom does: a write would make the next
		// attempt's read of it miss when that runs on another core.
		if w := o.windows.get(a.Package, newWindow); w.Load() != int64(a.Window) {
			w.Store(int64(a.Window))
		}
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
	end.calls.Add(1)
	end.attempts.Add(int64(e.Attempts))
	if e.OutcomeUnknown {
		end.unknown.Add(1)
	}
	if e.Failure != "" {
		end.failure(e.Failure).n.Add(1)
	}
	end.addDuration(ctx, o.duration, e.End.Sub(e.Start).Seconds())
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if e.Failure != "" {
		span.SetStatus(codes.Error, e.Failure)
	}
	span.SetAttributes(o.spanEnd(end, spanEndKey{command: e.Command, method: e.Method, host: e.Host, class: e.Class, attempts: e.Attempts,
		status: e.StatusCode, errorCode: e.ErrorCode, failure: e.Failure, unknown: e.OutcomeUnknown})...)
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

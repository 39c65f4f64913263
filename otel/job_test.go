package otel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// TestSendPhaseSpanAndRows: a send is one span, "sendloop send", whose rows by fate are
// its attributes and the sendloop.job.rows metric, with the relay's messages as children;
// no address shows anywhere.
func TestSendPhaseSpanAndRows(t *testing.T) {
	t.Parallel()
	rec := newRecorded(t)
	srv := sendlooptest.NewServer(t)
	_, err := srv.Suppress(0, "gone@example.net", "FBL Report")
	require.NoError(t, err)
	fake, err := srv.StartRelay(t)
	require.NoError(t, err)
	user, password := srv.RelayCredentials()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: user, Password: password},
		smtp.WithTLSConfig(fake.ClientTLSConfig()), smtp.WithMessageObserver(rec.obs))
	require.NoError(t, err)
	t.Cleanup(func() { relay.Close() })
	rows := []mailmerge.Row{{Address: "ann@example.net"}, {Address: "bob@example.net"}, {Address: "gone@example.net"}, {Address: "not an address"}}
	mm, err := mailmerge.New(mailmerge.Rows(nil, rows), &smtp.Message{From: "a@example.com", Subject: "s", Text: "t"},
		mailmerge.Options{API: rec.client(t, srv), NoUnsubscribe: true})
	require.NoError(t, err)
	res, err := mm.Send(context.Background(), relay, mailmerge.SendOptions{MaxRejects: job.Unlimited(), Observer: rec.obs})
	require.NoError(t, err)
	defer res.Close()

	var phase sdktrace.ReadOnlySpan
	children := 0
	for _, s := range rec.spans.Ended() {
		if s.Name() == "sendloop send" {
			phase = s
		}
	}
	require.NotNil(t, phase, "the send's span")
	for _, s := range rec.spans.Ended() {
		if s.Name() == "sendloop smtp.send" {
			children++
			assert.Equal(t, phase.SpanContext().SpanID(), s.Parent().SpanID(), "a relay message is the phase's child")
		}
	}
	assert.GreaterOrEqual(t, children, 2, "the messages sent have spans")
	got := attrs(phase)
	assert.Equal(t, "4", got["sendloop.rows"])
	assert.Equal(t, "2", got["sendloop.rows.done"])
	assert.Equal(t, "1", got["sendloop.rows.suppressed"])
	assert.Equal(t, "1", got["sendloop.rows.rejected"])
	assert.Equal(t, "send", got["sendloop.job"])

	rm := rec.metrics(t)
	assert.Equal(t, int64(4), counter(rm, "sendloop.job.rows"))
	byFate := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "sendloop.job.rows" {
				for _, dp := range sum.DataPoints {
					v, _ := dp.Attributes.Value("sendloop.fate")
					byFate[v.AsString()] += dp.Value
				}
			}
		}
	}
	assert.Equal(t, map[string]int64{"done": 2, "suppressed": 1, "rejected": 1}, byFate)
	assert.NotZero(t, gauge(rm, "sendloop.window"), "the suppression list's read reported the window")
	everything := fmt.Sprint(rm)
	for _, s := range rec.spans.Ended() {
		everything += s.Name() + fmt.Sprint(s.Attributes())
	}
	assert.NotContains(t, everything, "@example.net", "no address in a span or a metric")
}

// gauge returns the last value of the Int64 gauge named name for the command API's client
// (sendloop.package=sendloop).
func gauge(rm metricdata.ResourceMetrics, name string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == name {
				for _, dp := range g.DataPoints {
					if pkg, _ := dp.Attributes.Value("sendloop.package"); pkg.AsString() == "sendloop" {
						n = dp.Value
					}
				}
			}
		}
	}
	return n
}

// TestSyncPhaseSpans: a sync's plan and apply are spans of their own, "sendloop sync plan"
// and "sendloop sync apply", with the calls each makes as children and its rows by fate.
func TestSyncPhaseSpans(t *testing.T) {
	t.Parallel()
	rec := newRecorded(t)
	srv := sendlooptest.NewServer(t)
	c := rec.client(t, srv)
	ctx := context.Background()
	listID, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "News", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	rows := []listsync.Row{{Line: 2, Email: "ann@example.net"}, {Line: 3, Email: "not an address"}}
	sj, err := listsync.New(ctx, c, listID, listsync.Rows(rows), listsync.Options{Observer: rec.obs, TempDir: t.TempDir()})
	require.NoError(t, err)
	defer sj.Close()
	pl, err := sj.Plan(ctx)
	require.NoError(t, err)
	_, err = pl.Apply(ctx, listsync.DefaultApplyOptions())
	require.Error(t, err, "the zero reject budget judges the rejected row")

	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.spans.Ended() {
		spans[s.Name()] = s
	}
	plan, apply := spans["sendloop sync plan"], spans["sendloop sync apply"]
	require.NotNil(t, plan)
	require.NotNil(t, apply)
	assert.Equal(t, "2", attrs(plan)["sendloop.rows"])
	assert.Equal(t, "1", attrs(plan)["sendloop.rows.rejected"])
	assert.Equal(t, "*job.BudgetError", attrs(apply)["error.type"], "the verdict's kind, never its text")
	assert.Equal(t, plan.SpanContext().SpanID(), spans["sendloop list.get"].Parent().SpanID(), "list.get runs in the plan")
	assert.Equal(t, apply.SpanContext().SpanID(), spans["sendloop subscriber.import"].Parent().SpanID(), "the import runs in the apply")
}

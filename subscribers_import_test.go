package sendloop_test

import (
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// numbered yields n rows r<i>@example.com, each with custom field 1 set to its number.
func numbered(n int) iter.Seq[sendloop.ImportSubscriber] {
	return func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("r%d@example.com", i),
				Fields: sendloop.CustomFields{1: fmt.Sprint(i)}}) {
				return
			}
		}
	}
}

func TestImportAllCountsRowsALostAttemptImportedAsConfirmedOnRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault sendlooptest.Fault
		// confirmed is how many rows come back as duplicates of the lost attempt.
		confirmed int
	}{
		{"reset after execution", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution}, 10},
		{"reset before execution", sendlooptest.Fault{Reset: sendlooptest.ResetBeforeExecution}, 0},
		{"503, not executed", sendlooptest.Fault{Status: 503}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			id := newList(t, c, sendloop.OptInSingle)
			_, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "N"})
			require.NoError(t, err)
			subscribe(t, c, id, "r25@example.com") // on the list before: a real duplicate
			srv.InjectFault("subscriber.import", tt.fault)

			report, err := c.Subscribers.ImportAll(context.Background(), id, numbered(30), sendloop.ImportOptions{BatchSize: 10, Concurrency: 1})
			require.NoError(t, err)
			assert.Equal(t, sendloop.ImportReport{Rows: 30, Imported: 29, Duplicate: 1, ConfirmedOnRetry: tt.confirmed}, *report)
			assert.Equal(t, 30, srv.SubscriberCount(id))
		})
	}
}

// TestImportAllBodies checks the bodies ImportAll writes, batch by batch: rows numbered
// from 0 in each, fields by ascending ID, values escaped as url.QueryEscape does, rows
// refused or repeated left out.
func TestImportAllBodies(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	var fields []int
	for _, name := range []string{"A", "B", "C"} {
		f, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: name})
		require.NoError(t, err)
		fields = append(fields, f)
	}
	rows := []sendloop.ImportSubscriber{
		{EmailAddress: "a@example.com", Fields: sendloop.CustomFields{fields[2]: "z z", fields[0]: "x&y=1", fields[1]: "ü%+"}},
		{EmailAddress: "not an address"},
		{EmailAddress: "A@example.com"},
		{EmailAddress: "b+tag@example.com"},
		{EmailAddress: "c@example.com", Fields: sendloop.CustomFields{fields[1]: ""}},
	}
	report, err := c.Subscribers.ImportAll(context.Background(), id, func(yield func(sendloop.ImportSubscriber) bool) {
		for _, r := range rows {
			if !yield(r) {
				return
			}
		}
	}, sendloop.ImportOptions{BatchSize: 2, Concurrency: 1})
	require.NoError(t, err)
	assert.Equal(t, 5, report.Rows)
	assert.Equal(t, 3, report.Imported)
	assert.Equal(t, 1, report.Duplicate)
	require.Len(t, report.Failed, 1)
	assert.Equal(t, 1, report.Failed[0].Index)

	key := "APIKey=" + url.QueryEscape(srv.APIKey) + "&ListID=" + fmt.Sprint(id)
	row := func(n int, email string, kv ...string) string {
		s := fmt.Sprintf("&%s=%s", url.QueryEscape(fmt.Sprintf("Subscribers[%d][EmailAddress]", n)), url.QueryEscape(email))
		for i := 0; i < len(kv); i += 2 {
			s += fmt.Sprintf("&%s=%s", url.QueryEscape(fmt.Sprintf("Subscribers[%d][%s]", n, kv[i])), url.QueryEscape(kv[i+1]))
		}
		return s
	}
	cf := func(i int) string { return fmt.Sprintf("CustomField%d", fields[i]) }
	var bodies []string
	for _, r := range requestsFor(srv, "subscriber.import") {
		bodies = append(bodies, string(r.Body))
	}
	assert.Equal(t, []string{
		key + row(0, "a@example.com", cf(0), "x&y=1", cf(1), "ü%+", cf(2), "z z") + row(1, "b+tag@example.com"),
		key + row(0, "c@example.com", cf(1), ""),
	}, bodies)
}

// TestImportAllReportsFailedRowsAsTheyCame checks that the rows of a failed call, and the
// rows the service refused, are reported exactly as the sequence gave them, nil and empty
// field maps included (a batch keeps its body, not the rows, and reads them back).
func TestImportAllReportsFailedRowsAsTheyCame(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	f1, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "A"})
	require.NoError(t, err)
	f2, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "B"})
	require.NoError(t, err)
	rows := []sendloop.ImportSubscriber{
		{EmailAddress: "a@example.com"},
		{EmailAddress: "b@example.com", Fields: sendloop.CustomFields{}},
		{EmailAddress: "c+x@example.com", Fields: sendloop.CustomFields{f1: "z z&=%+ü", f2: ""}},
		{EmailAddress: "d@example.com", Fields: sendloop.CustomFields{f2: "\xff"}},
	}
	seq := func(yield func(sendloop.ImportSubscriber) bool) {
		for _, r := range rows {
			if !yield(r) {
				return
			}
		}
	}
	srv.InjectFault("subscriber.import", sendlooptest.Fault{Status: 500})
	report, err := c.Subscribers.ImportAll(context.Background(), id, seq, sendloop.ImportOptions{BatchSize: 10})
	require.NoError(t, err)
	require.Len(t, report.Failed, len(rows))
	for i, f := range report.Failed {
		assert.Equal(t, i, f.Index)
		assert.Equal(t, rows[i], f.Subscriber)
		var httpErr *sendloop.HTTPError
		assert.ErrorAs(t, f.Err, &httpErr)
	}

	for _, r := range rows {
		_, err := srv.Suppress(0, r.EmailAddress, "Manual")
		require.NoError(t, err)
	}
	report, err = c.Subscribers.ImportAll(context.Background(), id, seq, sendloop.ImportOptions{BatchSize: 10})
	require.NoError(t, err)
	require.Len(t, report.Failed, len(rows))
	slices.SortFunc(report.Failed, func(a, b sendloop.FailedRow) int { return a.Index - b.Index })
	for i, f := range report.Failed {
		assert.Equal(t, rows[i], f.Subscriber)
		assert.ErrorIs(t, f.Err, sendloop.ErrRowRefused)
	}
}

// TestImportAllStopStartsNoNewCall ends ImportAll's ctx while two calls are in flight: no
// call starts after it; the calls in flight finish within Stop.Grace, or are cut short when
// Stop.Work ends (their rows then NotAttempted); every row read but not imported is
// NotAttempted, and the error is ctx's.
func TestImportAllStopStartsNoNewCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cutWork bool
	}{
		{"the grace lets the calls in flight finish", false},
		{"the end of Work cuts them short", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, stop := context.WithCancel(context.Background())
			work, endWork := context.WithCancel(context.Background())
			t.Cleanup(endWork)
			bothInFlight := make(chan struct{})
			var calls, afterStop atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if ctx.Err() != nil {
					afterStop.Add(1)
				}
				switch calls.Add(1) {
				case 1:
					<-bothInFlight
					stop() // the first Ctrl-C, while both calls are in flight
					if tt.cutWork {
						endWork() // the second
					}
				case 2:
					close(bothInFlight)
					// Answer only once ctx has ended: an answer before it would free a worker
					// to start a third call, legitimately, before the Ctrl-C.
					<-ctx.Done()
				}
				_, _ = io.Copy(io.Discard, r.Body) // read first: the server then notices a client that gives up
				if tt.cutWork {
					<-r.Context().Done() // the client gave up the call
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"Success":true,"TotalImported":10,"TotalDuplicate":0,"TotalFailed":0}`)
			}))
			t.Cleanup(srv.Close)
			c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(srv.Client()),
				sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}))
			require.NoError(t, err)
			rows := func(yield func(sendloop.ImportSubscriber) bool) {
				for i := range 1000 {
					if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("s%d@example.com", i)}) {
						return
					}
				}
			}
			report, err := c.Subscribers.ImportAll(ctx, 1, rows,
				sendloop.ImportOptions{BatchSize: 10, Concurrency: 2, Stop: job.Stop{Grace: time.Hour, Work: work}})
			require.ErrorIs(t, err, context.Canceled)
			assert.Zero(t, afterStop.Load(), "calls started after ctx ended")
			assert.Equal(t, int32(2), calls.Load())
			want := 20
			if tt.cutWork {
				want = 0
			}
			assert.Equal(t, want, report.Imported, "the calls in flight")
			assert.Less(t, report.Rows, 1000, "rows are left unread")
			assert.NotZero(t, report.NotAttempted)
			assert.Empty(t, report.Failed)
			assert.Equal(t, report.Rows, report.Imported+report.Duplicate+len(report.Failed)+report.Unattributed+report.NotAttempted+len(report.Unknown))
		})
	}
}

// TestImportAllRowsMayShareAMap hands every row in the same Fields map, refilled, as a
// caller that makes rows on the fly may: each member gets its own values, and a row refused
// before sending is reported as it was, not as the map was refilled after it.
func TestImportAllRowsMayShareAMap(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	id := newList(t, c, sendloop.OptInSingle)
	f1, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "A"})
	require.NoError(t, err)
	f2, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: "B"})
	require.NoError(t, err)
	rows := []sendloop.ImportSubscriber{
		{EmailAddress: "a@example.com", Fields: sendloop.CustomFields{f1: "a1", f2: "a2"}},
		{EmailAddress: "not an address", Fields: sendloop.CustomFields{f1: "refused"}},
		{EmailAddress: "b@example.com", Fields: sendloop.CustomFields{f2: "b2"}},
		{EmailAddress: "c@example.com"},
	}
	shared := sendloop.CustomFields{}
	seq := func(yield func(sendloop.ImportSubscriber) bool) {
		for _, r := range rows {
			clear(shared)
			row := sendloop.ImportSubscriber{EmailAddress: r.EmailAddress}
			if r.Fields != nil {
				maps.Copy(shared, r.Fields)
				row.Fields = shared
			}
			if !yield(row) {
				return
			}
		}
	}
	report, err := c.Subscribers.ImportAll(context.Background(), id, seq, sendloop.ImportOptions{BatchSize: 2, Concurrency: 2})
	require.NoError(t, err)
	assert.Equal(t, 3, report.Imported)
	require.Len(t, report.Failed, 1)
	assert.Equal(t, rows[1], report.Failed[0].Subscriber)
	got := map[string]sendloop.CustomFields{}
	for sub, err := range c.Subscribers.BrowseIter(context.Background(), id, sendloop.SubscriberBrowseParams{}) {
		require.NoError(t, err)
		got[sub.EmailAddress] = sub.CustomFields
	}
	assert.Equal(t, map[string]sendloop.CustomFields{
		"a@example.com": {f1: "a1", f2: "a2"},
		"b@example.com": {f1: "", f2: "b2"},
		"c@example.com": {f1: "", f2: ""},
	}, got)
}

// TestImportAllStopLocatesNoMore: a batch answered with a refused row after ctx ended is not
// resent in halves to find the row, which would start calls after the stop: the failure
// is counted in Unattributed.
func TestImportAllStopLocatesNoMore(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	srv := sendlooptest.NewServer(t, sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
		if r.Command == "subscriber.import" {
			stop()
		}
	}))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	id := newList(t, c, sendloop.OptInSingle)
	_, err = srv.Suppress(0, "c@example.com", "Manual")
	require.NoError(t, err)
	var rows []sendloop.ImportSubscriber
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		rows = append(rows, sendloop.ImportSubscriber{EmailAddress: name + "@example.com"})
	}
	report, err := c.Subscribers.ImportAll(ctx, id, slices.Values(rows),
		sendloop.ImportOptions{BatchSize: 8, Concurrency: 1, Stop: job.Stop{Grace: time.Hour}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, len(requestsFor(srv, "subscriber.import")), "the batch's call and none after Stop")
	assert.Equal(t, 7, report.Imported)
	assert.Empty(t, report.Failed)
	assert.Equal(t, 1, report.Unattributed)
}

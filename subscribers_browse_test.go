package sendloop_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// pageTransport sits under a client: it counts the calls in flight and can answer a
// subscriber.browse page itself, by its StartIndex, instead of the fake.
type pageTransport struct {
	base     http.RoundTripper
	answer   func(startIndex int) *http.Response // nil, or nil returned: the fake answers
	rewrite  func(form url.Values)               // changes the request's form before it is sent
	inFlight atomic.Int64
	browses  atomic.Int64 // the subscriber.browse calls sent (the fake may log a cancelled one late)
	mu       sync.Mutex
	peak     int64   // the most calls in flight at once
	starts   []int64 // the calls in flight as each call started, in order
}

func (p *pageTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	p.mu.Lock()
	p.peak = max(p.peak, n)
	p.starts = append(p.starts, n)
	p.mu.Unlock()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	form, _ := url.ParseQuery(string(body))
	if strings.Contains(req.URL.Path, "subscriber.browse") {
		p.browses.Add(1)
		if p.answer != nil {
			index, _ := strconv.Atoi(form.Get("StartIndex"))
			if resp := p.answer(index); resp != nil {
				resp.Request = req
				return resp, nil
			}
		}
		if p.rewrite != nil {
			p.rewrite(form)
			body = []byte(form.Encode())
		}
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return p.base.RoundTrip(out)
}

// startsAndPeak returns what the transport saw.
func (p *pageTransport) startsAndPeak() ([]int64, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.starts...), p.peak
}

// failPage answers 500, which is final (never retried).
func failPage() *http.Response {
	return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"text/plain"}},
		Body: io.NopCloser(strings.NewReader("boom")), ContentLength: 4}
}

// browseFixture is a fake holding one list of n members, and a client that reaches it
// through a pageTransport.
func browseFixture(t *testing.T, n int, opts ...sendlooptest.Option) (*sendloop.Client, *sendlooptest.Server, *pageTransport, int) {
	t.Helper()
	srv := sendlooptest.NewServer(t, opts...)
	pt := &pageTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry),
		sendloop.WithHTTPClient(&http.Client{Transport: pt}))
	require.NoError(t, err)
	ctx := context.Background()
	id, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Big", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			if !yield(sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("m%05d@example.com", i)}) {
				return
			}
		}
	}
	// One batch at a time: the fake numbers the members in the order of the rows.
	report, err := c.Subscribers.ImportAll(ctx, id, rows, sendloop.ImportOptions{Concurrency: 1})
	require.NoError(t, err)
	require.Equal(t, n, report.Imported)
	return c, srv, pt, id
}

// browseAll walks the list and returns the addresses and the errors it yielded.
func browseAll(c *sendloop.Client, id int, p sendloop.SubscriberBrowseParams) ([]string, []error) {
	var addrs []string
	var errs []error
	for sub, err := range c.Subscribers.BrowseIter(context.Background(), id, p) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		addrs = append(addrs, sub.EmailAddress)
	}
	return addrs, errs
}

func TestBrowseIterReadAheadKeepsOrderAndStopsAtTheEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		members int
		needed  int // pages one at a time: up to the short or empty one
	}{
		{550, 6}, // five full pages and a short one
		{500, 6}, // five full pages and an empty one
		{40, 1},
		{0, 1},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.members), func(t *testing.T) {
			t.Parallel()
			c, srv, pt, id := browseFixture(t, tt.members)
			var want []string
			for i := range tt.members {
				want = append(want, fmt.Sprintf("m%05d@example.com", i))
			}
			for _, n := range []int{0, 1, 2, 3, 8, 16} {
				before := pt.browses.Load()
				got, errs := browseAll(c, id, sendloop.SubscriberBrowseParams{Concurrency: n})
				require.Empty(t, errs)
				require.Equal(t, want, got, "concurrency %d", n)
				asked := int(pt.browses.Load() - before)
				assert.GreaterOrEqual(t, asked, tt.needed, "concurrency %d", n)
				assert.LessOrEqual(t, asked, tt.needed+max(n, 1)-1, "concurrency %d: at most N-1 pages past the end", n)
				if tt.needed == 1 {
					assert.Equal(t, 1, asked, "concurrency %d: the first page is asked for alone: a small list costs one call", n)
				}
			}
			for _, r := range requestsFor(srv, "subscriber.browse") {
				assert.NotContains(t, r.Form, "Concurrency", "Concurrency is not sent")
			}
			_, peak := pt.startsAndPeak()
			assert.LessOrEqual(t, peak, int64(16))
		})
	}
}

func TestBrowseIterReadAheadOverlapsPages(t *testing.T) {
	t.Parallel()
	const latency = 100 * time.Millisecond
	c, srv, pt, id := browseFixture(t, 1600)
	srv.SetLatency(latency, 0)
	got, errs := browseAll(c, id, sendloop.SubscriberBrowseParams{Concurrency: 8})
	require.Empty(t, errs)
	require.Len(t, got, 1600)
	// 17 pages (16 full, one empty), 8 at a time. The overlap is proved by the pages in
	// flight together, not by the wall time, which a busy machine stretches.
	_, peak := pt.startsAndPeak()
	assert.Equal(t, int64(8), peak, "up to 8 pages in flight, never more")
}

func TestBrowseIterReadAheadStopsEarly(t *testing.T) {
	t.Parallel()
	c, srv, pt, id := browseFixture(t, 2000)
	srv.SetLatency(5*time.Millisecond, 0)
	n := 0
	for sub, err := range c.Subscribers.BrowseIter(context.Background(), id, sendloop.SubscriberBrowseParams{Concurrency: 4}) {
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("m%05d@example.com", n), sub.EmailAddress)
		n++
		if n == 150 {
			break
		}
	}
	assert.Equal(t, 150, n)
	// Two pages read, and at most four more asked for ahead of them.
	assert.LessOrEqual(t, pt.browses.Load(), int64(2+4))
}

func TestBrowseIterReadAheadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		members   int
		answer    func(index int) *http.Response
		rewrite   func(form url.Values)
		wantRows  int
		wantError string // "" for none
	}{
		{"a page fails mid-way", 1000, func(i int) *http.Response {
			if i == 3 {
				return failPage()
			}
			return nil
		}, nil, 300, "HTTP 500"},
		{"pages past the end fail unseen", 250, func(i int) *http.Response {
			if i > 2 {
				return failPage()
			}
			return nil
		}, nil, 250, ""},
		{"a page after a failed one fails unseen", 1000, func(i int) *http.Response {
			if i >= 2 {
				return failPage()
			}
			return nil
		}, nil, 200, "HTTP 500"},
		{"a service that ignores StartIndex", 1000, nil, func(form url.Values) { form.Del("StartIndex") }, 100, "repeats the previous one"},
	}
	for _, tt := range tests {
		for _, n := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/concurrency=%d", tt.name, n), func(t *testing.T) {
				t.Parallel()
				c, _, pt, id := browseFixture(t, tt.members)
				pt.answer, pt.rewrite = tt.answer, tt.rewrite
				got, errs := browseAll(c, id, sendloop.SubscriberBrowseParams{Concurrency: n})
				require.Len(t, got, tt.wantRows)
				for i, addr := range got {
					require.Equal(t, fmt.Sprintf("m%05d@example.com", i), addr)
				}
				if tt.wantError == "" {
					assert.Empty(t, errs)
					return
				}
				require.Len(t, errs, 1, "one error, then the walk stops")
				assert.ErrorContains(t, errs[0], tt.wantError)
			})
		}
	}
}

func TestBrowseIterRefusesBadInputBeforeSending(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	for _, tt := range []struct {
		listID int
		p      sendloop.SubscriberBrowseParams
	}{
		{0, sendloop.SubscriberBrowseParams{Concurrency: 4}},
		{1, sendloop.SubscriberBrowseParams{StartIndex: -1, Concurrency: 4}},
	} {
		_, errs := browseAll(c, tt.listID, tt.p)
		require.Len(t, errs, 1)
		var verr *sendloop.ValidationError
		assert.ErrorAs(t, errs[0], &verr)
	}
	assert.Empty(t, srv.Requests())
}

func TestBrowseIterCapsItsConcurrency(t *testing.T) {
	t.Parallel()
	c, _, pt, id := browseFixture(t, 150)
	// Without the cap this would start a goroutine for each of MaxInt32 pages.
	got, errs := browseAll(c, id, sendloop.SubscriberBrowseParams{Concurrency: math.MaxInt32})
	require.Empty(t, errs)
	assert.Len(t, got, 150)
	// Two pages needed, and at most MaxBrowseConcurrency-1 past the end.
	assert.LessOrEqual(t, pt.browses.Load(), int64(2+sendloop.MaxBrowseConcurrency-1))
	_, peak := pt.startsAndPeak()
	assert.LessOrEqual(t, peak, int64(sendloop.MaxBrowseConcurrency))
}

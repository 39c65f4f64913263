package sendloop_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

var benchRows = flag.Int("bench-rows", 100_000, "subscribers per import benchmark")

// generated yields n subscribers with two custom fields, made on the fly.
func generated(n int) iter.Seq[sendloop.ImportSubscriber] {
	return func(yield func(sendloop.ImportSubscriber) bool) {
		for i := 0; i < n; i++ {
			row := sendloop.ImportSubscriber{EmailAddress: "user" + strconv.Itoa(i) + "@example.com",
				Fields: sendloop.CustomFields{1: "First" + strconv.Itoa(i), 2: "gold"}}
			if !yield(row) {
				return
			}
		}
	}
}

func benchList(b *testing.B) (*sendloop.Client, *sendlooptest.Server, int) {
	b.Helper()
	srv := sendlooptest.NewServer(b)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	id, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "bench", OptInMode: sendloop.OptInSingle})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"First", "Tier"} {
		if _, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: name}); err != nil {
			b.Fatal(err)
		}
	}
	return c, srv, id
}

var subscribeRows = flag.Int("bench-subscribe-rows", 2_000, "subscribers per Subscribe-loop baseline")

// perRow reports the time per row of b's loop, and returns it.
func perRow(b *testing.B, rows int) float64 {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(rows)
	b.ReportMetric(ns, "ns/row")
	return ns
}

// subscribeLoop subscribes rows one call at a time, as the wrappers without a bulk call
// do, and returns how long it took.
func subscribeLoop(b *testing.B, c *sendloop.Client, listID int, rows []sendloop.ImportSubscriber) time.Duration {
	start := time.Now()
	for _, row := range rows {
		_, err := c.Subscribers.Subscribe(context.Background(), listID, sendloop.SubscriberSubscribeParams{EmailAddress: row.EmailAddress, SubscriptionIP: "192.0.2.1", Fields: row.Fields})
		if err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// speedup measures, per iteration and with the timer stopped, the Subscribe loop on
// loopRows next to each timed ImportAll of rows, so that both see the same load of the
// machine, and reports how many times faster ImportAll is per row (x-subscribe-loop).
type speedup struct {
	loop, all time.Duration
}

func (s *speedup) report(b *testing.B, loopRows, rows int) {
	if s.all > 0 && s.loop > 0 {
		b.ReportMetric((float64(s.loop)/float64(loopRows))/(float64(s.all)/float64(rows)), "x-subscribe-loop")
	}
}

// BenchmarkImport compares ImportAll with the loop of one Subscribe per address that
// existing wrappers offer, both into the fake (a single-opt-in list, no webhook). The
// loop runs on fewer rows (-bench-subscribe-rows): alone, for its own figures, and beside
// every ImportAll (timer stopped) for the ratio per row, x-subscribe-loop. The rows are
// made before the timer starts, so that both measure the import alone.
func BenchmarkImport(b *testing.B) {
	n := *benchRows
	ctx := context.Background()
	rows := slices.Collect(generated(n))
	loopRows := rows[:min(*subscribeRows, n)]
	b.Run(fmt.Sprintf("SubscribeLoop/rows=%d", len(loopRows)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c, srv, id := benchList(b)
			b.StartTimer()
			subscribeLoop(b, c, id, loopRows)
			b.StopTimer()
			srv.Close()
			b.StartTimer()
		}
		perRow(b, len(loopRows))
	})
	b.Run(fmt.Sprintf("ImportAll/rows=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		var sp speedup
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c, srv, id := benchList(b)
			sp.loop += subscribeLoop(b, c, id, loopRows)
			srv.Close()
			c, srv, id = benchList(b)
			runtime.GC()
			b.StartTimer()
			start := time.Now()
			report, err := c.Subscribers.ImportAll(ctx, id, slices.Values(rows), sendloop.ImportOptions{})
			sp.all += time.Since(start)
			if err != nil || report.Imported != n {
				b.Fatalf("%v: %+v", err, report)
			}
			b.StopTimer()
			srv.Close()
			b.StartTimer()
		}
		perRow(b, n)
		sp.report(b, len(loopRows), n)
	})
}

// bareServer answers subscriber.import with its row count (the EmailAddress keys of the
// body) and subscriber.subscribe with a new ID, doing nothing else: what remains is the
// client's cost and HTTP's.
func bareServer(b *testing.B) *httptest.Server {
	var next atomic.Int64
	var buffers sync.Pool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf, _ := buffers.Get().(*bytes.Buffer)
		if buf == nil {
			buf = new(bytes.Buffer)
		}
		defer buffers.Put(buf)
		buf.Reset()
		if _, err := buf.ReadFrom(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body := buf.Bytes()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/v3/subscriber.subscribe/") {
			fmt.Fprintf(w, `{"Success":true,"SubscriberID":"%d","SubscriptionStatus":"Subscribed","RedirectURL":""}`, next.Add(1))
			return
		}
		fmt.Fprintf(w, `{"Success":true,"TotalImported":%d,"TotalDuplicate":0,"TotalFailed":0}`, bytes.Count(body, rowKey))
	}))
	b.Cleanup(hs.Close)
	return hs
}

// BenchmarkImportBare is BenchmarkImport against bareServer: ImportAll reports how many
// times faster per row it is than the Subscribe loop (x-subscribe-loop), and how much
// faster the default concurrency is than one call at a time (here client and server share
// the machine's cores; scripts/bench-import measures it with the server in another
// process).
func BenchmarkImportBare(b *testing.B) {
	n := *benchRows
	ctx := context.Background()
	rows := slices.Collect(generated(n))
	loopRows := rows[:min(*subscribeRows, n)]
	hs := bareServer(b)
	c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(hs.URL))
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("SubscribeLoop/rows=%d", len(loopRows)), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			subscribeLoop(b, c, 1, loopRows)
		}
		perRow(b, len(loopRows))
	})
	for _, concurrency := range []int{1, 0} {
		b.Run(fmt.Sprintf("ImportAll/concurrency=%d/rows=%d", concurrency, n), func(b *testing.B) {
			b.ReportAllocs()
			var sp speedup
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sp.loop += subscribeLoop(b, c, 1, loopRows)
				b.StartTimer()
				start := time.Now()
				report, err := c.Subscribers.ImportAll(ctx, 1, slices.Values(rows), sendloop.ImportOptions{Concurrency: concurrency})
				sp.all += time.Since(start)
				if err != nil || report.Imported != n {
					b.Fatalf("%v: %+v", err, report)
				}
			}
			perRow(b, n)
			sp.report(b, len(loopRows), n)
		})
	}
}

// discardTransport answers every subscriber.import with its row count without sending
// anything, reading the body into a buffer of its own that it reuses, so that what a
// benchmark measures is the client's work alone.
type discardTransport struct {
	mu  sync.Mutex
	buf []byte
}

var rowKey = []byte("%5D%5BEmailAddress%5D=")

func (t *discardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	buf := bytes.NewBuffer(t.buf[:0])
	_, err := buf.ReadFrom(r.Body)
	r.Body.Close()
	t.buf = buf.Bytes()
	rows := bytes.Count(t.buf, rowKey)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	answer := `{"Success":true,"TotalImported":` + strconv.Itoa(rows) + `,"TotalDuplicate":0,"TotalFailed":0}`
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(answer)),
		Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
}

// BenchmarkImportClient measures ImportAll's own cost per row (time, CPU of every
// goroutine, allocation) against a transport that discards the body and answers the
// totals. The baseline is a loop that only reads the same rows from the sequence.
func BenchmarkImportClient(b *testing.B) {
	n := *benchRows
	ctx := context.Background()
	rows := slices.Collect(generated(n))
	b.Run(fmt.Sprintf("ReadRows/rows=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		sum := 0
		allocs := startAllocs()
		for i := 0; i < b.N; i++ {
			for row := range slices.Values(rows) {
				sum += len(row.EmailAddress) + len(row.Fields)
			}
		}
		perRow(b, n)
		allocs.report(b, n)
		if sum == 0 {
			b.Fatal("no rows")
		}
	})
	for _, concurrency := range []int{1, 0} {
		b.Run(fmt.Sprintf("ImportAll/concurrency=%d/rows=%d", concurrency, n), func(b *testing.B) {
			c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL("http://127.0.0.1:1"),
				sendloop.WithHTTPClient(&http.Client{Transport: &discardTransport{}}))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu, allocs := cpuTime(), startAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				report, err := c.Subscribers.ImportAll(ctx, 1, slices.Values(rows), sendloop.ImportOptions{Concurrency: concurrency})
				if err != nil || report.Imported != n {
					b.Fatalf("%v: %+v", err, report)
				}
			}
			b.StopTimer()
			perRow(b, n)
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(n), "cpu-ns/row")
			allocs.report(b, n)
		})
	}
}

// allocMeter is the allocation counters at the start of a benchmark's loop.
type allocMeter struct{ bytes, mallocs uint64 }

func startAllocs() allocMeter {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return allocMeter{ms.TotalAlloc, ms.Mallocs}
}

// report adds B/row and allocs/row since m to b's metrics.
func (m allocMeter) report(b *testing.B, rows int) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	per := float64(b.N) * float64(rows)
	b.ReportMetric(float64(ms.TotalAlloc-m.bytes)/per, "B/row")
	b.ReportMetric(float64(ms.Mallocs-m.mallocs)/per, "allocs/row")
}

// peakHeap returns the most heap that run held live above what was live before it, as
// measured at the checkpoints run calls: each collects garbage first, so the figure is
// what the code retains, not what the collector has not yet reclaimed.
func peakHeap(run func(checkpoint func())) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, ms.HeapAlloc
	run(func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	})
	return peak - base
}

// checkpoints is how many heap measurements a run makes, evenly spaced: the same number
// for every size, so that sizes compare on equal terms.
const checkpoints = 10

// countingServer answers subscriber.import with the row count and keeps nothing, so that
// the heap measured is the client's.
func countingServer(b *testing.B) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rows := 0
		for k := range r.PostForm {
			if strings.HasSuffix(k, "[EmailAddress]") {
				rows++
			}
		}
		fmt.Fprintf(w, `{"Success":true,"TotalImported":%d,"TotalDuplicate":0,"TotalFailed":0}`, rows)
	}))
	b.Cleanup(hs.Close)
	return hs
}

// pagingServer answers subscriber.browse with pages of a list of total subscribers, made
// on the fly.
func pagingServer(b *testing.B, total int) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		page, _ := strconv.Atoi(r.PostForm.Get("StartIndex"))
		var sb strings.Builder
		sb.WriteString(`{"Success":true,"Subscribers":[`)
		for i := page * 100; i < min(total, page*100+100); i++ {
			if i > page*100 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"SubscriberID":"%d","EmailAddress":"user%d@example.com","SubscriptionStatus":"Subscribed",`+
				`"BounceType":"Not Bounced","SubscriptionDate":"2026-11-01","UnsubscriptionDate":"0000-00-00","CustomField1":"First%d"}`, i+1, i, i)
		}
		sb.WriteString(`]}`)
		_, _ = w.Write([]byte(sb.String()))
	}))
	b.Cleanup(hs.Close)
	return hs
}

// BenchmarkPeakHeap reports the peak heap retained by ImportAll and BrowseIter at 10,000
// and 100,000 subscribers: streaming keeps it flat.
func BenchmarkPeakHeap(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("ImportAll/rows=%d", n), func(b *testing.B) {
			hs := countingServer(b)
			c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(hs.URL))
			if err != nil {
				b.Fatal(err)
			}
			var peak uint64
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakHeap(func(checkpoint func()) {
					every := n / checkpoints
					next := every
					report, err := c.Subscribers.ImportAll(ctx, 1, generated(n), sendloop.ImportOptions{
						OnProgress: func(p sendloop.ImportProgress) {
							if p.Rows >= next {
								next += every
								checkpoint()
							}
						},
					})
					if err != nil || report.Imported != n {
						b.Fatalf("%v %+v", err, report)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
		b.Run(fmt.Sprintf("BrowseIter/rows=%d", n), func(b *testing.B) {
			hs := pagingServer(b, n)
			c, err := sendloop.NewClient("test-key", sendloop.WithBaseURL(hs.URL))
			if err != nil {
				b.Fatal(err)
			}
			var peak uint64
			for i := 0; i < b.N; i++ {
				peak = max(peak, peakHeap(func(checkpoint func()) {
					seen := 0
					for _, err := range c.Subscribers.BrowseIter(ctx, 1, sendloop.SubscriberBrowseParams{}) {
						if err != nil {
							b.Fatal(err)
						}
						if seen++; seen%(n/checkpoints) == 0 {
							checkpoint()
						}
					}
					if seen != n {
						b.Fatalf("saw %d of %d", seen, n)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

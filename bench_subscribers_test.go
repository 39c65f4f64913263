package sendloop_test

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

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

// BenchmarkImport compares ImportAll with the loop of one Subscribe per address that
// existing wrappers offer, both into the fake. The rows are made before the timer starts,
// so that both measure the import alone.
func BenchmarkImport(b *testing.B) {
	n := *benchRows
	ctx := context.Background()
	rows := slices.Collect(generated(n))
	b.Run(fmt.Sprintf("ImportAll/rows=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c, srv, id := benchList(b)
			b.StartTimer()
			report, err := c.Subscribers.ImportAll(ctx, id, slices.Values(rows), sendloop.ImportOptions{})
			if err != nil || report.Imported != n {
				b.Fatalf("%v: %+v", err, report)
			}
			b.StopTimer()
			srv.Close()
			b.StartTimer()
		}
	})
	b.Run(fmt.Sprintf("SubscribeLoop/rows=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c, srv, id := benchList(b)
			b.StartTimer()
			for _, row := range rows {
				_, err := c.Subscribers.Subscribe(ctx, id, sendloop.SubscriberSubscribeParams{EmailAddress: row.EmailAddress, SubscriptionIP: "192.0.2.1", Fields: row.Fields})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			srv.Close()
			b.StartTimer()
		}
	})
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
			c, err := sendloop.NewClient("k", sendloop.WithBaseURL(hs.URL))
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
			c, err := sendloop.NewClient("k", sendloop.WithBaseURL(hs.URL))
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

package listsync

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
)

// firstSyncTransport answers subscriber.import as importAnswerer does and the other
// commands from answers replayed from a fake.
type firstSyncTransport struct{ replay *replayTransport }

func (t firstSyncTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(strings.ToLower(req.URL.Path), "/subscriber.import/json") {
		return importAnswerer{}.RoundTrip(req)
	}
	return t.replay.RoundTrip(req)
}

// firstSyncClient records a fake's answers for an empty list with the fields First name and
// Plan, and writes a CSV of n new subscribers: a client of the replayed list, whose imports
// are answered without a server, and the CSV.
func firstSyncClient(b *testing.B, n int) (*sendloop.Client, string) {
	b.Helper()
	srv, _, list := benchList(b)
	path := filepath.Join(b.TempDir(), "rows.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("EmailAddress,First name,Plan\n")
	for i := range n {
		fmt.Fprintf(w, "%s,User %d,%s\n", emailN(i), i, []string{"free", "pro", "team"}[i%3])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	rt, _, pl := recordPlan(b, srv, list, path)
	if pl.Adds != n {
		b.Fatalf("the fixture's first sync: %d additions of %d", pl.Adds, n)
	}
	c, err := sendloop.NewClient(replayKey, sendloop.WithBaseURL("https://replay.invalid"),
		sendloop.WithHTTPClient(&http.Client{Transport: firstSyncTransport{rt}}))
	if err != nil {
		b.Fatal(err)
	}
	return c, path
}

// BenchmarkFirstSync plans and applies the first sync of 100,000 new rows into an empty
// list at 16 calls in flight, the service's answers replayed from memory and its imports
// answered without a server: the client's own work, which over a real link competes with
// the service's for the machine. It reports the CPU per row of the plan and of the apply,
// and the wall time of each.
func BenchmarkFirstSync(b *testing.B) {
	const n = 100_000
	c, path := firstSyncClient(b, n)
	dir := b.TempDir()
	ctx := context.Background()
	var planCPU, applyCPU, planWall, applyWall time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		src, err := OpenCSV(path, CSVOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cpu0, t0 := cpuTime(b), time.Now()
		job, err := New(ctx, c, 1, src, Options{TempDir: dir, Concurrency: 16})
		if err != nil {
			b.Fatal(err)
		}
		pl, err := job.Plan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cpu1, t1 := cpuTime(b), time.Now()
		res, err := pl.Apply(ctx, ApplyOptions{})
		if err != nil || res.Adds.Done != n {
			b.Fatal(err, res)
		}
		cpu2, t2 := cpuTime(b), time.Now()
		pl.Close()
		planCPU, applyCPU = planCPU+cpu1-cpu0, applyCPU+cpu2-cpu1
		planWall, applyWall = planWall+t1.Sub(t0), applyWall+t2.Sub(t1)
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / n }
	b.ReportMetric(per(planCPU), "plan-cpu-ns/row")
	b.ReportMetric(per(applyCPU), "apply-cpu-ns/row")
	b.ReportMetric(per(planWall), "plan-ns/row")
	b.ReportMetric(per(applyWall), "apply-ns/row")
}

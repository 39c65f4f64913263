package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// writeBenchCSV writes a CSV of n new subscribers with two custom fields.
func writeBenchCSV(b *testing.B, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("EmailAddress,First name,Plan\n")
	plans := []string{"free", "pro", "team"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "%s,User %d,%s\n", emailN(i), i, plans[i%len(plans)])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSync syncs a generated CSV of 10,000 and of 100,000 rows into an empty list of a
// fake running in the test process, and reports the time and the peak resident memory of
// the sendloop process (ru_maxrss, KiB on Linux), so that the ratio between the two sizes
// can be read: memory must not grow with the file beyond what the plan needs.
//
// The binary runs under a launcher (see launch): started from the test process itself, it
// would be charged the test process's peak RSS, which grows with the fake's data.
func BenchmarkSync(b *testing.B) {
	shipped, err := shippedBuild()
	if err != nil {
		b.Fatal(err)
	}
	peaks := map[int]int64{}
	for _, rows := range []int{10_000, 100_000} {
		b.Run("rows="+strconv.Itoa(rows), func(b *testing.B) {
			csvPath := filepath.Join(b.TempDir(), "subscribers.csv")
			writeBenchCSV(b, csvPath, rows)
			b.ResetTimer()
			b.StopTimer()
			var peak int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				srv := sendlooptest.NewServer(nil)
				c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
				if err != nil {
					b.Fatal(err)
				}
				listID, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "Bench", OptInMode: sendloop.OptInSingle})
				if err != nil {
					b.Fatal(err)
				}
				for _, name := range []string{"First name", "Plan"} {
					if _, err := srv.DefineCustomField(listID, sendlooptest.CustomField{Name: name}); err != nil {
						b.Fatal(err)
					}
				}
				rssFile := filepath.Join(b.TempDir(), "maxrss")
				cmd := exec.Command(os.Args[0], "--quiet", "sync", "--list", strconv.Itoa(listID), "--csv", csvPath)
				cmd.Env = []string{envAPIKey + "=" + srv.APIKey, envBaseURL + "=" + srv.URL,
					launchEnv + "=" + shipped, rusageEnv + "=" + rssFile}
				b.StartTimer()
				start := time.Now()
				out, err := cmd.CombinedOutput()
				elapsed += time.Since(start)
				b.StopTimer()
				if err != nil {
					b.Fatalf("%v:\n%s", err, out)
				}
				if n := srv.SubscriberCount(listID); n != rows {
					b.Fatalf("the list holds %d subscribers, want %d", n, rows)
				}
				rss, err := strconv.ParseInt(readFile(b, rssFile), 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, rss)
				srv.Close()
			}
			b.ReportMetric(float64(peak), "peak-RSS-KiB")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/sync")
			b.ReportMetric(float64(rows)*float64(b.N)/elapsed.Seconds(), "rows/s")
			peaks[rows] = peak
		})
	}
	if peaks[10_000] > 0 && peaks[100_000] > 0 {
		fmt.Printf("peak RSS: %d KiB for 10,000 rows, %d KiB for 100,000 rows: ratio %.2f (target ≤ 1.5)\n",
			peaks[10_000], peaks[100_000], float64(peaks[100_000])/float64(peaks[10_000]))
	}
}

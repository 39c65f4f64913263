// Command bench-import measures Subscribers.ImportAll with the server in another process,
// which go test benchmarks cannot do:
//
//   - the client's peak RSS importing 1,000,000 rows against 10,000 (streaming keeps it
//     flat: the ratio should stay at or under 1.2);
//   - the default concurrency against one call at a time, against a bare server;
//   - the peak RSS per member of `sendloop --quiet fake` after a 1,000,000-row import into
//     its demo list (rows with two short custom fields).
//
// Run it by hand from the module root (it takes a minute or two; never in CI):
//
//	go run ./scripts/bench-import
//
// Each measurement runs in a fresh process; the command re-runs itself as the bare server
// and as the client. It reads peak RSS from Linux's /proc.
//
//go:build linux

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sendloop/sendloop"
)

func main() {
	serve := flag.Bool("serve", false, "internal: serve the bare server, print its URL, stop when stdin closes")
	client := flag.String("client", "", "internal: import into the server at this URL and print the figures")
	key := flag.String("key", "k", "internal: the API key for -client")
	listID := flag.Int("list", 1, "internal: the list for -client")
	rows := flag.Int("rows", 1_000_000, "rows of the large import (and of the fake's)")
	small := flag.Int("small", 10_000, "rows of the small import")
	concurrency := flag.Int("concurrency", 0, "internal: ImportOptions.Concurrency for -client")
	cycle := flag.Bool("cycle", false, "internal: -client's rows cycle through 10,000 made beforehand")
	skipFake := flag.Bool("skip-fake", false, "skip the measurement of sendloop fake")
	logSize := flag.Int("fake-log-size", -1, "sendloop fake's --log-size (-1: its default)")
	flag.Parse()
	log.SetFlags(0)
	switch {
	case *serve:
		serveBare()
	case *client != "":
		runClient(*client, *key, *listID, *rows, *concurrency, *cycle)
	default:
		if err := orchestrate(*rows, *small, *skipFake, *logSize); err != nil {
			log.Fatal(err)
		}
	}
}

// result is what a client process reports.
type result struct {
	Rows     int     `json:"rows"`
	Seconds  float64 `json:"seconds"`
	MaxRSSKB int64   `json:"max_rss_kb"`
	Imported int     `json:"imported"`
}

func orchestrate(large, small int, skipFake bool, logSize int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("machine: %s/%s, %d CPUs, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())

	srv := exec.Command(self, "-serve")
	srv.Stderr = os.Stderr
	stdin, err := srv.StdinPipe()
	if err != nil {
		return err
	}
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { stdin.Close(); _ = srv.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("bare server: %w", err)
	}
	url = strings.TrimSpace(url)

	client := func(url, key string, list, rows, concurrency int, cycle bool) (result, error) {
		cmd := exec.Command(self, "-client", url, "-key", key, "-list", strconv.Itoa(list),
			"-rows", strconv.Itoa(rows), "-concurrency", strconv.Itoa(concurrency), "-cycle="+strconv.FormatBool(cycle))
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return result{}, err
		}
		var r result
		return r, json.Unmarshal(b, &r)
	}

	fmt.Println("\nclient peak RSS, bare server in another process (median of 3 processes):")
	var rss [2]int64
	for i, n := range []int{small, large} {
		var runs []result
		for range 3 {
			r, err := client(url, "k", 1, n, 0, false)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		slices.SortFunc(runs, func(a, b result) int { return cmp.Compare(a.MaxRSSKB, b.MaxRSSKB) })
		r := runs[1]
		rss[i] = r.MaxRSSKB
		fmt.Printf("  ImportAll %9d rows: peak RSS %5.1f MiB (%.1f to %.1f), %6.0f ns/row\n", n, float64(r.MaxRSSKB)/1024,
			float64(runs[0].MaxRSSKB)/1024, float64(runs[2].MaxRSSKB)/1024, r.Seconds*1e9/float64(n))
	}
	fmt.Printf("  ratio %d/%d rows: %.2f (target <= 1.2)\n", large, small, float64(rss[1])/float64(rss[0]))

	// Rows made beforehand, so that the sequence (run by the reader, one row at a time)
	// costs next to nothing and what is compared is ImportAll's own work.
	fmt.Println("\nconcurrency, bare server in another process, rows made beforehand:")
	var secs [2]float64
	for i, c := range []int{1, 0} {
		best := 0.0
		for range 3 {
			r, err := client(url, "k", 1, large, c, true)
			if err != nil {
				return err
			}
			if best == 0 || r.Seconds < best {
				best = r.Seconds
			}
		}
		secs[i] = best
		fmt.Printf("  Concurrency %d: %6.0f ns/row (best of 3)\n", c, best*1e9/float64(large))
	}
	fmt.Printf("  default vs 1: %.2fx faster (target >= 1.3)\n", secs[0]/secs[1])

	if skipFake {
		return nil
	}
	return measureFake(client, large, logSize)
}

// measureFake builds cmd/sendloop, serves `sendloop --quiet fake`, imports rows into its
// demo list and reads the fake's peak RSS.
func measureFake(client func(url, key string, list, rows, concurrency int, cycle bool) (result, error), rows, logSize int) error {
	dir, err := os.MkdirTemp("", "bench-import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sendloop")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sendloop")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building cmd/sendloop (run from the module root): %w", err)
	}
	args := []string{"--quiet", "fake"}
	if logSize >= 0 {
		args = append(args, "--log-size", strconv.Itoa(logSize))
	}
	fake := exec.Command(bin, args...)
	fake.Stderr = os.Stderr
	out, err := fake.StdoutPipe()
	if err != nil {
		return err
	}
	if err := fake.Start(); err != nil {
		return err
	}
	defer func() { _ = fake.Process.Signal(os.Interrupt); _ = fake.Wait() }()
	env := map[string]string{}
	sc := bufio.NewScanner(out)
	for len(env) < 2 && sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok && (k == "SENDLOOP_BASE_URL" || k == "SENDLOOP_API_KEY") {
			env[k] = strings.Trim(v, "'")
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	before, err := vmHWM(fake.Process.Pid)
	if err != nil {
		return err
	}
	start := time.Now()
	r, err := client(env["SENDLOOP_BASE_URL"], env["SENDLOOP_API_KEY"], 1, rows, 0, false)
	if err != nil {
		return err
	}
	peak, err := vmHWM(fake.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("\nsendloop %s, ImportAll into list 1 (two custom fields):\n", strings.Join(args, " "))
	fmt.Printf("  %d rows imported in %.1fs; fake peak RSS %.1f MiB (%.1f MiB before): %.0f bytes per member (target <= 400)\n",
		r.Imported, time.Since(start).Seconds(), float64(peak)/1024, float64(before)/1024, float64(peak)*1024/float64(r.Imported))
	return nil
}

// vmHWM reads a process's peak resident set size, in KiB, from /proc (Linux).
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the fake's peak RSS (Linux only): %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// serveBare answers subscriber.import with its row count, reading each body into a
// reused buffer, until stdin closes: a server that costs little, so that what is measured
// is the client and HTTP.
func serveBare() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	rowKey := []byte("%5D%5BEmailAddress%5D=")
	var buffers sync.Pool
	go func() {
		log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			buf, _ := buffers.Get().(*bytes.Buffer)
			if buf == nil {
				buf = new(bytes.Buffer)
			}
			defer buffers.Put(buf)
			buf.Reset()
			buf.Grow(int(max(r.ContentLength, 0)))
			if _, err := buf.ReadFrom(r.Body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"Success":true,"TotalImported":%d,"TotalDuplicate":0,"TotalFailed":0}`, bytes.Count(buf.Bytes(), rowKey))
		})))
	}()
	fmt.Printf("http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// rowsOf yields n rows with two short custom fields, made on the fly.
func rowsOf(n int) iter.Seq[sendloop.ImportSubscriber] {
	return func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			if !yield(sendloop.ImportSubscriber{EmailAddress: "user" + strconv.Itoa(i) + "@example.com",
				Fields: sendloop.CustomFields{1: "First" + strconv.Itoa(i), 2: "gold"}}) {
				return
			}
		}
	}
}

// cycled yields n rows cycling through 10,000 made beforehand (no two in a batch alike).
func cycled(n int) iter.Seq[sendloop.ImportSubscriber] {
	made := slices.Collect(rowsOf(10_000))
	return func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			if !yield(made[i%len(made)]) {
				return
			}
		}
	}
}

func runClient(url, key string, listID, rows, concurrency int, cycle bool) {
	c, err := sendloop.NewClient(key, sendloop.WithBaseURL(url))
	if err != nil {
		log.Fatal(err)
	}
	seq := rowsOf(rows)
	if cycle {
		seq = cycled(rows)
	}
	start := time.Now()
	report, err := c.Subscribers.ImportAll(context.Background(), listID, seq, sendloop.ImportOptions{Concurrency: concurrency})
	if err != nil {
		log.Fatal(err)
	}
	elapsed := time.Since(start)
	if report.Imported+report.Duplicate != rows {
		log.Fatalf("imported %d of %d rows: %+v", report.Imported, rows, report)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(result{Rows: rows, Seconds: elapsed.Seconds(), MaxRSSKB: ru.Maxrss, Imported: report.Imported})
}

package listsync

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// replayTransport answers a client from answers recorded from a fake: the client's work
// alone (encoding, decoding, planning), without a server's.
type replayTransport struct {
	pages    map[int][]byte    // subscriber.browse answers by StartIndex
	commands map[string][]byte // other answers by command, lower case
}

func (rt *replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	cmd := strings.ToLower(req.URL.Path)
	cmd = cmd[strings.LastIndexByte(strings.TrimSuffix(cmd, "/json"), '/')+1:]
	cmd = strings.TrimSuffix(cmd, "/json")
	answer, ok := rt.commands[cmd]
	if cmd == "subscriber.browse" {
		form, _ := url.ParseQuery(string(body))
		index, _ := strconv.Atoi(form.Get("StartIndex"))
		answer, ok = rt.pages[index]
	}
	if !ok {
		return nil, fmt.Errorf("replay: no answer for %s", req.URL.Path)
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(answer)), ContentLength: int64(len(answer)), Request: req}, nil
}

// recordingTransport records a fake's answers into a replayTransport.
type recordingTransport struct{ rt *replayTransport }

func (r recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	cmd := strings.TrimSuffix(strings.ToLower(req.URL.Path), "/json")
	cmd = cmd[strings.LastIndexByte(cmd, '/')+1:]
	if cmd == "subscriber.browse" {
		form, _ := url.ParseQuery(string(body))
		index, _ := strconv.Atoi(form.Get("StartIndex"))
		r.rt.pages[index] = answer
	} else {
		r.rt.commands[cmd] = answer
	}
	return resp, nil
}

// resyncFixture records a fake's answers for a list of n members with the fields First name
// and Plan, and writes the CSV they came from: a re-sync of it plans nothing.
// resyncClient is a client of resyncFixture's replayed service, and the fixture's CSV.
func resyncClient(b *testing.B, n int) (*sendloop.Client, string) {
	rt, path := resyncFixture(b, n)
	c, err := sendloop.NewClient(replayKey, sendloop.WithBaseURL("https://replay.invalid"), sendloop.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		b.Fatal(err)
	}
	return c, path
}

// benchList makes a fake with an empty list holding the fields First name and Plan: the
// fake, a client of it and the list's ID.
func benchList(b *testing.B) (*sendlooptest.Server, *sendloop.Client, int) {
	b.Helper()
	srv := sendlooptest.NewServer(b)
	c := apiClient(b, srv)
	list, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "Bench", OptInMode: sendloop.OptInSingle})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"First name", "Plan"} {
		if _, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: name}); err != nil {
			b.Fatal(err)
		}
	}
	return srv, c, list
}

// recordPlan plans a sync of the CSV at path into the fake's list through a client that
// records the fake's answers: the recording, the recording client and the plan (closed
// when the benchmark ends).
func recordPlan(b *testing.B, srv *sendlooptest.Server, list int, path string) (*replayTransport, *sendloop.Client, *Plan) {
	b.Helper()
	ctx := context.Background()
	rt := &replayTransport{pages: map[int][]byte{}, commands: map[string][]byte{}}
	rec, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: recordingTransport{rt}}))
	if err != nil {
		b.Fatal(err)
	}
	src, err := OpenCSV(path, CSVOptions{})
	if err != nil {
		b.Fatal(err)
	}
	job, err := New(ctx, rec, list, src, Options{Concurrency: 1, TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	pl, err := job.Plan(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pl.Close() })
	return rt, rec, pl
}

// replayKey is the API key of resyncClient's client.
const replayKey = "replay-key-0123456789"

func resyncFixture(b *testing.B, n int) (*replayTransport, string) {
	b.Helper()
	srv, c, list := benchList(b)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "members.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("EmailAddress,First name,Plan\n")
	plans := []string{"free", "pro", "team"}
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			fmt.Fprintf(w, "%s,User %d,%s\n", emailN(i), i, plans[i%3])
			if !yield(sendloop.ImportSubscriber{EmailAddress: emailN(i), Fields: sendloop.CustomFields{1: fmt.Sprint("User ", i), 2: plans[i%3]}}) {
				return
			}
		}
	}
	if _, err := c.Subscribers.ImportAll(ctx, list, rows, sendloop.ImportOptions{Concurrency: 1}); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	rt, rec, pl := recordPlan(b, srv, list, path)
	if pl.Unchanged != n {
		b.Fatalf("the fixture's re-sync: %d unchanged of %d", pl.Unchanged, n)
	}
	if _, err := rec.Lists.List(ctx); err != nil { // list.getlist, for runs from a state
		b.Fatal(err)
	}
	return rt, path
}

// BenchmarkPlanResync plans the re-sync of an unchanged list of 20,000 members from its CSV,
// the service's answers replayed from memory: the client's cost per member of a re-sync,
// which is all planning, as wall time (ns/member) and as the CPU time of the process
// (cpu-ns/member: user and system, every goroutine; steadier than wall time on a shared
// machine).
func BenchmarkPlanResync(b *testing.B) {
	const n = 20_000
	c, path := resyncClient(b, n)
	dir := b.TempDir()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for range b.N {
		src, err := OpenCSV(path, CSVOptions{})
		if err != nil {
			b.Fatal(err)
		}
		job, err := New(ctx, c, 1, src, Options{TempDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		pl, err := job.Plan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if pl.Unchanged != n {
			b.Fatalf("%d unchanged of %d", pl.Unchanged, n)
		}
		pl.Close()
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/n, "cpu-ns/member")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/member")
}

// cpuTime returns the CPU time (user and system) the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPlanFromState plans and applies the re-sync of BenchmarkPlanResync's unchanged
// list from a state (Options.State), the answers replayed from memory: its CPU per member
// against BenchmarkPlanResync's is the share of a re-sync that a nightly run from the state
// costs (the target: at most half).
func BenchmarkPlanFromState(b *testing.B) {
	const n = 20_000
	c, path := resyncClient(b, n)
	dir := b.TempDir()
	ctx := context.Background()
	state := &StateOptions{Path: filepath.Join(b.TempDir(), "state")}
	run := func(wantUsed bool) {
		src, err := OpenCSV(path, CSVOptions{})
		if err != nil {
			b.Fatal(err)
		}
		job, err := New(ctx, c, 1, src, Options{TempDir: dir, State: state})
		if err != nil {
			b.Fatal(err)
		}
		pl, err := job.Plan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer pl.Close()
		if pl.Unchanged != n || pl.State.Used != wantUsed {
			b.Fatalf("%d unchanged of %d, %+v", pl.Unchanged, n, pl.State)
		}
		if _, err := pl.Apply(ctx, ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	run(false) // writes the state
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for range b.N {
		run(true)
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/n, "cpu-ns/member")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/member")
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// hookedFake is a demo fake that calls a test's function on every request it receives.
type hookedFake struct {
	*fake
	mu    sync.Mutex
	onReq func(sendlooptest.Request)
}

func newHookedFake(t *testing.T) *hookedFake {
	t.Helper()
	h := &hookedFake{}
	srv := sendlooptest.NewServer(t, sendlooptest.WithRequestHook(func(r sendlooptest.Request) {
		h.mu.Lock()
		fn := h.onReq
		h.mu.Unlock()
		if fn != nil {
			fn(r)
		}
	}))
	if err := seedDemo(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	h.fake = &fake{srv: srv, env: []string{envAPIKey + "=" + srv.APIKey, envBaseURL + "=" + srv.URL}}
	return h
}

func (h *hookedFake) hook(fn func(sendlooptest.Request)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onReq = fn
}

// interruptMembers and interruptCSV make a sync of every kind of change: 60 members to update,
// 30 unchanged, 30 absent (to unsubscribe), 120 new addresses, and a few rejected rows.
const (
	interruptUpdates   = 60
	interruptUnchanged = 30
	interruptAbsent    = 30
	interruptAdds      = 120
)

// seedInterruptList imports the members the interruption tests start with.
func seedInterruptList(t *testing.T, f *fake) {
	t.Helper()
	c := apiClient(t, f)
	var rows []sendloop.ImportSubscriber
	for i := range interruptUpdates + interruptUnchanged + interruptAbsent {
		rows = append(rows, sendloop.ImportSubscriber{EmailAddress: emailN(i), Fields: sendloop.CustomFields{2: "free"}})
	}
	if _, err := c.Subscribers.Import(testContext(t), demoListID, sendloop.SubscriberImportParams{Subscribers: rows}); err != nil {
		t.Fatal(err)
	}
}

func interruptCSV() string {
	var b strings.Builder
	b.WriteString("EmailAddress,First name,Plan\n")
	for i := range interruptUpdates {
		fmt.Fprintf(&b, "%s,U%d,pro\n", emailN(i), i)
	}
	for i := interruptUpdates; i < interruptUpdates+interruptUnchanged; i++ {
		fmt.Fprintf(&b, "%s,,free\n", emailN(i))
	}
	b.WriteString("ann@example.com,Ann,pro\nbob@example.com,Bob,free\n")
	for i := range interruptAdds {
		fmt.Fprintf(&b, "new%04d@example.com,N%d,team\n", i, i)
		if i%40 == 0 {
			fmt.Fprintf(&b, "not-an-address-%d,X,y\n", i)
			fmt.Fprintf(&b, "NEW%04d@example.com,N%d,team\n", i, i)
		}
	}
	return b.String()
}

// listState describes every member of the demo list: address, status and fields.
func listState(t *testing.T, f *fake) string {
	t.Helper()
	c := apiClient(t, f)
	var out []string
	for s, err := range c.Subscribers.BrowseIter(testContext(t), demoListID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %v", strings.ToLower(s.EmailAddress), s.SubscriptionStatus, s.CustomFields))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

var interruptArgs = []string{"--json", "sync", "--list", "1", "--unsubscribe-missing", "--max-unsubscribe", "100%",
	"--batch-size", "7", "--concurrency", "2"}

// expectedAfterSync is the list an uninterrupted sync of interruptCSV leaves, and its rejects.
func expectedAfterSync(t *testing.T) (state string, rejects map[string]bool) {
	t.Helper()
	f := newFake(t)
	seedInterruptList(t, f)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", interruptCSV())
	rejectsPath := filepath.Join(dir, "rejects.csv")
	r := f.sendloop(t, append(slices.Clone(interruptArgs), "--csv", csvPath, "--rejects", rejectsPath)...)
	expect(t, r, exitFailure, []string{`"rows_not_attempted": 0`}, []string{"rows were rejected"})
	return listState(t, f), rejectLines(t, rejectsPath)
}

// rejectLines reads a rejects file into a set of its records.
func rejectLines(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return out
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		out[strings.Join(rec, ",")] = true
	}
	return out
}

// checkInterrupted checks the document of an interrupted sync: its rows add up, and its
// rejected rows are rows an uninterrupted run rejects too.
func checkInterrupted(t *testing.T, stdout string, rejectsPath string, wantRejects map[string]bool) {
	t.Helper()
	var doc struct {
		Plan struct {
			Rows int `json:"rows"`
		} `json:"plan"`
		Result       *syncResult `json:"result"`
		Interrupted  bool        `json:"interrupted"`
		Changed      *bool       `json:"changed"`
		RowsPlanning int         `json:"rows"`
		NotAttempted int         `json:"rows_not_attempted"`
		RejectedRows []struct {
			Line    int    `json:"line"`
			Address string `json:"address"`
			Reason  string `json:"reason"`
			Outcome string `json:"outcome"`
		} `json:"rejected_rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	total := 2 + interruptUpdates + interruptUnchanged + interruptAdds + 2*(interruptAdds/40)
	if doc.Result == nil { // stopped while planning
		if !doc.Interrupted || doc.Changed == nil || *doc.Changed || doc.RowsPlanning != total || doc.NotAttempted != total {
			t.Errorf("interrupted while planning: %s", stdout)
		}
	} else {
		res := doc.Result
		if doc.Plan.Rows != total || res.RowsDone+res.RowsFailed+res.RowsUnknown+res.RowsNotAttempted != total {
			t.Errorf("rows: %d planned, %d done + %d failed + %d unknown + %d not attempted, want %d in all",
				doc.Plan.Rows, res.RowsDone, res.RowsFailed, res.RowsUnknown, res.RowsNotAttempted, total)
		}
	}
	for _, r := range doc.RejectedRows {
		if rec := fmt.Sprintf("%d,%s,%s,%s", r.Line, r.Address, r.Reason, r.Outcome); !wantRejects[rec] {
			t.Errorf("rejected %s, which an uninterrupted run does not reject", rec)
		}
	}
	for rec := range rejectLines(t, rejectsPath) {
		if !wantRejects[rec] {
			t.Errorf("the rejects file holds %s, which an uninterrupted run does not reject", rec)
		}
	}
}

// TestSyncInterruptedInProcess stops syncs at random requests (the context ends, as at a
// signal), with and without a grace period for the calls in flight, then runs the same sync
// again: the list must end as an uninterrupted sync leaves it.
func TestSyncInterruptedInProcess(t *testing.T) {
	t.Parallel()
	want, wantRejects := expectedAfterSync(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	const requests = 110 // about what a sync of interruptCSV sends
	for i := range 8 {
		at := 1 + rng.IntN(requests)
		grace := []string{"0s", "10s"}[i%2]
		t.Run(fmt.Sprintf("at=%d,grace=%s", at, grace), func(t *testing.T) {
			t.Parallel()
			f := newHookedFake(t)
			seedInterruptList(t, f.fake)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "members.csv", interruptCSV())
			rejectsPath := filepath.Join(dir, "rejects.csv")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			n := 0
			f.hook(func(sendlooptest.Request) {
				mu.Lock()
				defer mu.Unlock()
				if n++; n == at {
					cancel()
				}
			})
			var stdout, stderr bytes.Buffer
			args := append(slices.Clone(interruptArgs), "--csv", csvPath, "--rejects", rejectsPath, "--grace", grace)
			getenv := func(k string) string {
				for _, kv := range f.env {
					if v, ok := strings.CutPrefix(kv, k+"="); ok {
						return v
					}
				}
				return ""
			}
			code := run(ctx, args, &env{stdout: &stdout, stderr: &stderr, getenv: getenv})
			f.hook(nil)
			if ctx.Err() != nil {
				if code != exitFailure || !strings.Contains(stdout.String(), `"interrupted": true`) {
					t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
				}
				if strings.Contains(stderr.String(), "context canceled") {
					t.Errorf("a cancelled call is reported as a failure:\n%s", stderr.String())
				}
			}
			checkInterrupted(t, stdout.String(), rejectsPath, wantRejects)
			r := f.sendloop(t, append(slices.Clone(interruptArgs), "--csv", csvPath)...)
			if r.code != exitFailure || !strings.Contains(r.stdout, `"rows_not_attempted": 0`) {
				t.Errorf("the second run: exit code %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if got := listState(t, f.fake); got != want {
				t.Errorf("after an interrupted sync and a second one, the list is\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestSyncInterruptedBySignal sends SIGINT or SIGTERM to the sendloop process at a random
// request, checks the exit code and the report, then runs the same sync again.
func TestSyncInterruptedBySignal(t *testing.T) {
	t.Parallel()
	want, wantRejects := expectedAfterSync(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		at := 5 + rng.IntN(100)
		t.Run(fmt.Sprintf("%v,at=%d", sig, at), func(t *testing.T) {
			t.Parallel()
			f := newHookedFake(t)
			seedInterruptList(t, f.fake)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "members.csv", interruptCSV())
			rejectsPath := filepath.Join(dir, "rejects.csv")
			cmd := exec.Command(binary, append(slices.Clone(interruptArgs), "--csv", csvPath, "--rejects", rejectsPath)...)
			cmd.Env = childEnv(f.env)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			var mu sync.Mutex
			n := 0
			f.hook(func(sendlooptest.Request) {
				mu.Lock()
				defer mu.Unlock()
				if n++; n == at {
					_ = cmd.Process.Signal(sig)
				}
			})
			mu.Lock() // the hook waits until cmd.Process is set
			if err := cmd.Start(); err != nil {
				mu.Unlock()
				t.Fatal(err)
			}
			mu.Unlock()
			_ = cmd.Wait()
			f.hook(nil)
			checkNoRace(t, stderr.String())
			code := cmd.ProcessState.ExitCode()
			wantCode := map[syscall.Signal]int{syscall.SIGINT: exitInterrupt, syscall.SIGTERM: exitTerminate}[sig]
			mu.Lock()
			signalled := n >= at
			mu.Unlock()
			// A signal that comes as the last calls end finds nothing left to stop: the
			// run reports a complete sync and exits with the signal's code, or, when the
			// process ends before its signal handler runs (a loaded machine), with the
			// complete run's own code.
			stopped := strings.Contains(stdout.String(), `"interrupted": true`)
			if signalled && code != wantCode && (stopped || code != exitFailure) {
				t.Errorf("exit code %d after %v, want %d\nstdout:\n%s\nstderr:\n%s", code, sig, wantCode, stdout.String(), stderr.String())
			}
			if want := fmt.Sprintf(`"kind":"interrupted","exit_code":%d`, code); code == wantCode && !strings.Contains(stderr.String(), want) {
				t.Errorf("the JSON error does not say %s:\n%s", want, stderr.String())
			}
			if stopped && !strings.Contains(stderr.String(), "interrupted ("+signalName(sig)+")") {
				t.Errorf("stderr does not say the run was interrupted (exit %d):\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
			}
			checkInterrupted(t, stdout.String(), rejectsPath, wantRejects)
			r := f.sendloop(t, append(slices.Clone(interruptArgs), "--csv", csvPath)...)
			expect(t, r, exitFailure, []string{`"rows_not_attempted": 0`}, nil)
			if got := listState(t, f.fake); got != want {
				t.Errorf("after an interrupted sync and a second one, the list is\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestSyncSecondSignal: with a long grace period and calls that hang, a second signal
// cancels the calls in flight, and the run ends at once with the first signal's code and an
// honest report.
func TestSyncSecondSignal(t *testing.T) {
	t.Parallel()
	f := newHookedFake(t)
	f.srv.InjectFault("subscriber.import", sendlooptest.Fault{Delay: time.Minute, Times: 100})
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", interruptCSV())
	rejectsPath := filepath.Join(dir, "rejects.csv")
	cmd := exec.Command(binary, "sync", "--list", "1", "--csv", csvPath, "--rejects", rejectsPath, "--grace", "1h", "--batch-size", "10")
	cmd.Env = childEnv(f.env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	imports := make(chan struct{}, 100)
	f.hook(func(r sendlooptest.Request) {
		if r.Command == "subscriber.import" {
			imports <- struct{}{}
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-imports:
	case <-time.After(30 * time.Second):
		t.Fatal("no import call")
	}
	start := time.Now()
	// SIGINT, then SIGTERM: a second SIGINT sent before the process has taken the first in
	// (from the kernel, then from the Go runtime's queue) merges with it, and a pause between
	// them would be a bet on how soon a loaded machine does. Different signals never merge.
	// The kernel and the runtime hand pending signals over lowest number first, so the first
	// is SIGINT (130) all but always; SIGTERM (143) can only come first if the thread that
	// took the SIGINT stalls before queueing it, and the run must then end just the same.
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	// Time is what is tested: without the second signal the calls in flight would hold the
	// run for a minute. 20 s is 100 times the median under -race (0.2 s, 20 runs).
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v to end after the second signal", took)
	}
	code := cmd.ProcessState.ExitCode()
	if code != exitInterrupt && code != exitTerminate {
		t.Errorf("exit code %d, want %d (or %d)\nstdout:\n%s\nstderr:\n%s", code, exitInterrupt, exitTerminate, stdout.String(), stderr.String())
	}
	for _, s := range []string{"Interrupted: list 1", "NOT ATTEMPTED", "Run the same sync again"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
		}
	}
	if rejects := readFile(t, rejectsPath); strings.Contains(rejects, "cancel") || strings.Contains(rejects, "new0") {
		t.Errorf("cancelled rows in the rejects file:\n%s", rejects)
	}
	checkNoRace(t, stderr.String())
}

func TestParseMaxUnsubscribe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      string
		members int
		want    int
		bad     bool
	}{
		{"10%", 1000, 100, false},
		{"10%", 3, 1, false}, // rounded up: a small list can lose one member
		{"10%", 0, 0, false},
		{"0%", 50, 0, false},
		{"100%", 50, -1, false},
		{" 25 % ", 10, 3, false},
		{"12.5%", 80, 10, false},
		{"7", 1000, 7, false},
		{"0", 1000, 0, false},
		{"101%", 10, 0, true},
		{"-1", 10, 0, true},
		{"-5%", 10, 0, true},
		{"ten", 10, 0, true},
		{"", 10, 0, true},
		{"NaN%", 10, 0, true},
	} {
		got, err := parseMaxUnsubscribe(tt.in, tt.members)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseMaxUnsubscribe(%q, %d) = %d, %v; want %d, error %t", tt.in, tt.members, got, err, tt.want, tt.bad)
		}
	}
}

// TestSyncMaxUnsubscribe: a plan that would unsubscribe more than --max-unsubscribe allows
// is refused with exit code 2 before anything changes.
func TestSyncMaxUnsubscribe(t *testing.T) {
	t.Parallel()
	// 120 members; the file names 90 of them: 30 (25%) to unsubscribe.
	var b strings.Builder
	b.WriteString("EmailAddress,Plan\nann@example.com,pro\nbob@example.com,free\n")
	for i := interruptAbsent; i < interruptUpdates+interruptUnchanged+interruptAbsent; i++ {
		fmt.Fprintf(&b, "%s,free\n", emailN(i))
	}
	for _, tt := range []struct {
		limit []string
		code  int
	}{
		{nil, exitUsage}, // 10%
		{[]string{"--max-unsubscribe", "20%"}, exitUsage},
		{[]string{"--max-unsubscribe", "29"}, exitUsage},
		{[]string{"--max-unsubscribe", "30"}, exitOK},
		{[]string{"--max-unsubscribe", "25%"}, exitOK},
		{[]string{"--max-unsubscribe", "100%"}, exitOK},
		{[]string{"--max-unsubscribe", "lots"}, exitUsage},
	} {
		t.Run(strings.Join(tt.limit, "="), func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			seedInterruptList(t, f)
			csvPath := writeFile(t, t.TempDir(), "members.csv", b.String())
			before, state := writes(f.srv), listState(t, f)
			r := f.sendloop(t, append([]string{"sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing"}, tt.limit...)...)
			if r.code != tt.code {
				t.Fatalf("exit code %d, want %d\n%s\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.code == exitUsage {
				if after := writes(f.srv); after != before || listState(t, f) != state {
					t.Errorf("a refused sync changed the list: %s, then %s", before, after)
				}
				if !strings.Contains(r.stderr, "--max-unsubscribe") {
					t.Errorf("stderr does not name --max-unsubscribe:\n%s", r.stderr)
				}
				return
			}
			if !strings.Contains(r.stdout, "unsubscribe  30") {
				t.Errorf("stdout:\n%s", r.stdout)
			}
		})
	}
}

// TestSyncInterruptedWhilePlanning: stopped while it reads the members, sync changes
// nothing and counts every row of the file as not attempted.
func TestSyncInterruptedWhilePlanning(t *testing.T) {
	t.Parallel()
	f := newHookedFake(t)
	dir := t.TempDir()
	content := interruptCSV()
	csvPath := writeFile(t, dir, "members.csv", content)
	ctx, cancel := context.WithCancel(context.Background())
	before := writes(f.srv)
	f.hook(func(r sendlooptest.Request) {
		if r.Command == "subscriber.browse" {
			cancel()
		}
	})
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{envAPIKey: f.srv.APIKey, envBaseURL: f.srv.URL}[k]
	}
	code := run(ctx, []string{"sync", "--list", "1", "--csv", csvPath}, &env{stdout: &stdout, stderr: &stderr, getenv: getenv})
	rows := strings.Count(content, "\n") - 1
	if code != exitFailure || !strings.Contains(stdout.String(), "Interrupted while planning: nothing was changed ("+strconv.Itoa(rows)+" rows") {
		t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if after := writes(f.srv); after != before {
		t.Errorf("an interruption while planning changed the list: %s, then %s", before, after)
	}
}

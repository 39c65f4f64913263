package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// binary is the sendloop program the tests start as a process: the test binary itself,
// which runs main when cliEnv is set (childEnv sets it), as the package under test is
// main. Nothing is built: a build of the CLI cost about 2 s of CPU before the tests could
// start (two builds, 7 s, under -race). Under -race it is race-built, as the tests are.
//
// Most tests call the CLI's run in the test process (invocation.run): under -race, the
// race detector then watches the CLI's goroutines and its callbacks from the library's
// workers as it watches the tests. The tests of what only a process shows start binary:
// signals and kills, the terminal's progress, the fake's server, main's wiring of the
// streams and exit codes, and what the CLI reads from the process's environment.
var binary string

// shippedDir holds the binary of shippedBuild, if a benchmark built it.
var shippedDir string

// cliEnv set to 1 makes the test binary the sendloop program; asCLI sets it.
const (
	cliEnv = "SENDLOOP_TEST_AS_CLI"
	asCLI  = cliEnv + "=1"
)

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		main()
		return // not reached: main exits
	}
	if path := os.Getenv(launchEnv); path != "" {
		os.Exit(launch(path, os.Args[1:]))
	}
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		// Started as sendloop (a command first) without cliEnv: running the tests again
		// from within them would never end.
		fmt.Fprintf(os.Stderr, "the test binary started as sendloop %s without %s\n", os.Args[1], asCLI)
		os.Exit(2)
	}
	flag.Parse()
	testkit.ParallelWaits() // the tests mostly wait on a sendloop process
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = exe
	code := m.Run()
	if shippedDir != "" {
		os.RemoveAll(shippedDir)
	}
	os.Exit(code)
}

// shippedBuild builds sendloop as it ships, once, for the benchmarks that measure the
// program (the test binary carries the tests' code too), into shippedDir.
var shippedBuild = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sendloop-bench-")
	if err != nil {
		return "", err
	}
	shippedDir = dir
	path := filepath.Join(dir, "sendloop")
	if runtime.GOOS == "windows" {
		path += ".exe"
	}
	build := exec.Command("go", "build", "-o", path, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building sendloop: %w", err)
	}
	return path, nil
})

// The launcher: BenchmarkSync runs the sendloop binary through a fresh process of the test
// binary, to measure its peak memory. On Linux a child started by the test process (vfork,
// then exec) is charged the test process's own peak RSS in ru_maxrss, since it runs on the
// parent's memory until exec; a fresh, small launcher keeps that charge below the measure.
const (
	launchEnv = "SENDLOOP_TEST_LAUNCH" // the binary to run; set, the test binary is a launcher
	rusageEnv = "SENDLOOP_TEST_MAXRSS" // the file the launcher writes the child's ru_maxrss to
)

// launch runs path with args, the environment minus the launcher's variables, and writes
// its peak RSS to the file named by SENDLOOP_TEST_MAXRSS. It returns the child's exit code.
func launch(path string, args []string) int {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, launchEnv+"=") && !strings.HasPrefix(kv, rusageEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = childEnv(env), os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 1
	}
	if out := os.Getenv(rusageEnv); out != "" {
		if werr := os.WriteFile(out, []byte(fmt.Sprint(maxRSS(cmd.ProcessState))), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "launcher:", werr)
			return 1
		}
	}
	return cmd.ProcessState.ExitCode()
}

// childEnv is the environment to give a sendloop subprocess: env without the GITHUB_*
// variables, so that a test run inside GitHub Actions sees the CLI behave as anywhere else
// (the CLI may change its output when GITHUB_ACTIONS=true), and never nil, since a nil
// exec.Cmd.Env would inherit the test's whole environment. Every test that starts the binary
// sets its environment through it. Unless env sets GORACE, it adds noExitSleep; it adds
// cliEnv, which makes the test binary sendloop.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	gorace := false
	for _, kv := range env {
		if len(kv) < len("GITHUB_") || !strings.EqualFold(kv[:len("GITHUB_")], "GITHUB_") { // Windows ignores case
			out = append(out, kv)
		}
		gorace = gorace || strings.HasPrefix(kv, "GORACE=")
	}
	if !gorace {
		out = append(out, noExitSleep)
	}
	return append(out, asCLI)
}

// A race-built program that exits with code 0 first sleeps for GORACE's atexit_sleep_ms
// (a second by default), to catch the races of goroutines still running after main. The
// tests run the race-built binary hundreds of times, and that second was most of the
// -race run's time, so childEnv turns it off: every race while the CLI works is still
// reported (checkNoRace looks for the report, as a failing run exits with its own code, not
// 66), and the runs that end much concurrent work with code 0 keep it with keepExitSleep.
// The setting does nothing to a binary built without -race.
const (
	noExitSleep   = "GORACE=atexit_sleep_ms=0"
	keepExitSleep = "GORACE=atexit_sleep_ms=1000"
)

// raceReport starts the report of a race-built program that found a data race.
const raceReport = "WARNING: DATA RACE"

// checkNoRace fails the test if stderr, a sendloop subprocess's, reports a data race.
func checkNoRace(t testing.TB, stderr string) {
	t.Helper()
	if strings.Contains(stderr, raceReport) {
		t.Errorf("the sendloop subprocess reported a data race:\n%s", stderr)
	}
}

// result is what a run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// invocation is a run of sendloop: arguments, environment and stdin.
type invocation struct {
	args []string
	env  []string // the whole environment of the child: nothing is inherited
	// ciEnv is added after childEnv drops the GITHUB_* variables: the tests of the CLI's
	// GitHub Actions reporting set them here, as a workflow would.
	ciEnv []string
	stdin string
	// process runs the binary rather than the CLI's run in this process: set by the tests
	// of the binary itself (main's wiring of streams and exit codes).
	process bool
}

// run runs sendloop with the invocation's arguments, environment and input, and waits for
// it, for at most a minute.
//
// Unless the invocation asks for a process, it calls the CLI's run in this process, as main
// does, with the environment given and nothing else. Most tests check what a command prints
// and how it refuses, which run decides in whatever process it runs; a process of the
// binary costs about 30 ms of CPU to start (a race-built one about 0.1 s), and the tests
// started hundreds. The binary's own wiring (signals, exit codes, the terminal) is tested
// with processes.
func (inv invocation) run(t testing.TB) result {
	t.Helper()
	if inv.process {
		return inv.runProcess(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vars := map[string]string{}
	for _, kv := range append(childEnv(inv.env), inv.ciEnv...) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v // the last wins, as in a process's environment built by os/exec
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, inv.args, &env{stdin: strings.NewReader(inv.stdin), stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return vars[k] }})
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// runProcess runs the binary and waits for it, for at most a minute.
func (inv invocation) runProcess(t testing.TB) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, inv.args...)
	cmd.Env = append(childEnv(inv.env), inv.ciEnv...)
	cmd.Stdin = strings.NewReader(inv.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running sendloop %s: %v", strings.Join(inv.args, " "), err)
	}
	checkNoRace(t, stderr.String())
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// fake is a seeded sendlooptest server in the test process and the environment pointing
// the binary at it.
type fake struct {
	srv *sendlooptest.Server
	env []string
}

// newFake starts a fake holding the demo data of --fake.
func newFake(t testing.TB) *fake {
	t.Helper()
	srv := sendlooptest.NewServer(t)
	if err := seedDemo(context.Background(), srv); err != nil {
		t.Fatal(err)
	}
	return &fake{srv: srv, env: []string{envAPIKey + "=" + srv.APIKey, envBaseURL + "=" + srv.URL}}
}

// sendloop runs sendloop against the fake.
func (f *fake) sendloop(t testing.TB, args ...string) result {
	t.Helper()
	return invocation{args: args, env: f.env}.run(t)
}

// normalizers replace what varies from run to run in outputs compared with golden files.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`sltest_[0-9a-f]+`), "KEY"},
	{regexp.MustCompile(`relay-[0-9a-f]+@example\.com`), "RELAY-USER"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(`[12]\d{3}-\d{2}-\d{2}`), "YYYY-MM-DD"}, // '0000-00-00' (unset) stays
	{regexp.MustCompile(`YYYY-MM-DD \d{2}:\d{2}:\d{2}`), "YYYY-MM-DD hh:mm:ss"},
	{regexp.MustCompile(`(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day`), "WEEKDAY"},
	{regexp.MustCompile(` \(revision [0-9a-f]+(, modified)?\)`), ""}, // a build from a checkout
}

func normalize(s string, replace ...string) string {
	s = strings.NewReplacer(replace...).Replace(s)
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// golden compares got, normalized, with testdata/name.golden, or rewrites it with -update.
func golden(t testing.TB, name, got string, replace ...string) {
	t.Helper()
	got = normalize(got, replace...)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// expect checks a result's exit code and that its streams hold the given texts.
func expect(t testing.TB, r result, code int, stdoutHas, stderrHas []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stdoutHas {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	for _, s := range stderrHas {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

// writeFile writes a file in dir and returns its path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// testContext returns a context ended when the test ends, or after a minute.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// emailN returns a distinct address for each n.
func emailN(n int) string { return fmt.Sprintf("user%06d@example.com", n) }

func TestChildEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{name: "nil inherits nothing", env: nil, want: []string{noExitSleep, asCLI}},
		{name: "GitHub's variables dropped", env: []string{"GITHUB_ACTIONS=true", "SENDLOOP_API_KEY=k", "GITHUB_STEP_SUMMARY=/tmp/s", "TERM=dumb"},
			want: []string{"SENDLOOP_API_KEY=k", "TERM=dumb", noExitSleep, asCLI}},
		{name: "only the prefix counts, in any case", env: []string{"MY_GITHUB_TOKEN=x", "github_actions=true", "GITHUB=1"},
			want: []string{"MY_GITHUB_TOKEN=x", "GITHUB=1", noExitSleep, asCLI}},
		{name: "a GORACE given is kept", env: []string{"TERM=dumb", keepExitSleep}, want: []string{"TERM=dumb", keepExitSleep, asCLI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := childEnv(tt.env)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Fatalf("childEnv(%q) = %#v, want %#v", tt.env, got, tt.want)
			}
		})
	}
}

func TestDurationFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Duration
		want string
	}{
		{7 * 24 * time.Hour, "168h"},
		{90 * time.Minute, "1h30m"},
		{5 * time.Minute, "5m"},
		{10 * time.Second, "10s"},
		{90 * time.Second, "1m30s"},
		{500 * time.Millisecond, "500ms"},
		{0, "0s"},
	}
	for _, tt := range tests {
		d := durationFlag(tt.in)
		assert.Equal(t, tt.want, d.String(), "%v", tt.in)
		var back durationFlag
		require.NoError(t, back.Set(d.String()))
		assert.Equal(t, d, back, "%s reads back", d.String())
	}
	var d durationFlag
	require.Error(t, d.Set("7d"), "no unit of days: time.ParseDuration's forms only")
}

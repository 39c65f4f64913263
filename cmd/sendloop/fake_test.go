package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeProcess is a running `sendloop fake`.
type fakeProcess struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{} // closed once the process is waited for
	err    error         // Wait's error, set before exited is closed
	env    []string      // the settings it printed, as environment variables
	lines  []string      // the settings as printed, one line each
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startFake starts `sendloop fake` with args and reads the settings it prints.
func startFake(t *testing.T, jsonOut bool, args ...string) *fakeProcess {
	t.Helper()
	var all []string
	if jsonOut {
		all = append(all, "--json")
	}
	all = append(all, "fake", "--addr", "127.0.0.1:0", "--smtp-addr", "127.0.0.1:0")
	cmd := exec.Command(binary, append(all, args...)...)
	cmd.Env = childEnv([]string{"TMPDIR=" + t.TempDir()})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProcess{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		checkNoRace(t, p.stderr.String())
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	timeout := time.After(30 * time.Second)
	want := 10
	if jsonOut {
		want = 1
	}
	for len(p.env) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the fake stopped before printing its settings; stderr:\n%s", p.stderr)
			}
			p.lines = append(p.lines, line)
			if jsonOut {
				var settings map[string]string
				if err := json.Unmarshal([]byte(line), &settings); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				for k, v := range settings {
					p.env = append(p.env, k+"="+v)
				}
				continue
			}
			kv, ok := strings.CutPrefix(line, "export ")
			k, v, ok2 := strings.Cut(kv, "=")
			if !ok || !ok2 || !strings.HasPrefix(v, "'") || !strings.HasSuffix(v, "'") {
				t.Fatalf("not an export line: %q", line)
			}
			p.env = append(p.env, k+"="+strings.Trim(v, "'"))
		case <-timeout:
			t.Fatalf("no settings after 30s; stderr:\n%s", p.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
	return p
}

func (p *fakeProcess) get(key string) string {
	for _, kv := range p.env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// stop sends SIGTERM and returns the exit code.
func (p *fakeProcess) stop(t *testing.T) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		var exitErr *exec.ExitError
		if errors.As(p.err, &exitErr) {
			return exitErr.ExitCode()
		}
		if p.err != nil {
			t.Fatal(p.err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatal("the fake did not stop on SIGTERM")
	}
	return -1
}

func TestFakeCommand(t *testing.T) {
	t.Parallel()
	p := startFake(t, false)
	for _, key := range []string{envBaseURL, envAPIKey, envSMTPHost, envSMTPPort, envSMTPUser, envSMTPPassword, envSMTPCAFile} {
		if p.get(key) == "" {
			t.Errorf("%s not printed", key)
		}
	}
	caFile := p.get(envSMTPCAFile)

	r := invocation{args: []string{"lists"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"Demo"}, nil)
	r = invocation{args: []string{"send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "Local", "--text", "-"},
		env: p.env, stdin: "hello"}.run(t)
	expect(t, r, exitOK, []string{`Sent "Local"`}, nil)

	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), `relay: message from a@example.com to b@example.net: "Local"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the fake did not log the message; stderr:\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	stderr := p.stderr.String()
	for _, want := range []string{"fake serving the API at http://127.0.0.1:", "api: POST list.getlist", "fake stopped"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(caFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary CA file outlived the fake: %v", err)
	}
}

func TestFakeCommandJSONEmpty(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	p := startFake(t, true, "--empty", "--ca-file", caFile)
	if p.get(envSMTPCAFile) != caFile {
		t.Errorf("CA file %q, want %q", p.get(envSMTPCAFile), caFile)
	}
	r := invocation{args: []string{"--json", "lists"}, env: p.env}.run(t)
	expect(t, r, exitOK, nil, nil)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("an --empty fake has lists: %s", r.stdout)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	if _, err := os.Stat(caFile); err != nil {
		t.Errorf("--ca-file was not kept: %v", err)
	}
}

func TestFakeCommandAddressInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := invocation{args: []string{"fake", "--addr", ln.Addr().String()}, env: []string{}}.run(t)
	expect(t, r, exitFailure, nil, []string{"address already in use"})
}

// TestFakeCommandLatency: --latency holds every answer back, while the demo data is
// seeded as fast as ever.
func TestFakeCommandLatency(t *testing.T) {
	t.Parallel()
	const latency = 300 * time.Millisecond
	p := startFake(t, false, "--latency", "300ms,10ms")
	// lists makes one call (list.getlist); without the latency it takes a few milliseconds.
	start := time.Now()
	r := invocation{args: []string{"lists"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"Demo"}, nil)
	if took := time.Since(start); took < latency {
		t.Errorf("lists took %v against a fake with --latency 300ms", took)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit code %d after SIGTERM", code)
	}
}

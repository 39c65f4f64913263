package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestBar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		done, total int64
		want        string
	}{
		{0, 0, ""},
		{5, 0, ""},
		{0, 100, "[........................]   0% "},
		{50, 100, "[############............]  50% "},
		{100, 100, "[########################] 100% "},
		{150, 100, "[########################] 100% "},
		{-1, 100, "[........................]   0% "},
	}
	for _, tt := range tests {
		if got := bar(tt.done, tt.total); got != tt.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
	if got := percent(1, 3); got != "33%" {
		t.Errorf("percent(1, 3) = %q", got)
	}
	if got := percent(1, 0); got != "?" {
		t.Errorf("percent(1, 0) = %q", got)
	}
}

func label(done, total int64) string { return fmt.Sprintf("step %d/%d", done, total) }

// waitFor polls cond for a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// redrawing reports whether p has a redraw loop running: the only thing that draws without
// being called.
func redrawing(p *progress) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop != nil
}

// TestProgressOffTerminal checks that nothing is drawn where stderr is not a terminal.
func TestProgressOffTerminal(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	p := newProgress(&out, false, false)
	p.interval = time.Millisecond
	p.start(10, label)
	p.set(4)
	// No redraw loop runs, so nothing can be drawn later: checked, not waited for.
	if redrawing(p) {
		t.Error("off a terminal, start began redrawing")
	}
	fmt.Fprintf(p, "a message\n")
	p.finish()
	if out.String() != "a message\n" {
		t.Errorf("off a terminal: %q", out.String())
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line  string
		width int
		want  string
	}{
		{"short", 80, "short"},
		{"exactly nine", 13, "exactly nine"},
		{"exactly nine", 12, "exactly ni…"},
		{"ééééé", 4, "éé…"},
		{strings.Repeat("x", 100), 0, strings.Repeat("x", 78) + "…"},
		{"abc", 1, "…"},
	}
	for _, tt := range tests {
		if got := fit(tt.line, tt.width); got != tt.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tt.line, tt.width, got, tt.want)
		}
	}
}

func TestProgressTerminal(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	p := newProgress(&out, true, false)
	p.interval = time.Millisecond
	p.width = func() int { return 80 }
	p.start(4, label)
	p.set(2)
	waitFor(t, "a bar", func() bool { return strings.Contains(out.String(), "[############............]  50% step 2/4") })
	fmt.Fprintf(p, "a message\n")
	p.finish()
	got := out.String()
	if !strings.Contains(got, "\r\x1b[Ka message\n") {
		t.Errorf("the message was not put on a clean line: %q", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[K") && !strings.HasSuffix(got, "a message\n") {
		t.Errorf("the bar was not erased at the end: %q", got)
	}
}

func TestProgressQuiet(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	p := newProgress(&out, true, true)
	p.interval = time.Millisecond
	p.start(4, label)
	p.set(2)
	if redrawing(p) {
		t.Error("with --quiet, start began redrawing")
	}
	p.finish()
	if out.String() != "" {
		t.Errorf("--quiet drew %q", out.String())
	}
}

// TestIsTerminal checks that /dev/null (a character device), a pipe and TERM=dumb get no
// progress; a real terminal is checked in progress_linux_test.go.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/null")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := func(string) string { return "xterm" }
	if isTerminal(null, env) {
		t.Error("/dev/null is no terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w, env) {
		t.Error("a pipe is no terminal")
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// openPTY opens a pseudo-terminal pair, or skips the test where there is none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		master.Close()
		t.Skipf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		master.Close()
		t.Skipf("ptsname: %v", errno)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Skipf("opening the terminal: %v", err)
	}
	return master, slave
}

// TestSyncProgressOnTerminal runs a sync whose stderr is a terminal: it draws a progress bar
// and erases it, and its stdout (a pipe) holds the plain table.
func TestSyncProgressOnTerminal(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	defer master.Close()
	f := newFake(t)
	var b strings.Builder
	b.WriteString("EmailAddress\n")
	for i := 0; i < 40000; i++ {
		b.WriteString(emailN(i) + "\n")
	}
	csvPath := writeFile(t, t.TempDir(), "big.csv", b.String())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "sync", "--list", "1", "--csv", csvPath, "--batch-size", "200", "--concurrency", "1")
	cmd.Env = childEnv(f.env)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, slave
	terminal := make(chan string)
	go func() {
		out, _ := io.ReadAll(master) // ends with EIO once the terminal is closed on both sides
		terminal <- string(out)
	}()
	err := cmd.Run()
	slave.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var tty string
	select {
	case tty = <-terminal:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal did not close")
	}
	checkNoRace(t, tty)
	if !strings.Contains(tty, "\r\x1b[K[") || !strings.Contains(tty, "applying: ") {
		t.Errorf("no progress bar on the terminal: %q", tty)
	}
	if strings.Contains(stdout.String(), "\x1b") || !regexp.MustCompile(`\nadd +40000 +40000 +0\n`).MatchString(stdout.String()) {
		t.Errorf("stdout:\n%q", stdout.String())
	}
}

// TestIsTerminalPTY checks a real terminal, and TERM=dumb on it.
func TestIsTerminalPTY(t *testing.T) {
	t.Parallel()
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	if !isTerminal(slave, func(string) string { return "xterm-256color" }) {
		t.Error("a pseudo-terminal is a terminal")
	}
	if isTerminal(slave, func(string) string { return "dumb" }) {
		t.Error("TERM=dumb draws no progress")
	}
}

// runOnTerminal runs the binary with stderr on a pseudo-terminal and returns stdout and what
// the terminal showed.
func runOnTerminal(t *testing.T, env []string, args ...string) (stdout, tty string) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = childEnv(env)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, slave
	terminal := make(chan string)
	go func() {
		b, _ := io.ReadAll(master)
		terminal <- string(b)
	}()
	err := cmd.Run()
	slave.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	select {
	case tty = <-terminal:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal did not close")
	}
	checkNoRace(t, tty)
	return out.String(), tty
}

// TestExportProgressOnTerminal exports a list big enough to take several pages: the
// terminal shows the progress, TERM=dumb shows none, and stdout holds the data alone.
func TestExportProgressOnTerminal(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var b strings.Builder
	b.WriteString("EmailAddress\n")
	for i := 0; i < 3000; i++ {
		b.WriteString(emailN(i) + "\n")
	}
	csvPath := writeFile(t, t.TempDir(), "big.csv", b.String())
	if r := f.sendloop(t, "--quiet", "sync", "--list", "1", "--csv", csvPath); r.code != exitOK {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	// Slow pages (a page holds at most 50) keep the export on screen for the redraws.
	f.srv.InjectFault("subscriber.browse", sendlooptest.Fault{Times: 10, Delay: 50 * time.Millisecond})
	stdout, tty := runOnTerminal(t, append([]string{"TERM=xterm"}, f.env...), "export", "--list", "1")
	if !strings.Contains(tty, "\r\x1b[Kexporting list 1: ") || !strings.Contains(tty, "exported 3003 subscribers") {
		t.Errorf("no progress on the terminal: %q", tty)
	}
	if strings.Contains(stdout, "\x1b") || strings.Count(stdout, "\n") != 3004 {
		t.Errorf("stdout holds %d lines", strings.Count(stdout, "\n"))
	}
	_, tty = runOnTerminal(t, append([]string{"TERM=dumb"}, f.env...), "export", "--list", "1")
	if strings.Contains(tty, "\x1b") || !strings.Contains(tty, "exported 3003 subscribers") {
		t.Errorf("TERM=dumb: %q", tty)
	}
}

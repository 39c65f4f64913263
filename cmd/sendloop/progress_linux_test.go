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
	cmd.Env = f.env
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
	if !strings.Contains(tty, "\r\x1b[K[") || !strings.Contains(tty, "applying: ") {
		t.Errorf("no progress bar on the terminal: %q", tty)
	}
	if strings.Contains(stdout.String(), "\x1b") || !regexp.MustCompile(`\nadd +40000 +40000 +0\n`).MatchString(stdout.String()) {
		t.Errorf("stdout:\n%q", stdout.String())
	}
}

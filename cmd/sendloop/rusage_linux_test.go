package main

import (
	"os"
	"syscall"
)

// maxRSS returns the peak resident set size of an exited process, in KiB.
func maxRSS(ps *os.ProcessState) int64 { return ps.SysUsage().(*syscall.Rusage).Maxrss }

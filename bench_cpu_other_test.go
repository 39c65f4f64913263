//go:build !unix

package sendloop_test

// cpuTime is unknown here: the cpu-ns/row metric then reads 0.
func cpuTime() int64 { return 0 }

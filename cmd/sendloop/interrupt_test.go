package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestFailAfterSignal: a failure after a signal exits with the signal's code, and with
// --json its error object says that code and the kind "interrupted".
func TestFailAfterSignal(t *testing.T) {
	t.Parallel()
	cancelled := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	tests := []struct {
		name     string
		ctx      context.Context
		err      error
		code     int
		wantJSON string
	}{
		{"SIGINT", cancelled(&interruptedError{syscall.SIGINT}), errors.New("interrupted (SIGINT)"), exitInterrupt, `"kind":"interrupted","exit_code":130`},
		{"SIGTERM", cancelled(&interruptedError{syscall.SIGTERM}), errors.New("1 row was rejected"), exitTerminate, `"kind":"interrupted","exit_code":143`},
		{"cancelled, no signal", cancelled(context.Canceled), errors.New("x"), exitFailure, `"kind":"failure","exit_code":1`},
		{"no signal", context.Background(), errors.New("x"), exitFailure, `"kind":"failure","exit_code":1`},
		{"usage error after a signal", cancelled(&interruptedError{syscall.SIGINT}), usagef("sync", "bad"), exitUsage, `"kind":"usage","exit_code":2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, json := range []bool{false, true} {
				var stderr bytes.Buffer
				a := &app{env: &env{stderr: &stderr}, json: json, ctx: tt.ctx}
				if code := a.fail(tt.err); code != tt.code {
					t.Errorf("json=%t: exit code %d, want %d", json, code, tt.code)
				}
				if json && !strings.Contains(stderr.String(), tt.wantJSON) {
					t.Errorf("stderr %s, want it to hold %s", stderr.String(), tt.wantJSON)
				}
			}
		})
	}
}

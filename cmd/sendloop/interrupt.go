package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes of an interrupted run: 128 plus the signal's number, as shells report it.
const (
	exitInterrupt = 130 // SIGINT
	exitTerminate = 143 // SIGTERM
)

// interruptedError is the cause of the context that the first SIGINT or SIGTERM cancels.
type interruptedError struct{ sig os.Signal }

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted (%s)", signalName(e.sig))
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

type hardStopKey struct{}

// notifyInterrupts starts following SIGINT and SIGTERM for one run; stop ends it. The first
// signal cancels ctx, with an *interruptedError as its cause (a command stops starting work
// and finishes what is in flight), the second closes hard (what is in flight is cancelled
// too).
func notifyInterrupts() (ctx context.Context, stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	hard := make(chan struct{})
	ctx = context.WithValue(ctx, hardStopKey{}, (<-chan struct{})(hard))
	done := make(chan struct{})
	go func() {
		for n := 1; ; n++ {
			select {
			case sig := <-ch:
				switch n {
				case 1:
					cancel(&interruptedError{sig})
				case 2:
					close(hard)
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruptedCode turns the code of a run that failed after a signal into 130 (SIGINT) or
// 143 (SIGTERM), and reports whether it did. A command that stops cleanly on a signal (fake)
// keeps its 0, and a usage error its 2.
func interruptedCode(ctx context.Context, code int) (int, bool) {
	var ie *interruptedError
	if code != exitFailure || ctx == nil || !errors.As(context.Cause(ctx), &ie) {
		return code, false
	}
	if ie.sig == syscall.SIGTERM {
		return exitTerminate, true
	}
	return exitInterrupt, true
}

// errSecondSignal is the cause of the work context after a second signal.
var errSecondSignal = errors.New("interrupted a second time")

// secondSignal returns the context for the calls a command has in flight when ctx ends
// (its grace period is the command's to apply): it keeps ctx's values, outlives ctx, and
// is cancelled at once by a second signal. Call cancel when done.
func secondSignal(ctx context.Context) (work context.Context, cancel func()) {
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	hard, _ := ctx.Value(hardStopKey{}).(<-chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case <-hard:
			cancelWork(errSecondSignal)
		case <-done:
		}
	}()
	return work, func() {
		close(done)
		cancelWork(context.Canceled)
	}
}

package job

import (
	"context"
	"errors"
	"time"
)

// Stop is how a job ends its work in flight once its context has ended. The end of the
// context given to a job's call means "start no new work"; the requests already sent
// then run for Grace, or until Work ends, whichever comes first. The zero Stop ends them
// with the context.
type Stop struct {
	// Grace is how long the work in flight may run once the call's context ends.
	Grace time.Duration
	// Work, when set, ends the work in flight at once (a second Ctrl-C), grace or not.
	// Its values are not used: the requests carry the call's context's values.
	Work context.Context
}

// InFlight returns the context for work in flight under ctx: it carries ctx's values and
// ends Grace after ctx ends, when Work ends, or when cancel is called. cancel must be
// called; it releases the hooks and timers InFlight set.
func (s Stop) InFlight(ctx context.Context) (inFlight context.Context, cancel context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	if s.Grace <= 0 && s.Work == nil {
		return context.WithCancel(ctx)
	}
	inFlight, cancelCause := context.WithCancelCause(base)
	stop := context.AfterFunc(ctx, func() {
		if s.Grace <= 0 {
			cancelCause(context.Cause(ctx))
			return
		}
		t := time.AfterFunc(s.Grace, func() { cancelCause(ErrGraceOver) })
		context.AfterFunc(inFlight, func() { t.Stop() })
	})
	var stopWork func() bool = func() bool { return false }
	if s.Work != nil {
		stopWork = context.AfterFunc(s.Work, func() { cancelCause(context.Cause(s.Work)) })
	}
	return inFlight, func() {
		stop()
		stopWork()
		cancelCause(context.Canceled)
	}
}

// ErrGraceOver is the cause of an in-flight context that ended because the grace period
// after the call's context ended was over.
var ErrGraceOver = errors.New("job: the grace period after the interruption ended")

package job

import "context"

// Phase names a phase of a job, for an Observer: Job is the job ("send", "sync") and Name
// the phase ("send"; "plan", "apply"). Neither ever holds data of the rows.
type Phase struct {
	// Job is the job: "send", "sync".
	Job string
	// Name is the phase: "send"; "plan", "apply".
	Name string
}

// Observer watches the phases of a job, for tracing, metrics or logs (package otel's
// Observer is one). A job calls PhaseStarted as a phase begins, RowsDone as rows are done
// (a batch, a chunk, every few hundred rows of a send) with their fates, and PhaseEnded once
// as the phase ends, with the fates of all its rows and the error that ended it, if any.
// The calls come from the goroutine that runs the phase, in that order; an Observer is
// given counts and names only, never an address or a value.
type Observer interface {
	// PhaseStarted returns the phase's context, which the phase's calls run under (a
	// tracer puts its span there). It must not return nil.
	PhaseStarted(ctx context.Context, p Phase) context.Context
	// RowsDone tells the fates of rows done since the last call.
	RowsDone(ctx context.Context, p Phase, done Tally)
	// PhaseEnded tells the end of the phase, with the fates of all its rows.
	PhaseEnded(ctx context.Context, p Phase, rows Tally, err error)
}

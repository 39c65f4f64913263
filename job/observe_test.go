package job_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-sendloop/sendloop/job"
)

// recorder is an Observer that keeps what it is told, as a test of a job would.
type recorder struct{ events []string }

func (r *recorder) PhaseStarted(ctx context.Context, p job.Phase) context.Context {
	r.events = append(r.events, "start "+p.Job+" "+p.Name)
	return ctx
}

func (r *recorder) RowsDone(_ context.Context, p job.Phase, t job.Tally) {
	r.events = append(r.events, "rows "+p.Name)
}

func (r *recorder) PhaseEnded(_ context.Context, p job.Phase, t job.Tally, err error) {
	r.events = append(r.events, "end "+p.Name)
}

func TestObserverIsSmall(t *testing.T) {
	t.Parallel()
	var obs job.Observer = &recorder{}
	p := job.Phase{Job: "sync", Name: "apply"}
	ctx := obs.PhaseStarted(context.Background(), p)
	obs.RowsDone(ctx, p, job.Tally{Done: 2})
	obs.PhaseEnded(ctx, p, job.Tally{Done: 2}, nil)
	assert.Equal(t, []string{"start sync apply", "rows apply", "end apply"}, obs.(*recorder).events)
}

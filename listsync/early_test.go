package listsync

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
)

// planSummary is what a plan decided, for comparing two plans of one source.
type planSummary struct {
	Counts Plan
	Events []string
}

func summarize(t *testing.T, pl *Plan) planSummary {
	t.Helper()
	s := planSummary{Counts: *pl}
	s.Counts.planner, s.Counts.job, s.Counts.state = nil, nil, nil
	for ev, err := range pl.Events(testContext(t), EventAdd|EventUpdate|EventReject) {
		require.NoError(t, err)
		line := ev.Kind.String() + " " + ev.Row.Raw + " " + ev.Reason
		if ev.Update != nil {
			for _, c := range ev.Update.Changes {
				line += " " + c.Header + "=" + c.To
			}
		}
		s.Events = append(s.Events, line)
	}
	return s
}

// A CSV file read by New's early reading is planned as one read once the list is known:
// the reading is kept when the list maps the columns the header guessed, dropped when not,
// and not started when the header alone maps nothing.
func TestEarlyReadPlansAsALateRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		csv    string
		opts   HeaderOptions
		unsub  bool
		kept   bool // the early reading is used
		reject bool // New's mapping fails
	}{
		{"the export's columns", "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nnew@example.com,New,free\nbad,X,Y\nANN@example.com,A,B\n", HeaderOptions{}, true, true, false},
		{"columns in another order, by key", "CustomField2,E-mail,First name\npro,ann@example.com,Ann\nteam,bob@example.com,\n", HeaderOptions{}, false, true, false},
		{"a status column", "EmailAddress,Plan,SubscriptionStatus\nann@example.com,gold,Subscribed\nbob@example.com,free,Unsubscribed\nnew@example.com,free,Subscribed\n", HeaderOptions{}, true, true, false},
		{"spaces kept", "EmailAddress,Plan\nann@example.com, pro \n", HeaderOptions{KeepSpaces: true}, false, true, false},
		{"a column the list does not have, ignored", "EmailAddress,Plan,Notes\nann@example.com,gold,x\n", HeaderOptions{IgnoreUnknown: true}, false, false, false},
		{"a column the list does not have", "EmailAddress,Plan,Notes\nann@example.com,gold,x\n", HeaderOptions{}, false, false, true},
		{"a column mapped explicitly", "Mail,Tier\nann@example.com,gold\n", HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "Mail", Target: "EmailAddress"}, {Source: "Tier", Target: "Plan"}}}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t)
			path := filepath.Join(t.TempDir(), "rows.csv")
			require.NoError(t, os.WriteFile(path, []byte(tt.csv), 0o644))
			ctx := testContext(t)
			plan := func(early bool) planSummary {
				src, err := OpenCSV(path, CSVOptions{Header: tt.opts})
				require.NoError(t, err)
				job, err := New(ctx, c, 1, src, Options{UnsubscribeMissing: tt.unsub, TempDir: t.TempDir()})
				if tt.reject {
					var herr *HeaderError
					require.ErrorAs(t, err, &herr)
					return planSummary{}
				}
				require.NoError(t, err)
				assert.Equal(t, tt.kept, job.early != nil, "the early reading kept")
				if !early {
					job.takeEarly().abandon()
				}
				pl, err := job.Plan(ctx)
				require.NoError(t, err)
				defer pl.Close()
				return summarize(t, pl)
			}
			assert.Equal(t, plan(false), plan(true))
		})
	}
}

// The early reading outlives New's context, which bounds New only, and ends with the
// plan's.
func TestEarlyReadContexts(t *testing.T) {
	t.Parallel()
	_, c := demoList(t)
	path := filepath.Join(t.TempDir(), "rows.csv")
	content := "EmailAddress,Plan\n"
	for i := range 3 * progressEvery {
		content += emailN(i) + ",free\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	newJob := func(ctx context.Context) *Job {
		src, err := OpenCSV(path, CSVOptions{})
		require.NoError(t, err)
		job, err := New(ctx, c, 1, src, Options{TempDir: t.TempDir()})
		require.NoError(t, err)
		require.NotNil(t, job.early)
		return job
	}

	t.Run("New's context ended", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(testContext(t))
		job := newJob(ctx)
		cancel()
		pl, err := job.Plan(testContext(t))
		require.NoError(t, err)
		defer pl.Close()
		assert.Equal(t, 3*progressEvery, pl.Adds)
	})
	t.Run("the plan's context ended", func(t *testing.T) {
		t.Parallel()
		job := newJob(testContext(t))
		ctx, cancel := context.WithCancelCause(testContext(t))
		stopped := sendloop.ErrOutcomeUnknown // any cause, told apart from context.Canceled
		cancel(stopped)
		_, err := job.Plan(ctx)
		require.ErrorIs(t, err, stopped)
		pl, err := job.Plan(testContext(t)) // the next plan reads the file itself
		require.NoError(t, err)
		defer pl.Close()
		assert.Equal(t, 3*progressEvery, pl.Adds)
	})
	t.Run("list.get fails", func(t *testing.T) {
		t.Parallel()
		src, err := OpenCSV(path, CSVOptions{})
		require.NoError(t, err)
		_, err = New(testContext(t), c, 999, src, Options{TempDir: t.TempDir()})
		require.ErrorIs(t, err, sendloop.ErrListNotFound)
	})
}

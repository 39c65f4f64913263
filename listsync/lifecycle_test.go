package listsync

import (
	"net/http"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/job"
)

// TestNewDoesNoIOAndPlanLeavesNothingRunning is the lifecycle rule for the sync: New makes
// no call and starts no goroutine; Plan starts its reads at once and every one of them has
// ended when it returns, so that after Plan.Close and Job.Close (and the client's idle
// connections) the goroutines are as before. Not parallel: it counts the process's
// goroutines.
func TestNewDoesNoIOAndPlanLeavesNothingRunning(t *testing.T) {
	content := "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,team\nnew@example.com,free\n"
	tests := []struct {
		name  string
		src   func(t *testing.T) Source
		state bool
	}{
		{name: "a CSV file", src: func(t *testing.T) Source { return csvSource(t, content, CSVOptions{}) }},
		{name: "a CSV file whose header maps otherwise", src: func(t *testing.T) Source {
			return csvSource(t, "EmailAddress,Colour,Plan\nann@example.com,red,pro\n", CSVOptions{Header: HeaderOptions{IgnoreUnknown: true}})
		}},
		{name: "rows", src: func(*testing.T) Source { return Rows([]Row{{Email: "ann@example.com"}, {Email: "new@example.com"}}) }},
		{name: "a state", state: true, src: func(t *testing.T) Source { return csvSource(t, content, CSVOptions{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := demoList(t)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(&http.Client{Transport: tr}))
			require.NoError(t, err)
			opts := Options{TempDir: t.TempDir(), UnsubscribeMissing: true}
			if tt.state {
				so := DefaultStateOptions(filepath.Join(t.TempDir(), "state"))
				opts.State = &so
			}
			src := tt.src(t)
			for run := range 2 { // with a state, the second run plans from it
				before, calls := runtime.NumGoroutine(), len(srv.Requests())
				jb, err := New(testContext(t), c, 1, src, opts)
				require.NoError(t, err)
				assert.Equal(t, calls, len(srv.Requests()), "New made no call")
				assert.LessOrEqual(t, runtime.NumGoroutine(), before, "New started no goroutine")

				pl, err := jb.Plan(testContext(t))
				require.NoError(t, err)
				assert.Greater(t, len(srv.Requests()), calls, "Plan made the calls")
				if run == 1 && tt.state {
					require.True(t, pl.State.Used, pl.State.Reason)
				}
				_, err = pl.Apply(testContext(t), ApplyOptions{MaxUnsubscribe: job.Unlimited()})
				require.NoError(t, err)
				require.NoError(t, pl.Close())
				require.NoError(t, jb.Close())
				require.NoError(t, jb.Close(), "twice")
				_, err = jb.Plan(testContext(t))
				require.Error(t, err, "a closed Job plans no more")
				tr.CloseIdleConnections()
				assert.LessOrEqual(t, testkit.GoroutinesDownTo(before), before, "a goroutine outlived Plan, Apply or Close")
			}
		})
	}
}

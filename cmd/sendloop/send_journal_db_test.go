package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// runner is a CI runner of its own: a working directory, a temporary directory and a copy
// of the recipients, nothing shared with another runner but the database.
type runner struct{ dir, csv, text string }

func newRunner(t *testing.T, rows int) runner {
	dir := t.TempDir()
	return runner{dir: dir, csv: writeFile(t, dir, "list.csv", recipientRows(rows)), text: writeFile(t, dir, "body.txt", "Hi")}
}

func (r runner) cmd(env []string, journal string) *exec.Cmd {
	cmd := exec.Command(binary, "--json", "send", "--from", "news@example.com", "--subject", "S", "--text", r.text,
		"--no-unsubscribe", "--recipients", r.csv, "--journal", journal, "--concurrency", "2")
	cmd.Dir = r.dir
	cmd.Env = childEnv(slices.Concat(env, []string{"TMPDIR=" + r.dir}))
	return cmd
}

// TestSendJournalInTheDatabaseOutlivesTheRunner: a send killed with kill -9 on runner A is
// rerun on runner B, which shares only SENDLOOP_JOURNAL_URL: no row is delivered twice, and
// every row not delivered is listed as unknown (at most the runs' concurrency); two runs
// started at once on one journal deliver every row once.
func TestSendJournalInTheDatabaseOutlivesTheRunner(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	t.Run("kill -9 on runner A, rerun on runner B", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		relay, env := relayEnv(t, f)
		relay.InjectFault(sendlooptest.RelayFault{Command: "DATA", Delay: 3 * time.Millisecond, Times: 1 << 30})
		env = slices.Concat(env, []string{envJournalURL + "=" + dbURL})
		const rows = 300
		a := newRunner(t, rows)
		cmd := a.cmd(env, "killed-send")
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// Killed once the relay has some of its messages; the minute only bounds a failure.
		started := testkit.Eventually(func() bool { return len(relay.Messages()) >= 20 }, time.Minute)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		require.True(t, started, "runner A sent nothing in a minute")
		assert.NoFileExists(t, filepath.Join(a.dir, "killed-send"), "with the database, no journal file is written")

		b := newRunner(t, rows)
		r := invocation{args: []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", b.text,
			"--no-unsubscribe", "--recipients", b.csv, "--journal", "killed-send", "--concurrency", "2"},
			env: slices.Concat(env, []string{"TMPDIR=" + b.dir})}.run(t)
		rep := decodeListReport(t, r.stdout)
		got := map[string]int{}
		for _, m := range relay.Messages() {
			got[m.EnvelopeTo[0]]++
		}
		unknown := map[string]bool{}
		for _, u := range rep.UnknownRows {
			unknown[u.Email] = true
		}
		for i := range rows {
			addr := fmt.Sprintf("user%d@example.net", i)
			assert.LessOrEqual(t, got[addr], 1, "%s delivered twice", addr)
			if got[addr] == 0 {
				assert.True(t, unknown[addr], "%s got no message and runner B does not name it unknown", addr)
			}
		}
		assert.LessOrEqual(t, len(unknown), 2+1, "at most the killed run's messages in flight are unknown")
		assert.Equal(t, rows, rep.Rows)
		assert.NotContains(t, r.stdout+r.stderr, "postgres://", "the database URL never shows")
	})
	t.Run("two runs at once", func(t *testing.T) {
		t.Parallel()
		f := newFake(t)
		relay, env := relayEnv(t, f)
		env = slices.Concat(env, []string{envJournalURL + "=" + dbURL})
		const rows = 200
		var wg sync.WaitGroup
		outs := make([]string, 2)
		for i := range outs {
			r := newRunner(t, rows)
			wg.Go(func() {
				cmd := r.cmd(env, "twin-send")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				outs[i] = string(out) + stderr.String()
				// A key the other run holds in flight reads as unknown here, as a killed
				// run's would: exit 1 names it; the other run delivers it.
				if err != nil {
					var exit *exec.ExitError
					assert.ErrorAs(t, err, &exit, "%s", outs[i])
					assert.Equal(t, exitFailure, exit.ExitCode(), "%s", outs[i])
				}
			})
		}
		wg.Wait()
		got := map[string]int{}
		for _, m := range relay.Messages() {
			got[m.EnvelopeTo[0]]++
		}
		assert.Len(t, got, rows, "every row delivered")
		for addr, n := range got {
			assert.Equal(t, 1, n, "%s delivered %d times", addr, n)
		}
	})
}

// TestSendJournalURLPasswordNeverShows: a database that refuses the journal's URL is a
// configuration error that names the variable, never the password.
func TestSendJournalURLPasswordNeverShows(t *testing.T) {
	t.Parallel()
	const password = "pw-marker-93jd8"
	f := newFake(t)
	_, env := relayEnv(t, f)
	r := newRunner(t, 3)
	for _, url := range []string{
		"postgres://sendloop:" + password + "@127.0.0.1:1/none?sslmode=disable&connect_timeout=2",
		"postgres://sendloop:" + password + "@[::1",
		"host=127.0.0.1 port=1 password=" + password + " connect_timeout=2",
	} {
		res := invocation{args: []string{"send", "--from", "news@example.com", "--subject", "S", "--text", r.text,
			"--no-unsubscribe", "--recipients", r.csv, "--journal", "j"}, env: slices.Concat(env, []string{envJournalURL + "=" + url})}.run(t)
		assert.Equal(t, exitUsage, res.code, "%s", res.stderr)
		assert.Contains(t, res.stderr, envJournalURL)
		assert.NotContains(t, res.stdout+res.stderr, password)
	}
}

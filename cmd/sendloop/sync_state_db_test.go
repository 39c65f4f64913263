package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/listsync/pgstate"
)

// syncRunner is a CI runner of its own for a nightly sync: a working directory, a
// temporary directory and that night's copy of the source, nothing shared with another
// runner but the database.
type syncRunner struct{ dir, csv string }

func newSyncRunner(t *testing.T, csv string) syncRunner {
	dir := t.TempDir()
	return syncRunner{dir: dir, csv: writeFile(t, dir, "members.csv", csv)}
}

// run syncs list 1 from the runner's source with --state name, in a process of its own.
func (r syncRunner) run(t *testing.T, env []string, name string) result {
	t.Helper()
	cmd := exec.Command(binary, "--json", "sync", "--list", "1", "--csv", r.csv, "--state", name)
	cmd.Dir = r.dir
	cmd.Env = childEnv(slices.Concat(env, []string{"TMPDIR=" + r.dir}))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !assert.ErrorAs(t, err, &exit) {
		return result{code: -1, stderr: err.Error()}
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

type syncStateDoc struct {
	State struct {
		Used   bool   `json:"used"`
		Reason string `json:"reason"`
	} `json:"state"`
}

func decodeSyncState(t *testing.T, r result) syncStateDoc {
	t.Helper()
	var d syncStateDoc
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), "%s\n%s", r.stdout, r.stderr)
	return d
}

// TestSyncStateInTheDatabaseAcrossRunners: a nightly sync whose state is in the database
// SENDLOOP_STATE_URL names runs each night on a fresh runner (its own directories, nothing
// kept): the second night plans from the first night's state, reads no member and costs
// only the changes; no runner writes a state file; a run while another holds the state is
// refused as the file's lock refuses it.
func TestSyncStateInTheDatabaseAcrossRunners(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	f := newFake(t)
	env := slices.Concat(f.env, []string{envStateURL + "=" + dbURL})
	// 500 members after the first night: a full run reads them in 5 pages or more.
	var rows strings.Builder
	for i := range 500 {
		fmt.Fprintf(&rows, "user%d@example.net,free\n", i)
	}
	monday := "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,free\n" + rows.String()
	tuesday := "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,pro\ndan@example.com,free\n" + rows.String()

	nights := []struct {
		name    string
		csv     string
		used    bool
		reason  string
		browsed bool
	}{
		{name: "first night: a full run writes the state", csv: monday, reason: "no state yet", browsed: true},
		{name: "second night, another runner: only the changes", csv: tuesday, used: true},
		{name: "third night, another runner: an unchanged list", csv: tuesday, used: true},
	}
	calls := make([]int, len(nights))
	for i, n := range nights { // in order: each night reads the state the one before wrote
		runner := newSyncRunner(t, n.csv)
		before := len(f.srv.Requests())
		r := runner.run(t, env, "list-1-nightly")
		expect(t, r, exitOK, nil, nil)
		d := decodeSyncState(t, r)
		assert.Equal(t, n.used, d.State.Used, "%s: %s", n.name, d.State.Reason)
		assert.Equal(t, n.reason, d.State.Reason, n.name)
		browsed := 0
		requests := f.srv.Requests()[before:]
		for _, req := range requests {
			if strings.EqualFold(req.Command, "subscriber.browse") {
				browsed++
			}
		}
		calls[i] = len(requests)
		assert.Equal(t, n.browsed, browsed > 0, "%s: subscriber.browse called %d times", n.name, browsed)
		entries, err := os.ReadDir(runner.dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.Contains(e.Name(), "list-1-nightly"), "%s: a file %s on the runner", n.name, e.Name())
		}
		assert.NotContains(t, r.stdout+r.stderr, "postgres://", "the database URL never shows")
	}
	t.Logf("calls by night: %v", calls)
	// The second night: list.get, list.getlist and the activity chart (the drift), the
	// suppression reads, a subscriber.get of the new address, one import, and the update
	// with its read-back; never the members.
	assert.LessOrEqual(t, calls[1], 9, "the second night costs its changes: %v", calls)
	assert.LessOrEqual(t, calls[2], 5, "an unchanged list from the state: %v", calls)

	// A run on a runner while another holds the state.
	db, err := pgstate.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	held, err := pgstate.Open(context.Background(), db, "list-1-nightly")
	require.NoError(t, err)
	unlock, err := held.Lock(context.Background())
	require.NoError(t, err)
	defer unlock()
	r := newSyncRunner(t, tuesday).run(t, env, "list-1-nightly")
	expect(t, r, exitFailure, nil, []string{"state list-1-nightly: in use by another run"})
}

// TestSyncStateURLPasswordNeverShows: a database that refuses or cannot read the state's
// URL is a configuration error that names the variable, never the password; the file's
// state is not used instead.
func TestSyncStateURLPasswordNeverShows(t *testing.T) {
	t.Parallel()
	const password = "pw-marker-s7Ke2"
	f := newFake(t)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", "EmailAddress\nann@example.com\n")
	for _, url := range []string{
		"postgres://sendloop:" + password + "@127.0.0.1:1/none?sslmode=disable&connect_timeout=2",
		"postgres://sendloop:" + password + "@[::1",
		"host=127.0.0.1 port=1 password=" + password + " connect_timeout=2",
	} {
		for _, global := range [][]string{nil, {"--json"}, {"--verbose"}} {
			args := slices.Concat(global, []string{"sync", "--list", "1", "--csv", csvPath, "--state", filepath.Join(dir, "s")})
			r := invocation{args: args, env: slices.Concat(f.env, []string{envStateURL + "=" + url})}.run(t)
			assert.Equal(t, exitUsage, r.code, "%s", r.stderr)
			assert.Contains(t, r.stderr, envStateURL)
			assert.NotContains(t, r.stdout+r.stderr, password)
		}
	}
	assert.NoFileExists(t, filepath.Join(dir, "s"))
}

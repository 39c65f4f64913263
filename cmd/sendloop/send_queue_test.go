package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
)

// queueStatus is send --status --json.
type queueStatus struct {
	ID     string         `json:"id"`
	Rows   int            `json:"rows"`
	Fates  map[string]int `json:"fates"`
	Chunks struct {
		Done     int `json:"done"`
		InFlight int `json:"in_flight"`
		Left     int `json:"left"`
	} `json:"chunks"`
	Workers  int  `json:"workers"`
	Finished bool `json:"finished"`
}

// TestSendQueueAcrossWorkers: send --queue stores and enqueues a send (twice: nothing new
// the second time), two worker processes send it, send --status --wait follows it to its
// end, and SIGTERM stops the workers with exit code 0.
func TestSendQueueAcrossWorkers(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	f := newFake(t)
	relay, env := relayEnv(t, f)
	env = slices.Concat(env, []string{envJournalURL + "=" + dbURL})
	const rows = 120
	r := newRunner(t, rows)
	enqueue := []string{"--json", "send", "--from", "news@example.com", "--subject", "S", "--text", r.text,
		"--no-unsubscribe", "--recipients", r.csv, "--journal", "queued", "--queue", "--chunk-size", "25"}
	first := invocation{args: enqueue, env: env}.run(t)
	require.Equal(t, 0, first.code, first.stderr)
	var e struct {
		ID       string `json:"id"`
		Rows     int    `json:"rows"`
		Chunks   int    `json:"chunks"`
		Inserted int    `json:"inserted"`
	}
	require.NoError(t, json.Unmarshal([]byte(first.stdout), &e), first.stdout)
	assert.Equal(t, rows, e.Rows)
	assert.Equal(t, 5, e.Chunks)
	assert.Equal(t, 5, e.Inserted)
	again := invocation{args: enqueue, env: env}.run(t)
	require.Equal(t, 0, again.code, again.stderr)
	assert.Contains(t, again.stdout, `"inserted": 0`)
	assert.Contains(t, again.stdout, e.ID)

	st := invocation{args: []string{"--json", "send", "--status", e.ID}, env: env}.run(t)
	require.Equal(t, 0, st.code, st.stderr)
	var before queueStatus
	require.NoError(t, json.Unmarshal([]byte(st.stdout), &before), st.stdout)
	assert.Equal(t, rows, before.Fates["waiting"])
	assert.Equal(t, 5, before.Chunks.Left)

	var workers []*exec.Cmd
	for range 2 {
		cmd := exec.Command(binary, "worker", "--concurrency", "2")
		cmd.Env = childEnv(env)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		workers = append(workers, cmd)
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	done := invocation{args: []string{"--json", "send", "--status", e.ID, "--wait"}, env: env}.run(t)
	require.Equal(t, 0, done.code, done.stderr)
	var after queueStatus
	require.NoError(t, json.Unmarshal([]byte(done.stdout), &after), done.stdout)
	assert.True(t, after.Finished)
	assert.Equal(t, rows, after.Fates["done"], "%v", after.Fates)
	assert.Equal(t, 5, after.Chunks.Done)
	got := map[string]int{}
	for _, m := range relay.Messages() {
		got[m.EnvelopeTo[0]]++
	}
	assert.Len(t, got, rows)
	for i := range rows {
		assert.Equal(t, 1, got[fmt.Sprintf("user%d@example.net", i)])
	}
	// The bound only ends a failing run: a worker that ignores SIGTERM.
	bound, cancel := testkit.Context(40 * time.Second)
	defer cancel()
	for _, cmd := range workers {
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			assert.NoError(t, err, "a worker stopped by SIGTERM exits 0")
		case <-bound.Done():
			_ = cmd.Process.Kill()
			t.Fatal("a worker did not stop on SIGTERM")
		}
	}
}

// TestSendQueueRefusals: the queue's flags refuse what they cannot do.
func TestSendQueueRefusals(t *testing.T) {
	t.Parallel()
	r := newRunner(t, 3)
	base := []string{"send", "--from", "news@example.com", "--subject", "S", "--text", r.text, "--no-unsubscribe", "--recipients", r.csv}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no database", append(base, "--journal", "j", "--queue"), nil, "--queue needs SENDLOOP_JOURNAL_URL"},
		{"a shard", append(base, "--journal", "j", "--queue", "--shard", "1/2"), []string{envJournalURL + "=postgres://x@127.0.0.1:1/x"}, "--queue cannot take --shard"},
		{"no journal", append(base, "--queue"), []string{envJournalURL + "=postgres://x@127.0.0.1:1/x"}, "--queue needs --journal NAME"},
		{"--wait alone", append(base, "--journal", "j", "--wait"), nil, "--wait and --chunk-size go with --queue"},
		{"--status with other flags", []string{"send", "--status", "snd_x", "--subject", "S"}, nil, "--status ID takes no other send flag"},
		{"--status without a database", []string{"send", "--status", "snd_x"}, nil, "--status needs SENDLOOP_JOURNAL_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := invocation{args: tc.args, env: tc.env}.run(t)
			assert.Equal(t, exitUsage, res.code, res.stderr)
			assert.Contains(t, res.stderr, tc.want)
		})
	}
}

// TestNextPoll: --wait reads four times a second while a read is quick, and waits ten
// reads' time after a slow one (a send of millions of rows), so that following it never
// keeps the database busy more than a tenth of the time.
func TestNextPoll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		took, want time.Duration
	}{
		{0, statusPoll},
		{5 * time.Millisecond, statusPoll},
		{25 * time.Millisecond, statusPoll},
		{60 * time.Millisecond, 600 * time.Millisecond},
		{2 * time.Second, 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.took.String(), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, nextPoll(tt.took))
		})
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyncState: a first run with --state is a full one and writes the state; the next
// runs plan from it in 5 calls, and say so; a stale state, --full and a dry run behave as
// the help says.
func TestSyncState(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,pro\ncarol@example.com,pro\ndan@example.com,free\n")
	statePath := filepath.Join(dir, "list-1.state")
	sync := func(global []string, flags ...string) result {
		args := append(global, "sync", "--list", "1", "--csv", csvPath, "--state", statePath)
		// Each run a process, as the CLI's runs are: the state's lock is a flock, which a
		// process that other tests start holds too from its fork to its exec. A run waits
		// for it a moment (listsync's TestStateLockWaitsOutAMomentaryHolder), but a loaded
		// machine may hold a child longer between the two.
		return invocation{args: append(args, flags...), env: f.env, process: true}.run(t)
	}
	type stateDoc struct {
		State struct {
			Used   bool   `json:"used"`
			Reason string `json:"reason"`
		} `json:"state"`
	}
	decode := func(r result) stateDoc {
		var d stateDoc
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		return d
	}

	r := sync([]string{"--json"}, "--dry-run")
	expect(t, r, exitOK, nil, nil)
	assert.Equal(t, "no state yet", decode(r).State.Reason)
	_, err := os.Stat(statePath)
	require.ErrorIs(t, err, os.ErrNotExist, "a dry run writes no state")

	r = sync(nil)
	expect(t, r, exitOK, []string{"State not used: no state yet; the members were read (a full run)."}, nil)
	info, err := os.Stat(statePath)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
	raw, err := os.ReadFile(statePath)
	require.NoError(t, err)
	for _, a := range []string{"ann@example.com", "bob@", "carol", "example.com"} {
		assert.False(t, bytes.Contains(raw, []byte(a)), "%s in clear", a)
	}

	before := len(f.srv.Requests())
	r = sync([]string{"--json"})
	expect(t, r, exitOK, []string{`"unchanged": 3`}, nil)
	d := decode(r)
	assert.True(t, d.State.Used, d.State.Reason)
	assert.LessOrEqual(t, len(f.srv.Requests())-before, 5, "an unchanged list from the state")

	r = sync(nil)
	expect(t, r, exitOK, []string{"State used: the members were not read (drift 0)."}, nil)
	// A workflow's step summary says it too.
	summary := filepath.Join(dir, "summary.md")
	r = invocation{args: []string{"sync", "--list", "1", "--csv", csvPath, "--state", statePath}, env: f.env, process: true,
		ciEnv: []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary}}.run(t)
	expect(t, r, exitOK, nil, nil)
	md, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(md), "State used: the members were not read (drift 0). Synced.")
	r = sync([]string{"--json"}, "--max-state-age", "1ns")
	expect(t, r, exitOK, nil, nil)
	assert.Equal(t, "older than 1ns", decode(r).State.Reason)
	r = sync([]string{"--json"}, "--full")
	expect(t, r, exitOK, nil, nil)
	assert.Equal(t, "a full run was asked for", decode(r).State.Reason)
	r = sync([]string{"--json"}, "--max-state-age", "0")
	expect(t, r, exitOK, nil, nil)
	assert.True(t, decode(r).State.Used)
}

func TestSyncStateUsage(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", "EmailAddress\nann@example.com\n")
	for _, tt := range []struct {
		flags []string
		err   string
	}{
		{[]string{"--full"}, "--full needs --state"},
		{[]string{"--state", "s", "--max-drift", "x"}, `--max-drift "x"`},
		{[]string{"--state", "s", "--max-state-age", "-1h"}, "--max-state-age cannot be negative"},
	} {
		r := invocation{args: append([]string{"sync", "--list", "1", "--csv", csvPath}, tt.flags...), env: f.env}.run(t)
		expect(t, r, exitUsage, nil, []string{tt.err})
	}
}

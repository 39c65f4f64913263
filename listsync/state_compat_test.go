package listsync

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// state040Key is the test API key testdata/state-0.4.0.bin is sealed under (see
// testdata/state-0.4.0.md).
const state040Key = "sl-test-key-for-the-0.4.0-state"

// TestState040StillOpens reads a state written by 0.4.0, whose keys listsync derived from
// the API key itself, with the keys the client derives now: the same header and entries.
func TestState040StillOpens(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "state-0.4.0.bin")
	for _, tc := range []struct {
		name  string
		key   string
		wrong bool
	}{
		{name: "the key it was written under", key: state040Key},
		{name: "another key", key: state040Key + "x", wrong: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			h, entries, err := readAllState(f, tc.key)
			if tc.wrong {
				require.ErrorIs(t, err, errStateOtherAccount)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, stateHeader{BaseURL: "https://app.sendloop.com/api/v3", ListID: 7, Mapping: 0x0123456789abcdef,
				LastFull: time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)}, h.withUTC())
			assert.Equal(t, []stateEntry{
				{ID: 1, Email: "ann@example.com", Status: "Subscribed", Values: 0x1111},
				{ID: 2, Email: "bob@example.com", Status: "Unsubscribed", Values: 0x2222},
				{ID: 3, Email: "cat@example.com", Status: "Bounced", Values: 0x3333},
				{ID: 0, Email: "dan@example.com", Status: "Subscribed", Values: 0x4444, Unknown: true},
			}, entries)
		})
	}
}

// withUTC returns h with LastFull in UTC, for comparisons.
func (h stateHeader) withUTC() stateHeader {
	h.LastFull = h.LastFull.UTC()
	return h
}

// TestState040ThroughAPlan: a sync whose client holds the 0.4.0 state's key opens that
// state (its keys come from the client) and finds it written for another account's base
// URL, which it says, rather than "unreadable" or "another API key".
func TestState040ThroughAPlan(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "state-0.4.0.bin"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	_, c := demoList(t, sendlooptest.WithAPIKey(state040Key))
	pl := planRows(t, c, Rows([]Row{{Email: "ann@example.com"}}), Options{State: &StateOptions{Path: path, MaxDrift: job.DefaultMaxDrift}})
	assert.Equal(t, StateUse{Reason: "written for another account (https://app.sendloop.com/api/v3)", NoOwners: true}, pl.State)
}

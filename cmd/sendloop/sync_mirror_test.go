package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// TestSyncMirrorOwnsWhatItRemoves: with --state, --unsubscribe-missing keeps a sign-up of
// the service's that the file never named ("kept: not the sync's", kept_not_owned in
// --json) and unsubscribes a member the file dropped; =all unsubscribes the sign-up too;
// the first run says the state held no owners, and a run without --state says its rule.
func TestSyncMirrorOwnsWhatItRemoves(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		flag   string
		walkin string
		rule   string
		kept   int
	}{
		{name: "owned", flag: "--unsubscribe-missing", walkin: "Subscribed", rule: "owned", kept: 1},
		{name: "all", flag: "--unsubscribe-missing=all", walkin: "Unsubscribed", rule: "all"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			dir := t.TempDir()
			all := writeFile(t, dir, "all.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,pro\ncarol@example.com,pro\ndan@example.com,free\n")
			fewer := writeFile(t, dir, "fewer.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,pro\ncarol@example.com,pro\n")
			statePath := filepath.Join(dir, "state", "list-1.state")
			sync := func(csv string, flags ...string) result {
				args := append([]string{"--json", "sync", "--list", "1", "--csv", csv, "--state", statePath, tt.flag, "--max-unsubscribe", "100%"}, flags...)
				return invocation{args: args, env: f.env, process: true}.run(t)
			}
			r := sync(all)
			expect(t, r, exitOK, nil, nil)
			if tt.rule == "owned" {
				assert.Contains(t, r.stderr, "the state held no record of which members are the sync's")
			}
			_, err := apiClient(t, f).Subscribers.Subscribe(testContext(t), 1, sendloop.SubscriberSubscribeParams{
				EmailAddress: "walkin@example.org", SubscriptionIP: "1.2.3.4"})
			require.NoError(t, err)

			r = sync(fewer, "--full")
			expect(t, r, exitOK, nil, nil)
			var doc struct {
				Plan struct {
					Unsubscribe  int    `json:"unsubscribe"`
					KeptNotOwned int    `json:"kept_not_owned"`
					Rule         string `json:"unsubscribe_rule"`
				} `json:"plan"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
			assert.Equal(t, tt.rule, doc.Plan.Rule)
			assert.Equal(t, tt.kept, doc.Plan.KeptNotOwned)
			status, _ := f.srv.SubscriberStatus(1, "dan@example.com")
			assert.Equal(t, "Unsubscribed", status, "dropped by the file: the sync's")
			status, _ = f.srv.SubscriberStatus(1, "walkin@example.org")
			assert.Equal(t, tt.walkin, status)

			// Without --json, the table counts the kept apart.
			r = invocation{args: []string{"sync", "--list", "1", "--csv", fewer, "--state", statePath, tt.flag, "--full", "--dry-run"}, env: f.env, process: true}.run(t)
			expect(t, r, exitOK, nil, nil)
			if tt.kept > 0 {
				assert.Contains(t, r.stdout, "1 kept: not the sync's")
			}
		})
	}
}

// TestSyncMirrorRuleWithoutState: without --state the run says that it unsubscribes every
// member the file does not name; the flag refuses a value it does not know.
func TestSyncMirrorRuleWithoutState(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	csv := writeFile(t, dir, "m.csv", "EmailAddress,Plan\nann@example.com,pro\n")
	r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csv, "--unsubscribe-missing", "--dry-run", "--max-unsubscribe", "100%")
	expect(t, r, exitOK, []string{`"unsubscribe_rule": "all"`}, []string{"--unsubscribe-missing without --state"})
	r = f.sendloop(t, "sync", "--list", "1", "--csv", csv, "--unsubscribe-missing=some", "--dry-run")
	assert.Equal(t, exitUsage, r.code, r.stderr)
}

// TestSyncStateSeesServiceSideChanges: a state run plans what a full run plans after an
// address changed on the service side (bob@ renamed by subscriber.update: bob@'s row is
// added, the renamed member's fields are left alone) and after a resubscription (carol@,
// unsubscribed when the state was written, subscribed again: her changed row updates her).
func TestSyncStateSeesServiceSideChanges(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	statePath := filepath.Join(dir, "list-1.state")
	first := writeFile(t, dir, "first.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,free\ncarol@example.com,free\n")
	r := invocation{args: []string{"sync", "--list", "1", "--csv", first, "--state", statePath}, env: f.env, process: true}.run(t)
	expect(t, r, exitOK, nil, nil)

	c := apiClient(t, f)
	ctx := testContext(t)
	bob, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{EmailAddress: "bob@example.com"})
	require.NoError(t, err)
	require.NoError(t, c.Subscribers.Update(ctx, 1, sendloop.SubscriberUpdateParams{SubscriberID: bob.SubscriberID, EmailAddress: "robert@example.com"}))
	_, err = c.Subscribers.Subscribe(ctx, 1, sendloop.SubscriberSubscribeParams{EmailAddress: "carol@example.com", SubscriptionIP: "1.2.3.4"})
	require.NoError(t, err)

	second := writeFile(t, dir, "second.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,team\ncarol@example.com,team\n")
	r = invocation{args: []string{"--json", "sync", "--list", "1", "--csv", second, "--state", statePath, "--max-drift", "100%"}, env: f.env, process: true}.run(t)
	expect(t, r, exitOK, []string{`"used": true`, `"add": 1`, `"update": 1`, `"skipped_unsubscribed": 0`}, nil)

	robert, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{EmailAddress: "robert@example.com"})
	require.NoError(t, err)
	assert.Equal(t, "free", robert.CustomFields[2], "the renamed member keeps its fields")
	for _, e := range []string{"bob@example.com", "carol@example.com"} {
		sub, err := c.Subscribers.Get(ctx, 1, sendloop.SubscriberGetParams{EmailAddress: e})
		require.NoError(t, err, e)
		assert.Equal(t, "team", sub.CustomFields[2], e)
		assert.Equal(t, sendloop.SubscriptionStatus("Subscribed"), sub.SubscriptionStatus, e)
	}
}

// TestSyncStateBalancedDrift: a sign-up offset by an unsubscription on the service side
// leaves the subscribed count as the state holds it; the list's activity chart counts
// both, and beyond --max-drift the run reads the members, saying why.
func TestSyncStateBalancedDrift(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	statePath := filepath.Join(dir, "list-1.state")
	csv := writeFile(t, dir, "m.csv", "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,free\n")
	sync := func() result {
		return invocation{args: []string{"sync", "--list", "1", "--csv", csv, "--state", statePath, "--max-drift", "1"}, env: f.env, process: true}.run(t)
	}
	expect(t, sync(), exitOK, nil, nil)
	expect(t, sync(), exitOK, []string{"State used: the members were not read (drift 0)."}, nil)
	c := apiClient(t, f)
	_, err := c.Subscribers.Subscribe(testContext(t), 1, sendloop.SubscriberSubscribeParams{EmailAddress: "walkin@example.org", SubscriptionIP: "1.2.3.4"})
	require.NoError(t, err)
	_, err = c.Subscribers.Unsubscribe(testContext(t), 1, sendloop.SubscriberUnsubscribeParams{EmailAddress: "bob@example.com", UnsubscriptionIP: "1.2.3.4"})
	require.NoError(t, err)
	expect(t, sync(), exitOK, []string{"State not used: 1 subscriptions and 1 unsubscriptions on the list since the state (its activity chart): a drift of 2, beyond 1 (1); the members were read (a full run)."}, nil)
}

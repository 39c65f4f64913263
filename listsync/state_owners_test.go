package listsync

import (
	"net/url"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
)

// TestMirrorUnsubscribesOnlyTheSyncsMembers: with a state, UnsubscribeMissing unsubscribes
// the members the source named at some run and keeps a sign-up of the service's (counted
// in KeptNotOwned), from the state and in a full run alike; UnsubscribeAll unsubscribes
// every member the source does not name, as an exact mirror.
func TestMirrorUnsubscribesOnlyTheSyncsMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		all        bool
		full       bool
		rule       string
		walkin     string // the sign-up's status after the run
		unsubs     int
		keptNotOur int
	}{
		{name: "owned, from the state", rule: "owned", walkin: "Subscribed", unsubs: 1, keptNotOur: 0},
		{name: "owned, full run", full: true, rule: "owned", walkin: "Subscribed", unsubs: 1, keptNotOur: 1},
		{name: "all, full run", all: true, full: true, rule: "all", walkin: "Unsubscribed", unsubs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newStateWorld(t, 4)
			opts := Options{UnsubscribeMissing: true, UnsubscribeAll: tt.all}
			first := w.sync(t, Rows(rowsOf(4)), opts, StateOptions{})
			require.True(t, first.plan.State.NoOwners, "a first run has no owners yet")
			// A web form's sign-up, which the source does not name.
			_, err := w.c.Subscribers.Subscribe(testContext(t), w.listID, sendloop.SubscriberSubscribeParams{
				EmailAddress: "walkin@example.org", SubscriptionIP: "1.2.3.4"})
			require.NoError(t, err)
			// The source drops user3, which it named: the sync's to remove. The drift of the
			// sign-up (1 of 4) is allowed.
			run := w.sync(t, Rows(rowsOf(3)), opts, StateOptions{Full: tt.full, MaxDrift: job.Percent(50)})
			assert.Equal(t, !tt.full, run.plan.State.Used)
			assert.False(t, run.plan.State.NoOwners)
			assert.Equal(t, tt.rule, run.plan.UnsubscribeRule)
			assert.Equal(t, tt.unsubs, run.plan.Unsubscribes)
			assert.Equal(t, tt.keptNotOur, run.plan.KeptNotOwned)
			m := w.members(t)
			assert.Equal(t, "Unsubscribed", m[emailN(3)][0])
			assert.Equal(t, tt.walkin, m["walkin@example.org"][0])
			// A full run afterwards keeps the sign-up under the owned rule still: the state
			// holds it as not the sync's.
			again := w.sync(t, Rows(rowsOf(3)), opts, StateOptions{Full: true})
			assert.Zero(t, again.plan.Unsubscribes)
			assert.Equal(t, tt.walkin, w.members(t)["walkin@example.org"][0])
			// Named by the source once, the sign-up is the sync's: dropped, it goes.
			named := append(rowsOf(3), Row{Email: "walkin@example.org", Fields: map[string]string{"Plan": "p0"}})
			w.sync(t, Rows(named), opts, StateOptions{MaxDrift: job.Percent(50)})
			if tt.walkin == "Subscribed" {
				dropped := w.sync(t, Rows(rowsOf(3)), opts, StateOptions{Full: true})
				assert.Equal(t, 1, dropped.plan.Unsubscribes)
				assert.Equal(t, "Unsubscribed", w.members(t)["walkin@example.org"][0])
			}
		})
	}
}

// TestMirrorRuleWithoutState: without a state nothing records the owners, and
// UnsubscribeMissing unsubscribes every member the source does not name, saying so.
func TestMirrorRuleWithoutState(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts Options
		rule string
	}{
		{name: "unsubscribe missing", opts: Options{UnsubscribeMissing: true}, rule: "all"},
		{name: "not asked", opts: Options{}, rule: "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newStateWorld(t, 3)
			pl := planRows(t, w.c, Rows(rowsOf(2)), tt.opts)
			assert.Equal(t, tt.rule, pl.UnsubscribeRule)
			assert.Zero(t, pl.KeptNotOwned)
			assert.Equal(t, 1, pl.Absent)
		})
	}
}

// TestStateWithoutOwnersRecordsThem: a state in 0.4.0's format (no owners) is used, says
// it held no owners, unsubscribes none of the absent, and records the members the source
// names as the sync's: the next run unsubscribes one the source then drops.
func TestStateWithoutOwnersRecordsThem(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 4)
	opts := Options{UnsubscribeMissing: true}
	w.sync(t, Rows(rowsOf(4)), opts, StateOptions{})
	// The state, written again as 0.4.0 wrote states: no owners.
	f, err := os.Open(w.path)
	require.NoError(t, err)
	h, entries, err := readAllState(f, w.srv.APIKey)
	f.Close()
	require.NoError(t, err)
	require.True(t, h.Owners)
	h.Owners = false
	for i := range entries {
		entries[i].Owned = false
	}
	writeTestState(t, w.path, w.srv.APIKey, h, entries)

	run := w.sync(t, Rows(rowsOf(3)), opts, StateOptions{})
	assert.True(t, run.plan.State.Used)
	assert.True(t, run.plan.State.NoOwners)
	assert.Zero(t, run.plan.Unsubscribes, "user3 is not known as the sync's yet")
	assert.Equal(t, 1, run.plan.KeptNotOwned)

	f, err = os.Open(w.path)
	require.NoError(t, err)
	h, entries, err = readAllState(f, w.srv.APIKey)
	f.Close()
	require.NoError(t, err)
	assert.True(t, h.Owners, "the state is written in today's format")
	owned := map[string]bool{}
	for _, e := range entries {
		owned[e.Email] = e.Owned
	}
	assert.Equal(t, map[string]bool{emailN(0): true, emailN(1): true, emailN(2): true, emailN(3): false}, owned)

	next := w.sync(t, Rows(rowsOf(2)), opts, StateOptions{})
	assert.False(t, next.plan.State.NoOwners)
	assert.Equal(t, 1, next.plan.Unsubscribes, "user2, named by the last run, is the sync's")
	assert.Equal(t, 1, next.plan.KeptNotOwned)
}

// TestMirrorForgetsAMemberThatLeft: a member of the sync's deleted on the service side is
// forgotten, ownership and all, when the source drops it; signed up again through a form,
// it is the service's, and the mirror keeps it.
func TestMirrorForgetsAMemberThatLeft(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 20)
	opts := Options{UnsubscribeMissing: true}
	w.sync(t, Rows(rowsOf(20)), opts, StateOptions{})
	ctx := testContext(t)
	_, err := w.c.Legacy().Call(ctx, "Subscriber.Delete", url.Values{"ListID": {"1"}, "EmailAddress": {emailN(5)}})
	require.NoError(t, err)
	// user5 dropped: the state run unsubscribes it, the service says it is not in the list.
	w.sync(t, Rows(append(rowsOf(5), rowsOf(20)[6:]...)), opts, StateOptions{MaxDrift: job.Percent(100)})
	_, err = w.c.Subscribers.Subscribe(ctx, w.listID, sendloop.SubscriberSubscribeParams{EmailAddress: emailN(5), SubscriptionIP: "1.2.3.4"})
	require.NoError(t, err)
	run := w.sync(t, Rows(append(rowsOf(5), rowsOf(20)[6:]...)), opts, StateOptions{Full: true})
	assert.Zero(t, run.plan.Unsubscribes)
	assert.Equal(t, 1, run.plan.KeptNotOwned)
	status, _ := w.srv.SubscriberStatus(w.listID, emailN(5))
	assert.Equal(t, "Subscribed", status)
}

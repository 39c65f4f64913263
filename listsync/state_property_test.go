package listsync

import (
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// propertyWorld is one fake list, synced either from a state or by full runs only.
type propertyWorld struct {
	srv    *sendlooptest.Server
	c      *sendloop.Client
	path   string          // the state, for the world of state runs
	tmp    string          // the plans' temporary files
	unsubd map[string]bool // addresses unsubscribed on the service side, still members
	all    bool            // UnsubscribeAll: the exact mirror's rule
	named  map[string]bool // addresses the source named at some run: the sync's
	t      *testing.T
	seed   uint64
	step   int
}

const propertyList = 1

func newPropertyWorld(t *testing.T, seed uint64, members map[string]string) *propertyWorld {
	t.Helper()
	srv := sendlooptest.NewServer(t, sendlooptest.WithRequestLog(0))
	w := &propertyWorld{srv: srv, c: apiClient(t, srv), unsubd: map[string]bool{}, named: map[string]bool{}, t: t, seed: seed,
		path: filepath.Join(t.TempDir(), "state"), tmp: t.TempDir()}
	ctx := testContext(t)
	_, err := w.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "P", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	_, err = srv.DefineCustomField(propertyList, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	for e, v := range members {
		w.signUp(e, v)
	}
	return w
}

func (w *propertyWorld) status(email string) (string, bool) {
	return w.srv.SubscriberStatus(propertyList, email)
}

func (w *propertyWorld) signUp(email, plan string) {
	_, err := w.c.Subscribers.Subscribe(testContext(w.t), propertyList, sendloop.SubscriberSubscribeParams{
		EmailAddress: email, SubscriptionIP: "1.2.3.4", Fields: sendloop.CustomFields{1: plan}})
	require.NoError(w.t, err, "seed %d", w.seed)
}

// sync runs a sync of the source; state nil is a full run without a state.
func (w *propertyWorld) sync(rows []Row, unsubscribeMissing bool, state *StateOptions) StateUse {
	t := w.t
	ctx := testContext(t)
	for _, r := range rows {
		w.named[strings.ToLower(r.Email)] = true
	}
	jb, err := New(ctx, w.c, propertyList, Rows(rows), Options{UnsubscribeMissing: unsubscribeMissing, UnsubscribeAll: w.all, State: state, TempDir: w.tmp})
	require.NoError(t, err, "seed %d", w.seed)
	pl, err := jb.Plan(ctx)
	require.NoError(t, err, "seed %d", w.seed)
	defer pl.Close()
	_, err = pl.Apply(ctx, ApplyOptions{MaxUnsubscribe: job.Percent(100), OnRow: func(r RowResult) {
		if r.Fate != job.Done && r.Kind != KindUnsubscribe && (state == nil || r.Fate != job.Unknown) {
			t.Errorf("seed %d step %d: rejected %+v", w.seed, w.step, r)
		}
	}})
	require.NoError(t, err, "seed %d", w.seed)
	// No member unsubscribed on the service side is subscribed again.
	for e := range w.unsubd {
		status, ok := w.status(e)
		require.True(t, ok, "seed %d step %d: %s", w.seed, w.step, e)
		require.Equal(t, "Unsubscribed", status, "seed %d step %d: %s subscribed again", w.seed, w.step, e)
	}
	if state == nil || w.all {
		return pl.State
	}
	// The mirror that owns what it removes: no member the source never named (a sign-up
	// on the service side, a member from before the first run) is unsubscribed by it.
	for e, m := range w.members() {
		if m[0] == statusUnsubscribed && !w.unsubd[e] {
			require.True(t, w.named[e], "seed %d step %d: %s unsubscribed, never the sync's", w.seed, w.step, e)
		}
	}
	return pl.State
}

func (w *propertyWorld) members() map[string][2]string {
	out := map[string][2]string{}
	for m, err := range w.c.Subscribers.Members(testContext(w.t), propertyList, sendloop.SubscriberMembersParams{FieldIDs: []int{1}}) {
		require.NoError(w.t, err)
		out[strings.ToLower(m.EmailAddress)] = [2]string{string(m.SubscriptionStatus), m.Values[0]}
	}
	return out
}

// TestStateRunsEndWhereFullRunsEnd: for random sequences of source changes and service-side
// changes (sign-ups, unsubscriptions, resubscriptions, bounces, field edits, deletions,
// address changes by subscriber.update; balanced or not, under a MaxDrift that allows no
// drift, which the activity chart then turns into full runs, or any) between runs, runs
// from a state then one full run leave the same members with the same statuses as full
// runs alone (which keep a state too, for its owners), with the same values but for
// members who unsubscribed on the service side; no member unsubscribed on the service side
// is ever subscribed again; and under the owned rule of UnsubscribeMissing no member the
// source never named is unsubscribed.
//
// Under the exact mirror's rule (UnsubscribeAll), sign-ups on the service side are of
// addresses the source names: one the source does not name is unsubscribed by the next
// full run but not by a state run (the state does not know it), and if the source names
// it later, the two differ for good (the package documentation says so). Under the owned
// rule neither unsubscribes it.
func TestStateRunsEndWhereFullRunsEnd(t *testing.T) {
	t.Parallel()
	sequences := 200
	if raceEnabled {
		sequences = 40 // the same code under the race detector: 200 would take minutes
	}
	for seed := range uint64(sequences) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			propertySequence(t, seed)
		})
	}
}

func propertySequence(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 34))
	universe := make([]string, 12)
	for i := range universe {
		universe[i] = fmt.Sprintf("p%d@example.com", i)
	}
	plans := []string{"a", "b", "c"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	unsubscribeMissing := rng.IntN(2) == 0
	all := rng.IntN(2) == 0 // the exact mirror's rule, or the owned one

	initial := map[string]string{}
	for _, e := range universe {
		if rng.IntN(2) == 0 {
			initial[e] = pick(plans)
		}
	}
	source := map[string]string{} // address → Plan
	for _, e := range universe {
		if rng.IntN(3) > 0 {
			source[e] = pick(plans)
		}
	}
	rows := func() []Row {
		var out []Row
		for _, e := range universe {
			if v, ok := source[e]; ok {
				written := e
				if rng.IntN(4) == 0 {
					written = strings.ToUpper(e[:1]) + e[1:] // addresses compare without case
				}
				out = append(out, Row{Email: written, Fields: map[string]string{"Plan": v}})
			}
		}
		return out
	}
	st := newPropertyWorld(t, seed, initial)   // runs from the state
	full := newPropertyWorld(t, seed, initial) // full runs only
	// A zero MaxDrift makes every drift a full run; 100 % keeps every run from the state,
	// whatever changed on the service side.
	maxDrift := job.Budget{}
	if rng.IntN(2) == 0 {
		maxDrift = job.Percent(100)
	}
	stateOpts := &StateOptions{Path: st.path, noSync: true, MaxDrift: maxDrift}
	fullOpts := &StateOptions{Path: full.path, noSync: true, Full: true}
	worlds := []*propertyWorld{st, full}
	st.all, full.all = all, all
	deleted := map[string]bool{}      // addresses deleted (or renamed away) on the service side
	resubscribed := map[string]bool{} // members who subscribed again on the service side
	edited := map[string]bool{}       // members whose field was edited on the service side

	steps := 2 + rng.IntN(3)
	for step := range steps {
		st.step, full.step = step, step
		statusChanges, hidden := 0, false // the service side's changes of this step
		var before map[string][2]string   // the state world's members before them
		if step > 0 {
			// The source changes.
			for range rng.IntN(4) {
				e := pick(universe)
				switch rng.IntN(3) {
				case 0:
					delete(source, e)
				default:
					source[e] = pick(plans)
				}
			}
			// The service side changes, alike in both worlds where both allow it.
			before = st.members()
			for range rng.IntN(4) {
				e := pick(universe)
				s1, in1 := st.status(e)
				s2, in2 := full.status(e)
				if in1 != in2 || s1 != s2 {
					continue // the worlds differ here, as they may until the full run
				}
				switch rng.IntN(7) {
				case 0: // a sign-up
					if _, named := source[e]; in1 || (unsubscribeMissing && all && !named) {
						continue
					}
					t.Logf("step %d: %s signs up", step, e)
					statusChanges++
					v := pick(plans)
					for _, w := range worlds {
						w.signUp(e, v)
					}
				case 1: // an unsubscription
					if s1 != "Subscribed" {
						continue
					}
					t.Logf("step %d: %s unsubscribes", step, e)
					statusChanges++
					for _, w := range worlds {
						_, err := w.c.Subscribers.Unsubscribe(testContext(t), propertyList, sendloop.SubscriberUnsubscribeParams{EmailAddress: e, UnsubscriptionIP: "1.2.3.4"})
						require.NoError(t, err)
						w.unsubd[e] = true
					}
				case 2: // a field edit
					if !in1 {
						continue
					}
					v := pick(plans)
					t.Logf("step %d: %s edited to %s", step, e, v)
					edited[e] = true
					for _, w := range worlds {
						require.NoError(t, w.c.Subscribers.Update(testContext(t), propertyList, sendloop.SubscriberUpdateParams{EmailAddress: e, Fields: sendloop.CustomFields{1: v}}))
					}
				case 3: // a bounce
					if !in1 {
						continue
					}
					t.Logf("step %d: %s bounces", step, e)
					for _, w := range worlds {
						require.NoError(t, w.srv.SetBounce(propertyList, e, "Soft"))
					}
				case 4: // a deletion
					if !in1 {
						continue
					}
					t.Logf("step %d: %s deleted", step, e)
					hidden = true // a deletion may offset a sign-up in both counts
					for _, w := range worlds {
						_, err := w.c.Legacy().Call(testContext(t), "Subscriber.Delete", url.Values{"ListID": {fmt.Sprint(propertyList)}, "EmailAddress": {e}})
						require.NoError(t, err)
						delete(w.unsubd, e)
					}
					deleted[e] = true
				case 5: // an address changed (subscriber.update by SubscriberID)
					to := pick(universe)
					if !in1 {
						continue
					}
					if _, named := source[to]; unsubscribeMissing && all && !named {
						continue // a service-side addition of to, as a sign-up is
					}
					if _, in := st.status(to); in {
						continue
					}
					if _, in := full.status(to); in {
						continue
					}
					t.Logf("step %d: %s renamed to %s", step, e, to)
					hidden = true // a deletion may offset a sign-up in both counts
					for _, w := range worlds {
						sub, err := w.c.Subscribers.Get(testContext(t), propertyList, sendloop.SubscriberGetParams{EmailAddress: e})
						require.NoError(t, err)
						require.NoError(t, w.c.Subscribers.Update(testContext(t), propertyList, sendloop.SubscriberUpdateParams{SubscriberID: sub.SubscriberID, EmailAddress: to}))
						if w.unsubd[e] {
							delete(w.unsubd, e)
							w.unsubd[to] = true
						}
					}
					deleted[e] = true // the old address is gone, as if deleted
				case 6: // a resubscription (a sign-up form's, of a member who unsubscribed)
					if _, named := source[e]; s1 != "Unsubscribed" || (unsubscribeMissing && all && !named) {
						continue // (an addition on the service side, for the exact mirror, as a sign-up)
					}
					v := pick(plans)
					t.Logf("step %d: %s subscribes again", step, e)
					statusChanges++
					for _, w := range worlds {
						w.signUp(e, v)
						delete(w.unsubd, e)
					}
					resubscribed[e] = true
				}
			}
		}
		if before != nil {
			// What the service side changed of the statuses, net: an unsubscription undone
			// by a resubscription leaves the list as it was.
			statusChanges = 0
			after := st.members()
			for _, e := range universe {
				if before[e][0] != after[e][0] {
					statusChanges++
				}
			}
		}
		r := rows()
		t.Logf("step %d: source %v (unsubscribe missing %t, all %t, max drift %s)", step, source, unsubscribeMissing, all, maxDrift)
		use := st.sync(r, unsubscribeMissing, stateOpts)
		if step > 0 && maxDrift == (job.Budget{}) && statusChanges > 0 && !hidden {
			// Sign-ups, unsubscriptions and resubscriptions, balanced or not, are a drift:
			// the zero MaxDrift allows none.
			require.False(t, use.Used, "seed %d step %d: %d changes of status unseen (drift %d)", seed, step, statusChanges, use.Drift)
		}
		full.sync(r, unsubscribeMissing, fullOpts)
	}
	full2 := *stateOpts
	full2.Full = true
	st.sync(rows(), unsubscribeMissing, &full2)

	got, want := st.members(), full.members()
	everUnsubscribed := map[string]bool{}
	for _, w := range worlds {
		for e := range w.unsubd {
			everUnsubscribed[e] = true
		}
	}
	for _, e := range universe {
		g, inG := got[e]
		w, inW := want[e]
		if inG != inW {
			// A member deleted on the service side that the source names is added again
			// by a full run, not by a state run, which believes it there: if the source
			// drops it before the next full run, the full runs leave it a member
			// (unsubscribed with UnsubscribeMissing), the state runs none.
			require.True(t, deleted[e], "seed %d: %s is a member of one world only (%v, %v)", seed, e, g, w)
			continue
		}
		require.Equal(t, w[0], g[0], "seed %d: the status of %s", seed, e)
		// A full run updates no unsubscribed member: the values it holds are those of its
		// last update, which a state run may have made (to a member who unsubscribed on
		// the service side) or missed (an edit on the service side, before the source
		// dropped the member).
		// A field edited on the service side is not set back by a state run: if the source
		// drops the member before the next full run, its values differ for good.
		_, named := source[e]
		if !everUnsubscribed[e] && !resubscribed[e] && (!edited[e] || named) && w[0] != statusUnsubscribed {
			require.Equal(t, w[1], g[1], "seed %d: the values of %s", seed, e)
		}
	}
}

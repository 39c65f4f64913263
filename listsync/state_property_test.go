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
func (w *propertyWorld) sync(rows []Row, unsubscribeMissing bool, state *StateOptions) {
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
		return
	}
	// The mirror that owns what it removes: no member the source never named (a sign-up
	// on the service side, a member from before the first run) is unsubscribed by it.
	for e, m := range w.members() {
		if m[0] == statusUnsubscribed && !w.unsubd[e] {
			require.True(t, w.named[e], "seed %d step %d: %s unsubscribed, never the sync's", w.seed, w.step, e)
		}
	}
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
// changes (sign-ups, unsubscriptions, bounces, field edits, deletions) between runs, runs
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
	stateOpts := &StateOptions{Path: st.path, noSync: true}
	fullOpts := &StateOptions{Path: full.path, noSync: true, Full: true}
	worlds := []*propertyWorld{st, full}
	st.all, full.all = all, all
	deleted := map[string]bool{} // addresses deleted on the service side

	steps := 2 + rng.IntN(3)
	for step := range steps {
		st.step, full.step = step, step
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
			for range rng.IntN(4) {
				e := pick(universe)
				s1, in1 := st.status(e)
				s2, in2 := full.status(e)
				if in1 != in2 || s1 != s2 {
					continue // the worlds differ here, as they may until the full run
				}
				switch rng.IntN(5) {
				case 0: // a sign-up
					if _, named := source[e]; in1 || (unsubscribeMissing && all && !named) {
						continue
					}
					v := pick(plans)
					for _, w := range worlds {
						w.signUp(e, v)
					}
				case 1: // an unsubscription
					if s1 != "Subscribed" {
						continue
					}
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
					for _, w := range worlds {
						require.NoError(t, w.c.Subscribers.Update(testContext(t), propertyList, sendloop.SubscriberUpdateParams{EmailAddress: e, Fields: sendloop.CustomFields{1: v}}))
					}
				case 3: // a bounce
					if !in1 {
						continue
					}
					for _, w := range worlds {
						require.NoError(t, w.srv.SetBounce(propertyList, e, "Soft"))
					}
				case 4: // a deletion
					if !in1 {
						continue
					}
					for _, w := range worlds {
						_, err := w.c.Legacy().Call(testContext(t), "Subscriber.Delete", url.Values{"ListID": {fmt.Sprint(propertyList)}, "EmailAddress": {e}})
						require.NoError(t, err)
						delete(w.unsubd, e)
					}
					deleted[e] = true
				}
			}
		}
		r := rows()
		st.sync(r, unsubscribeMissing, stateOpts)
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
		if !everUnsubscribed[e] && w[0] != statusUnsubscribed {
			require.Equal(t, w[1], g[1], "seed %d: the values of %s", seed, e)
		}
	}
}

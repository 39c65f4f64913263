//go:build live

package livetest

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// listName names the one list the suite uses, run after run.
const listName = "sendloop-live-test"

// subscriptionIP is the IP address the suite's subscriptions and unsubscriptions give
// (from the range kept for documentation).
const subscriptionIP = "192.0.2.1"

// live is what the steps of one run share.
type live struct {
	client *sendloop.Client
	listID int
	// a and b are the run's two addresses; a is changed to aUpdated by the update step.
	a, aUpdated, b string
	subA           int // a's subscriber ID
	unknown        *unknownFields
}

// setup skips unless the run is asked for (SENDLOOP_LIVE=1) and makes the clients.
func setup(t *testing.T) *live {
	t.Helper()
	if os.Getenv("SENDLOOP_LIVE") != "1" {
		t.Skip("the live smoke suite writes to a Sendloop account: set SENDLOOP_LIVE=1 beside SENDLOOP_BASE_URL and SENDLOOP_API_KEY of a test account to run it (see the package doc)")
	}
	base, key := os.Getenv(sendloop.EnvBaseURL), os.Getenv(sendloop.EnvAPIKey)
	if base == "" || strings.TrimSpace(key) == "" {
		t.Fatalf("SENDLOOP_LIVE=1 needs both %s and %s set (the test account's host and key)", sendloop.EnvBaseURL, sendloop.EnvAPIKey)
	}
	client, err := sendloop.NewClientFromEnv(sendloop.WithUserAgent("sendloop-livetest"))
	if err != nil {
		t.Fatal(err)
	}
	domain := os.Getenv("SENDLOOP_LIVE_DOMAIN")
	if domain == "" {
		domain = "example.com"
	}
	run := time.Now().UTC().Format("20060102t150405.000000000")
	run = strings.ReplaceAll(run, ".", "")
	addr := func(who string) string { return "sendloop-live-" + run + "-" + who + "@" + domain }
	l := &live{client: client, a: addr("a"), aUpdated: addr("a-updated"), b: addr("b"), unknown: newUnknownFields()}
	prev := wire.SetUnknownFieldHook(l.unknown.add)
	t.Cleanup(func() { wire.SetUnknownFieldHook(prev) })
	t.Logf("base URL %s, list %q, addresses %s and %s", client.BaseURL(), listName, l.a, l.b)
	return l
}

// TestLive runs the steps in order; a step that fails stops the run, since the next ones
// build on it.
func TestLive(t *testing.T) {
	l := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	steps := []struct {
		name string
		run  func(context.Context, *testing.T)
	}{
		{"account and system", l.account},
		{"find or create the list", l.findOrCreateList},
		{"get the list", l.getList},
		{"subscribe", l.subscribe},
		{"get a subscriber", l.getSubscriber},
		{"browse the list", l.browse},
		{"update a subscriber", l.update},
		{"search", l.search},
		{"unsubscribe from the list", l.unsubscribeFromList},
		{"unsubscribe from all lists", l.unsubscribeFromAll},
		{"suppression lists", l.suppression},
		{"list report", l.report},
		{"exports", l.exports},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			defer l.unknown.log(t)
			s.run(ctx, t)
		})
		if !ok {
			t.Fatalf("step %q failed: the steps after it build on it", s.name)
		}
	}
}

func (l *live) account(ctx context.Context, t *testing.T) {
	info, err := l.client.Account.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("account %q", info.Username)
	date, err := l.client.System.Date(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("service time %v %s", date.Date.Time, date.TimeZone)
}

// findOrCreateList finds the suite's list by name, or makes it (single opt-in).
func (l *live) findOrCreateList(ctx context.Context, t *testing.T) {
	lists, err := l.client.Lists.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found []sendloop.List
	for _, li := range lists {
		if li.Name == listName {
			found = append(found, li)
		}
	}
	switch len(found) {
	case 0:
		id, err := l.client.Lists.Create(ctx, sendloop.ListCreateParams{Name: listName, OptInMode: sendloop.OptInSingle})
		if err != nil {
			t.Fatal(err)
		}
		l.listID = id
		t.Logf("made list %d %q (single opt-in)", id, listName)
		return
	case 1:
	default:
		// Two runs that both made the list: use the oldest, as every later run will.
		slices.SortFunc(found, func(x, y sendloop.List) int { return x.ListID - y.ListID })
		t.Logf("%d lists are named %q: using the oldest, %d", len(found), listName, found[0].ListID)
	}
	li := found[0]
	if !strings.EqualFold(string(li.OptInMode), string(sendloop.OptInSingle)) {
		t.Fatalf("list %d %q is %q opt-in: a subscription would send a confirmation mail; make it single opt-in", li.ListID, listName, li.OptInMode)
	}
	l.listID = li.ListID
	t.Logf("reusing list %d %q (%d active subscribers)", li.ListID, listName, li.ActiveSubscribers)
}

func (l *live) getList(ctx context.Context, t *testing.T) {
	li, err := l.client.Lists.Get(ctx, l.listID, sendloop.ListGetParams{CustomFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if li.Name != listName {
		t.Errorf("list.get: name %q, want %q", li.Name, listName)
	}
	if _, err := l.client.Lists.Settings(ctx, l.listID); err != nil {
		t.Fatal(err)
	}
}

func (l *live) subscribe(ctx context.Context, t *testing.T) {
	for _, addr := range []string{l.a, l.b} {
		res, err := l.client.Subscribers.Subscribe(ctx, l.listID, sendloop.SubscriberSubscribeParams{EmailAddress: addr, SubscriptionIP: subscriptionIP})
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if res.SubscriptionStatus != sendloop.StatusSubscribed {
			t.Errorf("%s: status %q, want %q", addr, res.SubscriptionStatus, sendloop.StatusSubscribed)
		}
		if addr == l.a {
			l.subA = res.SubscriberID
		}
	}
}

func (l *live) getSubscriber(ctx context.Context, t *testing.T) {
	sub := l.wantStatus(ctx, t, l.a, sendloop.StatusSubscribed)
	if sub.SubscriberID != l.subA {
		t.Errorf("subscriber.get: ID %d, subscriber.subscribe said %d", sub.SubscriberID, l.subA)
	}
}

// browse pages through the list until it has seen both addresses.
func (l *live) browse(ctx context.Context, t *testing.T) {
	want := map[string]bool{strings.ToLower(l.a): false, strings.ToLower(l.b): false}
	seen, n := 0, 0
	for sub, err := range l.client.Subscribers.BrowseIter(ctx, l.listID, sendloop.SubscriberBrowseParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		l.unknown.extra("Subscriber", sub.Extra)
		if found, ok := want[strings.ToLower(sub.EmailAddress)]; ok && !found {
			want[strings.ToLower(sub.EmailAddress)] = true
			if seen++; seen == len(want) {
				break
			}
		}
	}
	if seen != len(want) {
		t.Errorf("subscriber.browse: %d members, without the run's addresses (%v)", n, want)
	}
	t.Logf("browsed %d members", n)
}

// update gives a a new address.
func (l *live) update(ctx context.Context, t *testing.T) {
	err := l.client.Subscribers.Update(ctx, l.listID, sendloop.SubscriberUpdateParams{SubscriberID: l.subA, EmailAddress: l.aUpdated})
	if err != nil {
		t.Fatal(err)
	}
	sub := l.wantStatus(ctx, t, l.aUpdated, sendloop.StatusSubscribed)
	if sub.SubscriberID != l.subA {
		t.Errorf("after subscriber.update: ID %d, want %d", sub.SubscriberID, l.subA)
	}
}

func (l *live) search(ctx context.Context, t *testing.T) {
	results, err := l.client.Subscribers.Search(ctx, l.aUpdated)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, hit := range r.Subscribers {
			if r.ListID == l.listID && strings.EqualFold(hit.EmailAddress, l.aUpdated) {
				return
			}
		}
	}
	t.Errorf("subscriber.search %s: not found in list %d: %+v", l.aUpdated, l.listID, results)
}

// unsubscribeFromList takes the updated address out of the suite's list only.
func (l *live) unsubscribeFromList(ctx context.Context, t *testing.T) {
	res, err := l.client.Subscribers.Unsubscribe(ctx, l.listID, sendloop.SubscriberUnsubscribeParams{EmailAddress: l.aUpdated, UnsubscriptionIP: subscriptionIP})
	if err != nil {
		t.Fatal(err)
	}
	if res.SubscriptionStatus != sendloop.StatusUnsubscribed {
		t.Errorf("Subscribers.Unsubscribe: status %q", res.SubscriptionStatus)
	}
	l.wantStatus(ctx, t, l.aUpdated, sendloop.StatusUnsubscribed)
}

// unsubscribeFromAll takes b out of every list (subscriber.unsubscribe names no list).
func (l *live) unsubscribeFromAll(ctx context.Context, t *testing.T) {
	if err := l.client.Subscribers.UnsubscribeFromAllLists(ctx, l.b); err != nil {
		t.Fatal(err)
	}
	l.wantStatus(ctx, t, l.b, sendloop.StatusUnsubscribed)
}

func (l *live) suppression(ctx context.Context, t *testing.T) {
	for _, id := range []int{l.listID, sendloop.GlobalSuppression} {
		entries, err := l.client.Suppression.List(ctx, id)
		if err != nil {
			t.Fatalf("suppression.list.getlist %d: %v", id, err)
		}
		t.Logf("suppression list %d: %d entries", id, len(entries))
	}
	entries, err := l.client.Suppression.Get(ctx, l.b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("suppression entries of %s: %+v", l.b, entries)
}

func (l *live) report(ctx context.Context, t *testing.T) {
	if _, err := l.client.Reports.ListOverall(ctx, l.listID); err != nil {
		t.Fatal(err)
	}
}

func (l *live) exports(ctx context.Context, t *testing.T) {
	unsubs, err := l.client.Exports.Unsubscriptions(ctx, l.listID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range unsubs {
		found = found || strings.EqualFold(u.EmailAddress, l.aUpdated)
	}
	// The service may build the export later than the unsubscription: say so, do not fail.
	t.Logf("export.unsubscriptions: %d rows, the run's unsubscribed address among them: %v", len(unsubs), found)
	if list, err := l.client.Exports.SuppressionList(ctx); err != nil {
		t.Error(err)
	} else {
		t.Logf("export.suppressionlist: %d rows", len(list))
	}
	if list, err := l.client.Exports.SpamComplaints(ctx); err != nil {
		t.Error(err)
	} else {
		t.Logf("export.spamcomplaints: %d rows", len(list))
	}
	for _, kind := range []sendloop.BounceType{sendloop.BounceHard, sendloop.BounceSoft} {
		bounces, err := l.client.Exports.Bounces(ctx, sendloop.ExportBouncesParams{BounceType: kind})
		if err != nil {
			t.Errorf("export.bounces %s: %v", kind, err)
			continue
		}
		t.Logf("export.bounces %s: %d rows", kind, len(bounces))
	}
}

// wantStatus reads a subscriber of the list by address and checks its status.
func (l *live) wantStatus(ctx context.Context, t *testing.T, addr string, want sendloop.SubscriptionStatus) *sendloop.Subscriber {
	t.Helper()
	sub, err := l.client.Subscribers.Get(ctx, l.listID, sendloop.SubscriberGetParams{EmailAddress: addr})
	if err != nil {
		t.Fatalf("subscriber.get %s: %v", addr, err)
	}
	l.unknown.extra("Subscriber", sub.Extra)
	if !strings.EqualFold(sub.EmailAddress, addr) {
		t.Errorf("subscriber.get %s: address %q", addr, sub.EmailAddress)
	}
	if sub.SubscriptionStatus != want {
		t.Errorf("subscriber.get %s: status %q, want %q", addr, sub.SubscriptionStatus, want)
	}
	return sub
}

// unknownFields gathers the keys of answers that the decoders do not read, for the log.
type unknownFields struct {
	mu     sync.Mutex
	new    map[string]bool // since the last log
	logged map[string]bool // logged by an earlier step
}

func newUnknownFields() *unknownFields {
	return &unknownFields{new: map[string]bool{}, logged: map[string]bool{}}
}

// add is the decoders' hook (wire.SetUnknownFieldHook).
func (u *unknownFields) add(record, key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if k := record + "." + key; !u.logged[k] {
		u.new[k] = true
	}
}

// extra adds the keys of a record's Extra map: the keys its decoder keeps without knowing.
func (u *unknownFields) extra(record string, m map[string]string) {
	for k := range m {
		u.add(record, k)
	}
}

// log writes the keys met since the last call to the test log.
func (u *unknownFields) log(t *testing.T) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.new) == 0 {
		return
	}
	keys := make([]string, 0, len(u.new))
	for k := range u.new {
		keys = append(keys, k)
		u.logged[k] = true
	}
	clear(u.new)
	slices.Sort(keys)
	t.Logf("fields the SDK does not read (reported, not failed): %s", strings.Join(keys, ", "))
}

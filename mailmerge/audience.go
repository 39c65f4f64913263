package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net/mail"
	"slices"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/smtp"
)

// ErrNoAPI is Send's and Check's refusal of a send to more than one recipient without
// Options.API: who may be mailed (the account's suppression list, a list's members) is
// read through the API, and a bulk send that cannot read it must not guess.
var ErrNoAPI = errors.New("mailmerge: a send to more than one recipient reads the suppression list through the API, and Options.API is not set")

// audience is who a run may mail, read once before its first message: the addresses the
// account suppresses everywhere, those the list suppresses, and (a file sent with a list)
// the state of each of the file's addresses in the list. Addresses are kept as 128-bit
// hashes of their lower-cased form, so that memory grows with the entries and not with
// their length.
type audience struct {
	seeds      [2]maphash.Seed
	suppressed map[[2]uint64]string // the reason of each suppressed address
	// members holds, for a file sent with a list, the state of each of the file's
	// addresses in the list; nil when the rows carry their own (a list source) or there
	// is no list.
	members map[[2]uint64]memberState
	listID  int
	// include sends to a list's members that are not Subscribed (Options.IncludeNotSubscribed).
	include bool
}

// memberState is an address's state in a list, as far as sending goes.
type memberState uint8

const (
	memberAbsent memberState = iota // not a member of the list
	memberSubscribed
	memberUnsubscribed
	memberPending
	memberBounced
	memberOther
)

func (a *audience) hash(key string) [2]uint64 {
	return [2]uint64{maphash.String(a.seeds[0], key), maphash.String(a.seeds[1], key)}
}

// memberReason is why a member in state st of list listID is not sent, "" when it is.
func memberReason(st memberState, status sendloop.SubscriptionStatus, listID int) string {
	switch st {
	case memberSubscribed:
		return ""
	case memberAbsent:
		return fmt.Sprintf("not a member of list %d", listID)
	case memberUnsubscribed:
		return fmt.Sprintf("unsubscribed from list %d", listID)
	case memberPending:
		return fmt.Sprintf("confirmation pending in list %d", listID)
	case memberBounced:
		return fmt.Sprintf("hard-bounced in list %d", listID)
	}
	if status == "" {
		return fmt.Sprintf("not subscribed to list %d", listID)
	}
	return fmt.Sprintf("%s in list %d, not Subscribed", status, listID)
}

// stateOf is the sending state of a subscriber: a hard bounce outweighs a Subscribed
// status, for mail to a hard-bounced address does not arrive and hurts the sender.
func stateOf(status sendloop.SubscriptionStatus, bounce sendloop.BounceType) memberState {
	if strings.EqualFold(strings.TrimSpace(string(bounce)), string(sendloop.BounceHard)) {
		return memberBounced
	}
	switch s := strings.TrimSpace(string(status)); {
	case strings.EqualFold(s, string(sendloop.StatusSubscribed)):
		return memberSubscribed
	case strings.EqualFold(s, "Unsubscribed"):
		return memberUnsubscribed
	case strings.EqualFold(s, "Confirmation Pending"), strings.EqualFold(s, "Waiting For Opt-In Confirmation"):
		return memberPending
	}
	return memberOther
}

// judge returns the fate of a row of key before its message: suppressed, not subscribed,
// or neither (job.Fate's zero, with no reason).
func (a *audience) judge(key string, row Row) (suppressed, notSubscribed string) {
	if a == nil {
		return "", ""
	}
	h := a.hash(key)
	if r, ok := a.suppressed[h]; ok {
		return r, ""
	}
	if a.include {
		return "", ""
	}
	if row.NotSubscribed != "" {
		return "", row.NotSubscribed
	}
	if a.members != nil {
		st := a.members[h]
		return "", memberReason(st, "", a.listID)
	}
	return "", ""
}

// addressKey is the form addresses compare in: the service compares them without regard
// to case, and the source's spaces around them are not part of them.
func addressKey(addr string) string { return strings.ToLower(sendloop.NormalizeAddress(addr)) }

// readAudience reads who the run may mail, before its first message: the global
// suppression list and, with a list, the list's suppression entries and (for a file) the
// state of the file's addresses in the list. It returns nil without a client for a source
// of at most one row, and ErrNoAPI with more.
func (j *Job) readAudience(ctx context.Context) (*audience, error) {
	if j.api == nil {
		bulk, err := j.moreThanOneRow(ctx)
		if err != nil {
			return nil, err
		}
		if bulk {
			return nil, ErrNoAPI
		}
		return nil, nil
	}
	a := &audience{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		suppressed: map[[2]uint64]string{}, listID: j.listID, include: j.includeNotSubscribed}
	// The suppression lists and the file's pass are independent reads: they run at once,
	// and all of them end before readAudience returns.
	var (
		wg      sync.WaitGroup
		lists   [2][]sendloop.SuppressionEntry
		errs    [3]error
		members map[[2]uint64]memberState
	)
	read := []int{sendloop.GlobalSuppression}
	if j.listID != 0 {
		read = append(read, j.listID)
	}
	for i, id := range read {
		wg.Go(func() {
			lists[i], errs[i] = j.api.Suppression.List(ctx, id)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("reading the suppression list of %s: %w", listName(id), errs[i])
			}
		})
	}
	if j.listID != 0 && !j.fromList {
		wg.Go(func() { members, errs[2] = j.readMembership(ctx, a) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	for i, id := range read {
		for _, e := range lists[i] {
			key := addressKey(e.EmailAddress)
			if key == "" {
				continue
			}
			h := a.hash(key)
			if _, ok := a.suppressed[h]; ok && id != sendloop.GlobalSuppression {
				continue // the global entry says more
			}
			a.suppressed[h] = suppressionReason(id, e.Type)
		}
	}
	a.members = members
	return a, nil
}

func listName(id int) string {
	if id == sendloop.GlobalSuppression {
		return "the account (global)"
	}
	return fmt.Sprintf("list %d", id)
}

// suppressionReason is the reason of a row suppressed by an entry of list id (0: global)
// of type kind ("FBL Report", …).
func suppressionReason(id int, kind string) string {
	where := "on the account's global suppression list"
	if id != sendloop.GlobalSuppression {
		where = fmt.Sprintf("on list %d's suppression list", id)
	}
	if kind = strings.TrimSpace(kind); kind != "" {
		return fmt.Sprintf("%s (%s)", where, kind)
	}
	return where
}

// moreThanOneRow reports whether the source has more than one row it can use, reading at
// most two.
func (j *Job) moreThanOneRow(ctx context.Context) (bool, error) {
	n := 0
	for row, err := range j.src.Rows(ctx) {
		if err != nil {
			return false, err
		}
		if row.Reject == "" {
			n++
		}
		if n > 1 {
			return true, nil
		}
	}
	return false, ctx.Err()
}

// perRowLookups is the most addresses looked up one by one (subscriber.get) instead of
// walking the list: a walk costs a call per 100 members, a lookup a call per address, so
// a small file against a big list costs a few calls.
const perRowLookups = 200

// lookupConcurrency bounds the subscriber.get calls in flight at once.
const lookupConcurrency = 8

// readMembership reads the state in the list of each of the file's addresses: it reads
// the file's addresses once (kept as hashes, so that memory grows with the file's rows,
// not the list's members), then looks each up when they are few against the list, or
// walks the list's members otherwise.
func (j *Job) readMembership(ctx context.Context, a *audience) (map[[2]uint64]memberState, error) {
	states := map[[2]uint64]memberState{}
	var few []string // the addresses, while they are few enough to look up
	for row, err := range j.src.Rows(ctx) {
		if err != nil {
			return nil, err
		}
		if row.Reject != "" {
			continue
		}
		key := addressKey(row.Address)
		h := a.hash(key)
		if _, ok := states[h]; ok {
			continue
		}
		states[h] = memberAbsent
		if len(few) <= perRowLookups {
			few = append(few, key)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(states) == 0 {
		return states, nil
	}
	if len(few) <= perRowLookups {
		// A list of fewer pages than the addresses is walked instead.
		walk, err := j.listIsSmall(ctx, len(few))
		if err != nil {
			return nil, err
		}
		if !walk {
			return states, j.lookUp(ctx, a, few, states)
		}
	}
	for s, err := range j.api.Subscribers.BrowseIter(ctx, j.listID, sendloop.SubscriberBrowseParams{Concurrency: 4}) {
		if err != nil {
			return nil, fmt.Errorf("reading the members of list %d: %w", j.listID, err)
		}
		h := a.hash(addressKey(s.EmailAddress))
		if _, ok := states[h]; ok {
			states[h] = stateOf(s.SubscriptionStatus, s.BounceType)
		}
	}
	return states, nil
}

// listIsSmall reports whether walking the list costs fewer calls than looking up n
// addresses (list.get's count of subscribed members, 100 a page).
func (j *Job) listIsSmall(ctx context.Context, n int) (bool, error) {
	lists, err := j.api.Lists.List(ctx)
	if err != nil {
		return false, fmt.Errorf("reading the lists: %w", err)
	}
	for _, l := range lists {
		if l.ListID == j.listID {
			return (l.ActiveSubscribers+99)/100 < n, nil
		}
	}
	return false, fmt.Errorf("list %d: %w", j.listID, sendloop.ErrListNotFound)
}

// lookUp reads the state of each address in keys with subscriber.get, a few at once; all
// the calls end before it returns.
func (j *Job) lookUp(ctx context.Context, a *audience, keys []string, states map[[2]uint64]memberState) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan string)
	for range min(lookupConcurrency, len(keys)) {
		wg.Go(func() {
			for key := range next {
				s, err := j.api.Subscribers.Get(ctx, j.listID, sendloop.SubscriberGetParams{EmailAddress: key})
				st := memberAbsent
				switch {
				case errors.Is(err, sendloop.ErrSubscriberNotFound):
				case err != nil:
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("reading the subscriber %s of list %d: %w", key, j.listID, err)
						cancel()
					}
					mu.Unlock()
					continue
				default:
					st = stateOf(s.SubscriptionStatus, s.BounceType)
				}
				mu.Lock()
				states[a.hash(key)] = st
				mu.Unlock()
			}
		})
	}
feed:
	for _, key := range keys {
		select {
		case next <- key:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// SuppressedError refuses a message sent on its own (CheckMessage) that has an address the
// account suppresses everywhere: the message goes to nobody, as a bulk send sends no row to
// a suppressed address. Match it with errors.As.
type SuppressedError struct {
	// Addresses are the message's suppressed addresses, in its order (To, Cc, Bcc).
	Addresses []string
	// Reasons holds why each of Addresses may not be mailed.
	Reasons map[string]string
}

func (e *SuppressedError) Error() string {
	why := make([]string, len(e.Addresses))
	for i, addr := range e.Addresses {
		why[i] = addr + " is " + e.Reasons[addr]
	}
	return "mailmerge: not sent: " + strings.Join(why, "; ") + "; the message goes to nobody while an address is suppressed"
}

// CheckMessage refuses msg with a *SuppressedError when one of its recipients (To, Cc and
// Bcc, each an address or a "Name <address>") is on the account's global suppression list,
// read through c with one suppression.list.get per address: the check a bulk send makes of
// every row, for a message sent on its own (`sendloop send --to`). A recipient that does
// not parse is looked up as written; the relay's own checks say what is wrong with it.
func CheckMessage(ctx context.Context, c *sendloop.Client, msg *smtp.Message) error {
	var addrs []string
	for _, list := range [][]string{msg.To, msg.Cc, msg.Bcc} {
		for _, v := range list {
			if addr, err := mail.ParseAddress(v); err == nil {
				addrs = append(addrs, addr.Address)
			} else {
				addrs = append(addrs, v)
			}
		}
	}
	reasons, err := suppressed(ctx, c, addrs...)
	if err != nil {
		return err
	}
	refused := &SuppressedError{Reasons: reasons}
	for _, addr := range addrs {
		if _, ok := reasons[addr]; ok && !slices.Contains(refused.Addresses, addr) {
			refused.Addresses = append(refused.Addresses, addr)
		}
	}
	if len(refused.Addresses) > 0 {
		return refused
	}
	return nil
}

// suppressed returns, for each of addrs that the account suppresses everywhere (an entry
// of the global suppression list), the reason it may not be mailed, read with one
// suppression.list.get per address. An address not suppressed is not in the map.
func suppressed(ctx context.Context, c *sendloop.Client, addrs ...string) (map[string]string, error) {
	if c == nil {
		return nil, errors.New("mailmerge: CheckMessage needs a client")
	}
	out := map[string]string{}
	for _, addr := range addrs {
		entries, err := c.Suppression.Get(ctx, sendloop.NormalizeAddress(addr))
		switch {
		case errors.Is(err, sendloop.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading the suppression of %s: %w", addr, err)
		}
		for _, e := range entries {
			if e.ListID == sendloop.GlobalSuppression {
				out[addr] = suppressionReason(sendloop.GlobalSuppression, e.Type)
				break
			}
		}
	}
	return out, nil
}

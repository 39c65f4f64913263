package listsync

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/job"
)

// defaultMaxStateAge is how old a state's last full read may be by default.
const defaultMaxStateAge = 7 * 24 * time.Hour

// errStateLocked is a state that another run holds.
var errStateLocked = errors.New("in use by another run")

// StateOptions makes a sync keep a state of the list, and plan from it (see the package
// documentation, "Runs from a state").
type StateOptions struct {
	// Path is the state's file. It is read at the start of Plan and written, afresh, at
	// the end of an Apply that finished. With a Store, it is the state's name in messages.
	Path string
	// Store keeps the state elsewhere than in the file at Path (nil): see StateStore.
	Store StateStore
	// Full makes the run read the list's members whatever the state (and write a fresh
	// one).
	Full bool
	// MaxDrift bounds the drift since the state: the difference between the list's
	// subscribed members (list.getlist's ActiveSubscribers) and the state's, or the
	// subscriptions and unsubscriptions the list's activity chart counts since the state,
	// whichever is larger; beyond it the run is a full one. The zero Budget
	// allows no drift; DefaultStateOptions sets job.DefaultMaxDrift (5 % of the state's
	// members), as `sendloop sync --state` does.
	MaxDrift job.Budget
	// MaxAge bounds the time since the state's last full read: beyond it the run is a full
	// one. Zero is 7 days; a negative MaxAge is no bound.
	MaxAge time.Duration
	// Now returns the time; nil is time.Now.
	Now func() time.Time

	noSync bool       // for tests of many runs: no fsync, which costs milliseconds a file
	store  stateStore // where the state's bytes are, when not the file at Path (tests)
}

// DefaultStateOptions returns the options of a state at path as `sendloop sync --state`
// uses them by default: a drift of at most job.DefaultMaxDrift (5 % of the state's
// members), and a full read every 7 days (MaxAge's zero).
func DefaultStateOptions(path string) StateOptions {
	return StateOptions{Path: path, MaxDrift: job.DefaultMaxDrift}
}

// StateUse says whether a plan was made from the state, or why not.
type StateUse struct {
	// Used reports a plan made from the state: the members were not read.
	Used bool
	// Reason says why the state was not used ("" when it was).
	Reason string
	// Drift is the difference between the list's subscribed members and the state's, when
	// it was measured (a run from the state, or one whose drift made it a full one).
	Drift int
	// NoOwners reports a state that held no record of which members are the sync's (there
	// was none yet, it could not be read, or sendloop 0.4.0 wrote it): the run records the
	// members the source names and those it adds as the sync's, and UnsubscribeMissing
	// unsubscribes none of the others.
	NoOwners bool
}

// stateFallback ends a plan from the state: the run becomes a full one, for reason.
type stateFallback struct{ reason string }

func (f *stateFallback) Error() string { return "listsync: state not used: " + f.reason }

// stateRun is what a sync with a state keeps from Plan to the end of Apply.
type stateRun struct {
	opts    StateOptions
	store   stateStore // where the state's bytes are: the file at opts.Path, but in tests
	keys    keyDeriver // the client's: the state is bound to its API key, and sealed under it
	unlock  func()
	reader  *stateReader // the state, when usable, until read
	old     stateHeader
	use     StateUse
	mapping uint64
	now     time.Time

	mu          sync.Mutex
	changed     bool    // the next state differs from the one read: outcomes, or members found or added
	outcomes    *sorter // what Apply did to members, by member-file offset then order
	seq         uint32
	addFailed   map[int]bool // by position among the additions
	addUnknown  map[int]bool
	addsUnknown bool            // additions the service refused without saying which: every one unknown
	activity    activityReading // the list's activity chart as this run read it
	ownSubs     int             // the subscriptions this run made (imports), for the next base
	ownUnsubs   int             // the unsubscriptions it made
}

// The kinds of outcome records.
const (
	outUpdated      = iota + 1 // vals: the values now held
	outUnknown                 // the change may have run: read the member back next run
	outGone                    // not a member any more
	outUnsubscribed            // unsubscribed from the list
	outOwned                   // the sync's: added by it, or named by its source
)

// mappingHash fingerprints the mapped fields, in order: a state's values' fingerprints
// hold for this mapping only.
func mappingHash(m *Mapping) uint64 {
	var b []byte
	for _, f := range m.Fields {
		b = binary.AppendUvarint(b, uint64(f.Field.ID))
	}
	return valuesHash(b)
}

// startState locks the state and decides whether the run may plan from it.
func (j *Job) startState(ctx context.Context) (*stateRun, error) {
	o := *j.opts.State
	var store stateStore = fileStore{path: o.Path, sync: !o.noSync}
	switch {
	case o.Store != nil:
		store = apiStore{ctx: ctx, s: o.Store}
	case o.store != nil:
		store = o.store
	case o.Path == "":
		return nil, errors.New("listsync: a state needs a path")
	}
	unlock, err := store.lock()
	if err != nil {
		return nil, fmt.Errorf("listsync: state %s: %w", o.Path, err)
	}
	st := &stateRun{opts: o, store: store, keys: j.client.DeriveKey, unlock: unlock, mapping: mappingHash(j.mapping), now: time.Now()}
	if o.Now != nil {
		st.now = o.Now()
	}
	st.outcomes = newSorter(j.opts.TempDir, false)
	st.use.Reason = st.open(j)
	st.use.Used = st.use.Reason == ""
	st.use.NoOwners = !st.old.Owners
	if !st.use.Used {
		st.use.NoOwners = !st.hasOwners(j)
	}
	return st, nil
}

// hasOwners reports whether the state, not used for the plan, still says which members
// are the sync's: it opens, and is the account's and the list's (its mapping, its age or
// an unfinished run do not change whose members are whose).
func (st *stateRun) hasOwners(j *Job) bool {
	r, err := readStateIn(st.store, st.keys)
	if err != nil {
		return false
	}
	defer r.close()
	return r.header.Owners && r.header.BaseURL == j.client.BaseURL() && r.header.ListID == j.listID
}

// feedOwners gives a full run's planner the addresses the state holds as the sync's.
func (st *stateRun) feedOwners(j *Job, p *planner) error {
	if st.use.NoOwners {
		return nil
	}
	r, err := readStateIn(st.store, st.keys)
	if err != nil {
		// It opened when the run started: a state replaced meanwhile would be another
		// run's, which the lock forbids. Without owners, none of the absent is the sync's.
		st.use.NoOwners = true
		return nil
	}
	defer r.close()
	for {
		e, err := r.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// The owners read so far are the sync's all the same: fewer are unsubscribed.
			st.use.NoOwners = true
			return nil
		}
		if e.Owned {
			if err := p.addOwner(e.Email); err != nil {
				return err
			}
		}
	}
}

// own records that the member whose record is at off is the sync's in the next state;
// fresh says the state read did not hold it so. A state member the state held as the
// sync's keeps the mark of its record.
func (st *stateRun) own(off uint64, fresh bool) {
	if st.use.Used && !fresh {
		return
	}
	st.outcome(off, outOwned, 0)
}

// open reads the state's header, and returns why the run cannot plan from it ("" when it
// can).
func (st *stateRun) open(j *Job) string {
	if st.opts.Full {
		return "a full run was asked for"
	}
	r, err := readStateIn(st.store, st.keys)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no state yet"
	case errors.Is(err, errStateOtherAccount):
		return err.Error()
	case err != nil:
		return "unreadable: " + strings.TrimPrefix(err.Error(), "open ")
	}
	h := r.header
	maxAge := st.opts.MaxAge
	if maxAge == 0 {
		maxAge = defaultMaxStateAge
	}
	reason := ""
	switch {
	case h.BaseURL != j.client.BaseURL():
		reason = "written for another account (" + h.BaseURL + ")"
	case h.ListID != j.listID:
		reason = fmt.Sprintf("written for list %d", h.ListID)
	case h.Mapping != st.mapping:
		reason = "written for another mapping of the source's fields"
	case r.inUse:
		reason = "marked in use by a run that did not finish"
	case maxAge > 0 && st.now.Sub(h.LastFull) > maxAge:
		reason = "older than " + describeAge(maxAge)
	}
	if reason != "" {
		r.close()
		return reason
	}
	st.reader, st.old = r, h
	return ""
}

// describeAge writes d in days when it is whole days.
func describeAge(d time.Duration) string {
	const day = 24 * time.Hour
	if d%day == 0 {
		if d == day {
			return "1 day"
		}
		return fmt.Sprintf("%d days", d/day)
	}
	return d.String()
}

// fallBack makes the run a full one.
func (st *stateRun) fallBack(reason string) {
	st.use.Used, st.use.Reason = false, reason
	if st.reader != nil {
		st.reader.close()
		st.reader = nil
	}
}

// close releases the state.
func (st *stateRun) close() {
	if st == nil {
		return
	}
	if st.reader != nil {
		st.reader.close()
		st.reader = nil
	}
	st.outcomes.close()
	if st.unlock != nil {
		st.unlock()
		st.unlock = nil
	}
}

// feed gives the planner the state's members in place of the list's, while one
// list.getlist call measures the drift; a state that does not read to its end, or a drift
// beyond the limit, is a *stateFallback.
func (st *stateRun) feed(ctx context.Context, j *Job, p *planner, members func()) error {
	type answer struct {
		active int
		found  bool
		err    error
	}
	ch := make(chan answer, 1)
	type chart struct {
		a   activityReading
		err error
	}
	charted := make(chan chart, 1)
	go func() {
		a, err := st.readActivity(ctx, j, st.old.Activity)
		charted <- chart{a, err}
	}()
	go func() {
		lists, err := j.client.Lists.List(ctx)
		for _, l := range lists {
			if l.ListID == j.listID {
				ch <- answer{active: l.ActiveSubscribers, found: true}
				return
			}
		}
		ch <- answer{err: err}
	}()
	r := st.reader
	defer func() {
		r.close()
		st.reader = nil
	}()
	held := 0
	for {
		e, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			<-ch
			<-charted
			return &stateFallback{"unreadable: " + err.Error()}
		}
		if err := p.addStateMember(e); err != nil {
			<-ch
			<-charted
			return err
		}
		if e.Status != statusUnsubscribed {
			held++
		}
		members()
	}
	a := <-ch
	c := <-charted
	switch {
	case a.err != nil:
		return a.err
	case c.err != nil:
		return &stateFallback{strings.TrimPrefix(c.err.Error(), "listsync: ")}
	case c.a.tooOld != "":
		return &stateFallback{c.a.tooOld}
	}
	// A full run after all writes the chart as read for its base; a run from the state
	// keeps the state's base, for what the state does not hold (the changes counted since)
	// to count again next time, until a full run reads them.
	st.activity = c.a
	fresh := c.a.base
	if !a.found {
		return &stateFallback{"list.getlist does not show the list"}
	}
	if c.a.measured {
		st.activity.base = st.old.Activity
	}
	net := abs(a.active - r.subs)
	// The net count misses a sign-up offset by an unsubscription; the chart's counts of
	// each since the state do not (and miss a deletion, which the net count sees).
	drift := max(net, c.a.gross())
	st.use.Drift = drift
	limit := st.opts.MaxDrift
	if allowed := limit.Allowed(held); allowed >= 0 && drift > allowed {
		st.activity.base = fresh // a full run: the state it writes holds the list as read
		if drift > net {
			return &stateFallback{fmt.Sprintf("%d subscriptions and %d unsubscriptions on the list since the state (its activity chart): a drift of %d, beyond %s (%d)",
				c.a.Subs, c.a.Unsubs, drift, limit, allowed)}
		}
		return &stateFallback{fmt.Sprintf("the list has %d subscribed members, the state %d: a drift of %d, beyond %s (%d)",
			a.active, r.subs, drift, limit, allowed)}
	}
	return nil
}

// chartForBase reads the list's activity chart in a full run, for the next state's base;
// a chart that cannot be read leaves the state without one (its next run counts the net
// drift only, and reads a base).
func (st *stateRun) chartForBase(ctx context.Context, j *Job) {
	if st.activity.base.From != "" {
		return // read by the run from the state that became a full one
	}
	if a, err := st.readActivity(ctx, j, activityBase{}); err == nil && a.tooOld == "" {
		st.activity = a
	}
}

// notAMember reports an answer saying that an address is not a member of the list.
func notAMember(err error) bool {
	return errors.Is(err, sendloop.ErrNotInList) || errors.Is(err, sendloop.ErrSubscriberNotFound) ||
		errors.Is(err, sendloop.ErrNotFound)
}

// The kinds of lookUp's records, by line.
const (
	lookupUpdate       = iota + 1 // a member whose values differ: an update
	lookupSame                    // a member whose values match: unchanged
	lookupUnsubscribed            // a member who unsubscribed: skipped
	lookupGone                    // no member at the address: an addition, as a full run plans it
)

// lookUp reads back (subscriber.get, by the row's address) each address the plan would
// add that the state did not know or marked unknown, each member the plan would update,
// and each member the state holds as unsubscribed whose row differs from it: a member of
// any status becomes an update, unchanged or skipped row, and an address without one an
// addition, as a full run would decide. So no one who unsubscribed is subscribed again,
// an update reaches the member at the row's address and not whoever holds the state's
// subscriber ID now (an address changed on the service side), and a resubscription on the
// service side is updated as a full run updates it.
func (j *Job) lookUp(ctx context.Context, pl *Plan) error {
	p := pl.planner
	if pl.Adds == 0 && pl.Updates == 0 && p.rechecks == 0 {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	found := newSorter(p.opts.TempDir, true)
	defer found.close()
	var mu sync.Mutex
	r, err := j.open(ctx)()
	if err != nil {
		return err
	}
	defer r.close()
	ids := p.fieldIDs()
	err = forEach(ctx, j.opts.Concurrency, pl.events(r, EventAdd|EventUpdate|eventRecheck, false), func(ev Event) {
		if ev.Kind != EventAdd && ev.Kind != EventUpdate && ev.Kind != eventRecheck {
			return // the source changed: Apply reports the row
		}
		k1, k2 := p.key(ev.Row.Key)
		sub, err := j.client.Subscribers.Get(ctx, j.listID, sendloop.SubscriberGetParams{EmailAddress: ev.Row.Email})
		if notAMember(err) {
			if ev.Kind == EventAdd {
				return // an addition still
			}
			mu.Lock()
			defer mu.Unlock()
			if err := found.add(rec{k1: k1, k2: k2, seq: uint32(ev.Row.Line), kind: lookupGone, off: ev.off}); err != nil {
				cancel(err)
			}
			return
		}
		if err != nil {
			cancel(err)
			return
		}
		values := make([]string, len(ids))
		for i, id := range ids {
			values[i] = sub.CustomFields[id]
		}
		rowVals := p.valuesHash(p.appendValues(nil, func(i int) string { return ev.Row.Values[i] }))
		m := rec{k1: k1, k2: k2, id: uint32(sub.SubscriberID), seq: uint32(ev.Row.Line)}
		if string(sub.SubscriptionStatus) == statusUnsubscribed {
			// The state holds the row's values for a member who unsubscribed, checked: it is
			// read back again when the source changes them, not every night.
			m.vals, values = rowVals, nil
		}
		if err := p.writeMemberLocked(&m, dataFound, sub.EmailAddress, string(sub.SubscriptionStatus), values); err != nil {
			cancel(err)
			return
		}
		switch {
		case string(sub.SubscriptionStatus) == statusUnsubscribed:
			m.kind = lookupUnsubscribed
		case m.vals == rowVals:
			m.kind = lookupSame
		default:
			m.kind = lookupUpdate
		}
		if ev.Kind != EventAdd {
			// The state's record of the address gives way to the one read back.
			p.forget(ev.off)
		}
		mu.Lock()
		defer mu.Unlock()
		if err := found.add(m); err != nil {
			cancel(err)
		}
	})
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		return err
	}
	return pl.decideFound(found)
}

// decideFound rewrites the plan's decisions with the members lookUp found (and the
// addresses it found none at), as a full run would have decided them; no decisionRecheck
// is left.
func (pl *Plan) decideFound(found *sorter) error {
	p := pl.planner
	fc, err := found.cursor()
	if err != nil {
		return err
	}
	f, okF, err := fc.next()
	if err != nil {
		return err
	}
	decisions := newSorter(p.opts.TempDir, true)
	for d, err := range p.decisions.all() {
		if err != nil {
			decisions.close()
			return err
		}
		for okF && f.seq < d.seq {
			if f, okF, err = fc.next(); err != nil {
				decisions.close()
				return err
			}
		}
		hit := okF && f.seq == d.seq
		switch {
		case d.kind == decisionAdd && hit && f.kind != lookupGone:
			pl.Adds--
		case d.kind == decisionUpdate && hit:
			pl.Updates--
			pl.Members-- // counted as a member of the state: counted below as what it is now
		case d.kind == decisionRecheck && hit:
			pl.SkippedUnsubscribed--
		case d.kind == decisionRecheck:
			continue // the source changed since: Apply reports the row
		default:
			if err := decisions.add(d); err != nil {
				decisions.close()
				return err
			}
			continue
		}
		switch f.kind {
		case lookupGone:
			// The state's member left the address (deleted, or renamed on the service
			// side): a full run would add the row's address, or skip it if suppressed.
			if p.forget != nil {
				p.forget(f.off)
			}
			if p.suppressedRows[d.seq] {
				pl.SkippedSuppressed++
				continue
			}
			pl.Adds++
			d = rec{k1: d.k1, k2: d.k2, seq: d.seq, kind: decisionAdd}
		case lookupUnsubscribed:
			pl.SkippedUnsubscribed++
			continue
		case lookupSame:
			pl.Members++
			pl.Unchanged++
			continue
		default:
			pl.Members++
			pl.Updates++
			d = f
			d.kind = decisionUpdate
		}
		if err := decisions.add(d); err != nil {
			decisions.close()
			return err
		}
	}
	p.decisions.close()
	p.decisions = decisions
	return nil
}

// outcome records what Apply did to the member whose record is at off.
func (st *stateRun) outcome(off uint64, kind uint32, vals uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.changed = true
	st.seq++
	if kind == outUnsubscribed {
		st.ownUnsubs++
	}
	// A record of the sorter by key: the offset leads, the order of the outcomes follows.
	if err := st.outcomes.add(rec{k1: off, seq: st.seq, kind: kind, vals: vals}); err != nil {
		st.addsUnknown = true // cannot happen but for a full disk: the write fails later
	}
}

// addsDone records which additions failed (by their position) and which are unknown.
func (st *stateRun) addsDone(report *sendloop.ImportReport) {
	st.addFailed, st.addUnknown = map[int]bool{}, map[int]bool{}
	for _, f := range report.Failed {
		st.addFailed[f.Index] = true
	}
	for _, f := range report.Unknown {
		st.addUnknown[f.Index] = true
	}
	st.addsUnknown = st.addsUnknown || report.Unattributed > 0
	st.mu.Lock()
	st.ownSubs += report.Imported
	st.mu.Unlock()
}

// writeState writes the state of the list after Apply: every record of the member file (the
// members read, those looked up, the addresses added), as Apply's outcomes left them. The
// file is read in order, the outcomes merged by offset.
func (pl *Plan) writeState() error {
	st, p, j := pl.state, pl.planner, pl.job
	if st.use.Used && !st.changed && !p.grown && !st.use.NoOwners {
		// Nothing changed since the state was read: it holds the list as it is. Its in-use
		// mark goes, and it is not written again (an unchanged run costs its reading).
		return st.store.mark(0)
	}
	h := stateHeader{BaseURL: j.client.BaseURL(), ListID: j.listID, Mapping: st.mapping, LastFull: st.now, Owners: true}
	if b := st.activity.base; b.From != "" {
		// The chart as read, and what this run added to it since.
		b.Subs += uint64(st.ownSubs)
		b.Unsubs += uint64(st.ownUnsubs)
		h.Activity = b
	}
	if st.use.Used {
		h.LastFull = st.old.LastFull
	}
	p.dataMu.Lock()
	defer p.dataMu.Unlock()
	if err := p.dataW.Flush(); err != nil {
		return err
	}
	oc, err := st.outcomes.cursor()
	if err != nil {
		return err
	}
	o, okO, err := oc.next()
	if err != nil {
		return err
	}
	w, err := createStateIn(st.store, st.keys, h)
	if err != nil {
		return err
	}
	in := bufio.NewReaderSize(io.NewSectionReader(p.data, 0, p.dataOff), 64<<10)
	adds := 0
	for off := int64(0); off < p.dataOff; {
		m, n, err := readMemberRecord(in, len(p.mapping.Fields))
		if err != nil {
			w.abort()
			return err
		}
		base := m.kind &^ dataFlags
		e := stateEntry{ID: m.id, Email: strings.ToLower(sendloop.NormalizeAddress(m.email)), Status: m.status,
			Values: m.vals, Unknown: m.kind&dataUnknown != 0,
			// A member read back or added is named by the source: the sync's.
			Owned: m.kind&dataOwned != 0 || base == dataFound || base == dataAdded}
		keep := true
		if base == dataAdded {
			keep = !st.addFailed[adds]
			e.Unknown = st.addsUnknown || st.addUnknown[adds]
			adds++
		}
		for okO && o.k1 < uint64(off) {
			if o, okO, err = oc.next(); err != nil {
				w.abort()
				return err
			}
		}
		for okO && o.k1 == uint64(off) {
			switch o.kind {
			case outUpdated:
				e.Values = o.vals
			case outUnknown:
				e.Unknown = true
			case outGone:
				keep = false
			case outUnsubscribed:
				e.Status = statusUnsubscribed
			case outOwned:
				e.Owned = true
			}
			if o, okO, err = oc.next(); err != nil {
				w.abort()
				return err
			}
		}
		if keep {
			if err := w.add(e); err != nil {
				w.abort()
				return err
			}
		}
		off += int64(n)
	}
	return w.commit()
}

// readMemberRecord reads a record of the member file in order, skipping its values; it
// returns its length.
func readMemberRecord(in *bufio.Reader, fields int) (memberInfo, int, error) {
	var m memberInfo
	n := 0
	bad := func(err error) error { return fmt.Errorf("listsync: reading the plan's temporary file: %w", err) }
	kind, err := in.ReadByte()
	if err != nil {
		return m, 0, bad(err)
	}
	m.kind = kind
	n++
	id, err := binary.ReadUvarint(in)
	if err != nil {
		return m, 0, bad(err)
	}
	m.id = int(id)
	n += uvarintLen(id)
	var v [8]byte
	if _, err := io.ReadFull(in, v[:]); err != nil {
		return m, 0, bad(err)
	}
	m.vals = binary.LittleEndian.Uint64(v[:])
	n += 8
	str := func(keep bool) (string, error) {
		l, err := binary.ReadUvarint(in)
		if err != nil {
			return "", err
		}
		n += uvarintLen(l) + int(l)
		if !keep {
			_, err := in.Discard(int(l))
			return "", err
		}
		b := make([]byte, l)
		_, err = io.ReadFull(in, b)
		return string(b), err
	}
	if m.email, err = str(true); err != nil {
		return m, 0, bad(err)
	}
	if m.status, err = str(true); err != nil {
		return m, 0, bad(err)
	}
	has, err := in.ReadByte()
	if err != nil {
		return m, 0, bad(err)
	}
	n++
	if has == 1 {
		for range fields {
			if _, err := str(false); err != nil {
				return m, 0, bad(err)
			}
		}
	}
	return m, n, nil
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// recorder hears what Apply does to the plan's members and rows. A sync with a state keeps
// it (stateRecorder), for the next run to plan from; one without keeps nothing (noRecord).
// Apply calls it without asking which: where the outcomes go is the recorder's business.
type recorder interface {
	// begin is called before the first change: a run that does not finish must leave a
	// record the next run does not trust.
	begin() error
	// added is called with each row sent to subscriber.import, in order.
	added(row MappedRow) error
	// addsDone is called with subscriber.import's report, once the additions are sent.
	addsDone(report *sendloop.ImportReport)
	// outcome records what Apply did to the member whose record is at off.
	outcome(off uint64, kind uint32, vals uint64)
	// fromState reports a plan made from a record of the list rather than from its members.
	fromState() bool
	// finish is called after an Apply that finished (no error, not interrupted).
	finish() error
}

// noRecord is the recorder of a sync without a state: it keeps nothing.
type noRecord struct{}

func (noRecord) begin() error                    { return nil }
func (noRecord) added(MappedRow) error           { return nil }
func (noRecord) addsDone(*sendloop.ImportReport) {}
func (noRecord) outcome(uint64, uint32, uint64)  {}
func (noRecord) fromState() bool                 { return false }
func (noRecord) finish() error                   { return nil }

// stateRecorder is the recorder of a sync with a state: the outcomes go to the state run,
// and the addresses added to the plan's member file, which the next state is written from.
type stateRecorder struct{ pl *Plan }

func (r stateRecorder) begin() error {
	return r.pl.state.store.mark(1)
}

func (r stateRecorder) added(row MappedRow) error {
	p := r.pl.planner
	m := rec{vals: p.valuesHash(p.appendValues(nil, func(i int) string { return row.Values[i] }))}
	return p.writeMemberLocked(&m, dataAdded, row.Key, statusSubscribed, nil)
}

func (r stateRecorder) addsDone(report *sendloop.ImportReport) { r.pl.state.addsDone(report) }

func (r stateRecorder) outcome(off uint64, kind uint32, vals uint64) {
	r.pl.state.outcome(off, kind, vals)
}

func (r stateRecorder) fromState() bool { return r.pl.State.Used }

func (r stateRecorder) finish() error { return r.pl.writeState() }

// recorder returns the plan's recorder.
func (pl *Plan) recorder() recorder {
	if pl.state == nil {
		return noRecord{}
	}
	return stateRecorder{pl}
}

package listsync

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/go-sendloop/sendloop"
)

// statusUnsubscribed is the SubscriptionStatus of a member who unsubscribed.
const statusUnsubscribed = "Unsubscribed"

// progressEvery is how many records go by between two plannerOptions.Progress calls.
const progressEvery = 1024

// plannerOptions tunes a planner.
type plannerOptions struct {
	// UnsubscribeMissing plans the unsubscription of members the source does not name.
	UnsubscribeMissing bool
	// Owners, with a state, limits UnsubscribeMissing to the members the sync owns (a
	// kindOwned record names them): the others absent are kept, counted in KeptNotOwned.
	Owners bool
	// TempDir is where the plan keeps its temporary files; "" means os.TempDir().
	TempDir string
	// Progress, when set, is called now and then while the source is read, with the
	// number of bytes read so far (CSV) or of rows.
	Progress func(offset int64)
}

// The kinds of rec.
const (
	kindMember       = iota + 1 // a member of the list
	kindUnsubscribed            // a member who unsubscribed
	kindSuppressed              // an address of a suppression list
	kindRow                     // a row to add, update or keep
	kindProtect                 // a skipped or rejected row naming an address: its member stays
	kindStateUnknown            // an address the state marks unknown: no member until read back
	kindOwned                   // an address the sync owns (it added it, or its source named it), by the state

	decisionAdd
	decisionUpdate
	decisionDuplicate
	decisionReject // a row rejected as read: applying reports it by its line
	// decisionRecheck is a row of a member a state holds as unsubscribed whose values
	// differ from the state's: lookUp reads it back (a resubscription on the service side
	// makes it an update, as a full run plans it) and leaves no such decision.
	decisionRecheck
)

// planner compares a CSV with a list's members in memory that does not grow with either:
// members, suppressed addresses and rows become fixed-size records (a 128-bit fingerprint of
// the address, a 64-bit one of the field values) sorted on disk and merged, and the members'
// addresses and values wait in a temporary file for the few that an update or an
// unsubscription needs. The files have no name (removed as soon as created); Close closes
// them.
type planner struct {
	mapping *Mapping
	opts    plannerOptions
	seeds   [3]maphash.Seed

	members *sorter // members and suppressed addresses, by key
	data    *os.File
	dataW   *bufio.Writer
	dataOff int64
	count   int
	scratch []byte // addMember's encoding of a member
	err     error
	dataMu  sync.Mutex       // guards data, dataW and scratch once the plan is made (lookups, Apply)
	forget  func(off uint64) // in a run from a state: drop the member record at off from the next state
	// own, with a state, records that the member whose record is at off is the sync's in the
	// next state; fresh says the state did not hold it so.
	own func(off uint64, fresh bool)
	// checked, in a full run with a state, records the row's values for a member who
	// unsubscribed, as the next state's: a run from it reads such a member back only when
	// the source changes the row again.
	checked func(off, vals uint64)
	grown   bool // members were recorded after the plan was made (read back, added)
	// suppressedRows, in a run from a state, holds the lines of the rows planned for a
	// member that are on a suppression list too: read back and gone, they are skipped, not
	// added. (Rare: a member is seldom suppressed.)
	suppressedRows map[uint32]bool
	rechecks       int // decisionRecheck records

	rowScratch []byte // readSource's encoding of a row's values
	valScratch []byte // writeMember's encoding of a member's values

	plan      *Plan
	rows      *sorter // the rows naming an address, by key then line
	decisions *sorter // what to do with each row to add, update or reject, by line (readSource adds the rejected rows, join the rest)
	absent    *sorter // the members to unsubscribe, in browse order
	bufs      *runBuffers
}

// newPlanner returns a planner for sources read through m.
func newPlanner(m *Mapping, opts plannerOptions) (*planner, error) {
	dir := opts.TempDir
	p := &planner{mapping: m, opts: opts}
	p.plan = &Plan{planner: p}
	for i := range p.seeds {
		p.seeds[i] = maphash.MakeSeed()
	}
	p.bufs = new(runBuffers)
	p.members, p.rows = p.newSorter(false), p.newSorter(false)
	p.decisions, p.absent = p.newSorter(true), p.newSorter(true)
	var err error
	if p.data, err = createTemp(dir, "sendloop-sync-members-*"); err != nil {
		return nil, err
	}
	p.dataW = bufio.NewWriterSize(p.data, 64<<10)
	return p, nil
}

// close closes the plan's temporary files (removed as soon as created); the Plan cannot be
// read after it.
func (p *planner) close() error {
	for _, s := range []*sorter{p.members, p.rows, p.decisions, p.absent} {
		s.close()
	}
	closeTemp(p.data)
	return nil
}

// key returns the fingerprint of an address, compared case-insensitively.
func (p *planner) key(lower string) (uint64, uint64) {
	return maphash.String(p.seeds[0], lower), maphash.String(p.seeds[1], lower)
}

// valuesHash returns the fingerprint of the mapped fields' values, in mapping order, as
// appendValues encodes them. It is FNV-1a, the same from run to run: a state keeps it.
func (p *planner) valuesHash(encoded []byte) uint64 { return valuesHash(encoded) }

func valuesHash(encoded []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range encoded {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// appendValues appends the mapped fields' values, in mapping order, each after its length.
func (p *planner) appendValues(b []byte, value func(i int) string) []byte {
	for i := range p.mapping.Fields {
		b = appendString(b, value(i))
	}
	return b
}

// addMember records a subscriber of the list, with the values of the mapped fields in
// mapping order (fieldIDs). A later record for the same address replaces an earlier one. An
// error (writing the temporary files) is also returned by Plan.
func (p *planner) addMember(id int, email, status string, values []string) error {
	if p.err != nil {
		return p.err
	}
	r := rec{id: uint32(id), seq: uint32(p.count), kind: kindMember}
	if status == statusUnsubscribed {
		r.kind = kindUnsubscribed
	}
	r.k1, r.k2 = p.key(strings.ToLower(sendloop.NormalizeAddress(email)))
	if p.err = p.writeMember(&r, dataMember, email, status, values); p.err == nil {
		p.count++
		p.err = p.members.add(r)
	}
	return p.err
}

// addStateMember records a member as a state holds it: its values' fingerprint only.
func (p *planner) addStateMember(e stateEntry) error {
	if p.err != nil {
		return p.err
	}
	r := rec{id: uint32(e.ID), seq: uint32(p.count), kind: kindMember, vals: e.Values}
	kind := byte(dataMember)
	if e.Owned {
		kind |= dataOwned
	}
	switch {
	case e.Unknown:
		r.kind, kind = kindStateUnknown, dataMember|dataUnknown
	case e.Status == statusUnsubscribed:
		r.kind = kindUnsubscribed
	}
	r.k1, r.k2 = p.key(e.Email)
	if p.err = p.writeMember(&r, kind, e.Email, e.Status, nil); p.err == nil {
		p.count++
		p.err = p.members.add(r)
	}
	if p.err == nil && e.Owned {
		p.err = p.members.add(rec{k1: r.k1, k2: r.k2, kind: kindOwned})
	}
	return p.err
}

// addOwner records that the state holds address lower as the sync's: read from the state
// in a full run, whose members come from the list.
func (p *planner) addOwner(lower string) error {
	if p.err != nil {
		return p.err
	}
	k1, k2 := p.key(lower)
	p.err = p.members.add(rec{k1: k1, k2: k2, kind: kindOwned})
	return p.err
}

// The kinds of the member file's records (see writeMember).
const (
	dataMember  = 1 // a member the plan read (from the list or from the state)
	dataFound   = 2 // a member the state did not know, read back before deciding
	dataAdded   = 3 // an address Apply sent to subscriber.import
	dataUnknown = 1 << 4
	dataOwned   = 1 << 5 // a member the state holds as the sync's
	dataFlags   = dataUnknown | dataOwned
)

// writeMember appends a member's record to the member file and points r at it: its kind,
// ID, values' fingerprint, address, status, and values when known (nil values are a
// state's member, known by its fingerprint r.vals only: otherwise writeMember sets r.vals).
// The file reads in order (stateFromPlan) as well as by offset (memberText). Until the plan
// is made it is called from one goroutine; after, through writeMemberLocked.
func (p *planner) writeMember(r *rec, kind byte, email, status string, values []string) error {
	vb := p.valScratch[:0]
	if values != nil {
		vb = p.appendValues(vb, func(i int) string { return values[i] })
		r.vals = p.valuesHash(vb)
	}
	p.valScratch = vb
	b := append(p.scratch[:0], kind)
	b = binary.AppendUvarint(b, uint64(r.id))
	b = binary.LittleEndian.AppendUint64(b, r.vals)
	b = appendString(b, email)
	b = appendString(b, status)
	if values == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = append(b, vb...)
	}
	p.scratch = b
	r.off, r.n = uint64(p.dataOff), uint32(len(b))
	if _, err := p.dataW.Write(b); err != nil {
		return err
	}
	p.dataOff += int64(len(b))
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// fieldIDs returns the IDs of the mapped fields, in mapping order: the values addMember
// takes.
func (p *planner) fieldIDs() []int { return mappedFieldIDs(p.mapping) }

// mappedFieldIDs returns the IDs of m's fields, in mapping order.
func mappedFieldIDs(m *Mapping) []int {
	ids := make([]int, len(m.Fields))
	for i, f := range m.Fields {
		ids[i] = f.Field.ID
	}
	return ids
}

// newSorter returns a sorter of the plan's (see newSorter), sharing its run buffers.
func (p *planner) newSorter(byLine bool) *sorter {
	s := newSorter(p.opts.TempDir, byLine)
	s.bufs = p.bufs
	return s
}

// suppress records an address of the suppression list: the plan never adds it.
func (p *planner) suppress(email string) error {
	if p.err != nil {
		return p.err
	}
	k1, k2 := p.key(strings.ToLower(sendloop.NormalizeAddress(email)))
	p.err = p.members.add(rec{k1: k1, k2: k2, kind: kindSuppressed})
	return p.err
}

// writeMemberLocked is writeMember once the plan is made, when calls may come from more than
// one goroutine.
func (p *planner) writeMemberLocked(r *rec, kind byte, email, status string, values []string) error {
	p.dataMu.Lock()
	defer p.dataMu.Unlock()
	p.grown = true
	return p.writeMember(r, kind, email, status, values)
}

// memberInfo is a record of the member file.
type memberInfo struct {
	kind          byte
	id            int
	vals          uint64
	email, status string
	values        []string // nil for a member known by its values' fingerprint only
}

// memberText reads a member's record back from the member file.
func (p *planner) memberText(r rec) (memberInfo, error) {
	p.dataMu.Lock()
	defer p.dataMu.Unlock()
	if err := p.dataW.Flush(); err != nil {
		return memberInfo{}, err
	}
	b := make([]byte, r.n)
	if _, err := p.data.ReadAt(b, int64(r.off)); err != nil {
		return memberInfo{}, fmt.Errorf("reading the plan's temporary file: %w", err)
	}
	m, _, err := p.parseMember(b)
	return m, err
}

// parseMember decodes the record at the start of b, and returns its length.
func (p *planner) parseMember(b []byte) (memberInfo, int, error) {
	start := len(b)
	bad := errors.New("listsync: the plan's temporary file is damaged")
	var m memberInfo
	if len(b) < 1 {
		return m, 0, bad
	}
	m.kind, b = b[0], b[1:]
	id, k := binary.Uvarint(b)
	if k <= 0 || len(b) < k+8 {
		return m, 0, bad
	}
	m.id, m.vals, b = int(id), binary.LittleEndian.Uint64(b[k:]), b[k+8:]
	next := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	var ok1, ok2 bool
	m.email, ok1 = next()
	m.status, ok2 = next()
	if !ok1 || !ok2 || len(b) < 1 {
		return m, 0, bad
	}
	has := b[0]
	b = b[1:]
	if has == 1 {
		m.values = make([]string, len(p.mapping.Fields))
		for i := range m.values {
			v, ok := next()
			if !ok {
				return m, 0, bad
			}
			m.values[i] = v
		}
	}
	return m, start - len(b), nil
}

// Change is a custom field an update changes.
type Change struct {
	// Field is the custom field.
	Field Field
	// Header is the source's name for it (the CSV column's name).
	Header string
	// From is the member's value; To the row's.
	From, To string
}

// Update is a member whose custom fields differ from its row.
type Update struct {
	// Line is the row's line.
	Line int
	// SubscriberID identifies the member.
	SubscriberID int
	// Email is the member's address, as the list holds it.
	Email string
	// Fields holds the new values of the changed fields, by field ID.
	Fields map[int]string
	// Changes lists the changed fields, in the mapping's order. In a plan made from the
	// state (Plan.State) a member the state knows has no values, only their fingerprint:
	// every mapped field is set, and From is empty.
	Changes []Change
}

// Unsubscribe is a member the source does not name.
type Unsubscribe struct {
	// SubscriberID identifies the member.
	SubscriberID int
	// Email is the member's address, as the list holds it.
	Email string
}

// Plan is what a sync would do. Every row of the source is counted once: in Adds, Updates,
// Unchanged, one of the Skipped counts or Rejected.
type Plan struct {
	// Rows is the number of data records in the file.
	Rows int
	// Adds is the number of rows whose address is new to the list.
	Adds int
	// Updates is the number of members whose custom fields differ from their row.
	Updates int
	// Unsubscribes is the number of members to unsubscribe: those the CSV does not name
	// (with UnsubscribeMissing, and when no record is unreadable).
	Unsubscribes int
	// Members counts the list's members that are subscribed or pending: the base of the
	// share of the list that Unsubscribes would remove.
	Members int
	// Unchanged counts the members whose row matches them.
	Unchanged int
	// SkippedUnsubscribed counts rows of members who unsubscribed: a sync does not
	// subscribe them again.
	SkippedUnsubscribed int
	// SkippedSuppressed counts rows whose address is on the suppression list.
	SkippedSuppressed int
	// SkippedStatus counts rows whose SubscriptionStatus column says other than Subscribed.
	SkippedStatus int
	// Rejected counts the rows rejected: malformed, without a valid address, or repeating
	// an address of an earlier row.
	Rejected int
	// Absent counts the subscribed or pending members the CSV does not name (whether or not
	// they are to be unsubscribed).
	Absent int
	// KeptNotOwned counts the absent members kept because they are not the sync's: with a
	// state, UnsubscribeMissing unsubscribes only the members the sync added or its source
	// named at some run (Options.UnsubscribeAll unsubscribes them all). Among Absent.
	KeptNotOwned int
	// UnsubscribeRule is the rule UnsubscribeMissing followed: "owned" (with a state: the
	// sync's members only), "all" (every member the source does not name: without a
	// state, which records no owners, or with Options.UnsubscribeAll), or "none" (without
	// UnsubscribeMissing).
	UnsubscribeRule string
	// Unreadable counts records the CSV reader could not parse (an unterminated quote
	// swallows the lines after it): who is absent from the file is then unknown, and no
	// member is planned for unsubscription.
	Unreadable int

	// State says whether the plan was made from the state (Options.State), or why not.
	State StateUse

	planner *planner
	job     *Job
	state   *stateRun
	applied bool
	early   bool // the rows were read by the reading Plan started beside list.get
}

// Mapping returns the mapping the plan's rows are read through.
func (pl *Plan) Mapping() *Mapping { return pl.planner.mapping }

// Close removes the plan's temporary files and releases the state's lock; the plan cannot
// be read or applied after it.
func (pl *Plan) Close() error {
	pl.state.close()
	return pl.planner.close()
}

// readSource reads the source that open opens, once, into the plan's records. It may run
// while members and suppressed addresses are added (in another goroutine), and is called
// once per planner, before finish. When ctx ends it stops reading and returns ctx's error.
func (p *planner) readSource(ctx context.Context, open opener) error {
	pl := p.plan
	err := p.scan(ctx, open, func(row MappedRow) error {
		pl.Rows++
		switch {
		case row.Reject != "":
			pl.Rejected++
			if row.Malformed {
				pl.Unreadable++
			}
			// Kept by line, so that a reading of a source that changed since (a RowFunc
			// yielding other rows) reports the rows the plan rejected, and those only.
			if err := p.decisions.add(rec{seq: uint32(row.Line), kind: decisionReject}); err != nil {
				return err
			}
			// A member whose row is rejected is not missing from the file: a stray comma
			// must not unsubscribe anyone.
			// Nor one shifting the address out of its column: every address the row holds
			// is protected.
			for _, k := range row.Protect {
				k1, k2 := p.key(k)
				if err := p.rows.add(rec{k1: k1, k2: k2, seq: uint32(row.Line), kind: kindProtect}); err != nil {
					return err
				}
			}
			if row.Email == "" || row.Protect != nil {
				return nil
			}
			k1, k2 := p.key(strings.ToLower(row.Email))
			return p.rows.add(rec{k1: k1, k2: k2, seq: uint32(row.Line), kind: kindProtect})
		case row.Skip:
			pl.SkippedStatus++
			k1, k2 := p.key(row.Key)
			return p.rows.add(rec{k1: k1, k2: k2, seq: uint32(row.Line), kind: kindProtect})
		}
		k1, k2 := p.key(row.Key)
		p.rowScratch = p.appendValues(p.rowScratch[:0], func(i int) string { return row.Values[i] })
		return p.rows.add(rec{k1: k1, k2: k2, seq: uint32(row.Line), kind: kindRow,
			vals: p.valuesHash(p.rowScratch)})
	})
	if err != nil {
		return err
	}
	// The rows are all read: their last run is sorted and written now, while the members
	// may still be coming, rather than when the plan is made.
	return p.rows.finish()
}

// finish compares the members with the source's rows, address by address, and returns the
// plan; call it once, after readSource and the last addMember.
func (p *planner) finish() (*Plan, error) {
	if p.err != nil {
		return nil, p.err
	}
	if err := p.dataW.Flush(); err != nil {
		return nil, err
	}
	if err := p.join(p.plan); err != nil {
		return nil, err
	}
	p.bufs.drop() // the plan is made: its sorters take no more records
	return p.plan, nil
}

// join merges the members with the rows, address by address, and records the decisions.
func (p *planner) join(pl *Plan) error {
	members, err := p.members.cursor()
	if err != nil {
		return err
	}
	rows, err := p.rows.cursor()
	if err != nil {
		return err
	}
	nextM, nextR := members.next, rows.next
	if members.merge != nil && rows.merge != nil {
		// Two merges take a core each. One alone is read here: handing its records to
		// another core costs more than merging them (the batches travel between caches).
		membersAhead, rowsAhead := readAhead(members), readAhead(rows)
		defer membersAhead.close()
		defer rowsAhead.close()
		nextM, nextR = membersAhead.next, rowsAhead.next
	}
	m, okM, err := nextM()
	if err != nil {
		return err
	}
	r, okR, err := nextR()
	if err != nil {
		return err
	}
	for okM || okR {
		// The smallest key of the two heads, and every record of both that carries it.
		var k1, k2 uint64
		switch {
		case !okR || okM && (m.k1 < r.k1 || m.k1 == r.k1 && m.k2 <= r.k2):
			k1, k2 = m.k1, m.k2
		default:
			k1, k2 = r.k1, r.k2
		}
		var member, unknown rec
		isMember, suppressed, isUnknown, owned := false, false, false, false
		for okM && m.k1 == k1 && m.k2 == k2 {
			switch m.kind {
			case kindSuppressed:
				suppressed = true
			case kindOwned:
				owned = true
			case kindStateUnknown:
				member, isMember = rec{}, false // read back before deciding
				unknown, isUnknown = m, true
			default:
				member, isMember = m, true // the last record of an address wins
			}
			if m, okM, err = nextM(); err != nil {
				return err
			}
		}
		first, protected := uint32(0), false
		for okR && r.k1 == k1 && r.k2 == k2 {
			if err := p.decide(pl, r, &first, &protected, member, isMember, suppressed); err != nil {
				return err
			}
			if r, okR, err = nextR(); err != nil {
				return err
			}
		}
		if isUnknown && first != 0 && p.forget != nil {
			// A row names it: read back, then added, found or neither, it has a record of
			// its own in the new state.
			p.forget(unknown.off)
		}
		named := first != 0 || protected
		if p.own != nil {
			// The member is the sync's in the next state when it was, or the source names
			// it now. (A record read back or added is the sync's by its kind.)
			switch {
			case isMember && (owned || named):
				p.own(member.off, !owned)
			case isUnknown && first == 0 && owned:
				p.own(unknown.off, false)
			}
		}
		if isMember && member.kind == kindMember {
			pl.Members++
			if !named {
				pl.Absent++
				if p.opts.UnsubscribeMissing && pl.Unreadable == 0 && p.opts.Owners && !owned {
					pl.KeptNotOwned++
				} else if p.opts.UnsubscribeMissing && pl.Unreadable == 0 {
					pl.Unsubscribes++
					if err := p.absent.add(member); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// decide plans a row of an address; first is the line of the address's first row to add,
// update or keep (0 before it), and protected reports a skipped or rejected row naming it.
func (p *planner) decide(pl *Plan, r rec, first *uint32, protected *bool, member rec, isMember, suppressed bool) error {
	if r.kind == kindProtect {
		*protected = true
		return nil
	}
	if *first != 0 {
		pl.Rejected++
		return p.decisions.add(rec{k1: r.k1, k2: r.k2, seq: r.seq, kind: decisionDuplicate, id: *first})
	}
	*first = r.seq
	if isMember && suppressed && p.forget != nil {
		if p.suppressedRows == nil {
			p.suppressedRows = map[uint32]bool{}
		}
		p.suppressedRows[r.seq] = true
	}
	switch {
	case isMember && member.kind == kindUnsubscribed:
		pl.SkippedUnsubscribed++
		if p.checked != nil && member.vals != r.vals {
			p.checked(member.off, r.vals)
		}
		if p.forget != nil && member.vals != r.vals {
			// A state's: the member may have subscribed again since, and a full run would
			// update them. lookUp reads them back.
			p.rechecks++
			d := member
			d.seq, d.kind = r.seq, decisionRecheck
			return p.decisions.add(d)
		}
	case isMember && member.vals == r.vals:
		pl.Unchanged++
	case isMember:
		pl.Updates++
		d := member
		d.seq, d.kind = r.seq, decisionUpdate
		return p.decisions.add(d)
	case suppressed:
		pl.SkippedSuppressed++
	default:
		pl.Adds++
		return p.decisions.add(rec{k1: r.k1, k2: r.k2, seq: r.seq, kind: decisionAdd})
	}
	return nil
}

// scan reads the source that open opens, handing each record to fn as a MappedRow (whose
// Values fn must not keep), until ctx ends.
func (p *planner) scan(ctx context.Context, open opener, fn func(MappedRow) error) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.close()
	for n := 0; ; n++ {
		if n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if p.opts.Progress != nil {
				p.opts.Progress(r.offset())
			}
		}
		if _, err := r.next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		if err := fn(r.scratchRow()); err != nil {
			return err
		}
	}
	if p.opts.Progress != nil {
		p.opts.Progress(r.offset())
	}
	return nil
}

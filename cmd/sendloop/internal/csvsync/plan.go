package csvsync

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"os"
	"strings"

	"github.com/go-sendloop/sendloop"
)

// StatusUnsubscribed is the SubscriptionStatus of a member who unsubscribed.
const StatusUnsubscribed = "Unsubscribed"

// progressEvery is how many records go by between two Options.Progress calls.
const progressEvery = 1024

// Options tunes a Planner.
type Options struct {
	// UnsubscribeMissing plans the unsubscription of members the CSV does not name.
	UnsubscribeMissing bool
	// TempDir is where the plan keeps its temporary files; "" means os.TempDir().
	TempDir string
	// Progress, when set, is called now and then while the file is read, with the number
	// of bytes read so far.
	Progress func(offset int64)
}

// The kinds of rec.
const (
	kindMember       = iota + 1 // a member of the list
	kindUnsubscribed            // a member who unsubscribed
	kindSuppressed              // an address of a suppression list
	kindRow                     // a row to add, update or keep
	kindProtect                 // a skipped or rejected row naming an address: its member stays

	decisionAdd
	decisionUpdate
	decisionDuplicate
)

// Planner compares a CSV with a list's members in memory that does not grow with either:
// members, suppressed addresses and rows become fixed-size records (a 128-bit fingerprint of
// the address, a 64-bit one of the field values) sorted on disk and merged, and the members'
// addresses and values wait in a temporary file for the few that an update or an
// unsubscription needs. The files have no name (removed as soon as created); Close closes
// them.
type Planner struct {
	mapping *Mapping
	opts    Options
	seeds   [3]maphash.Seed

	members *sorter // members and suppressed addresses, by key
	data    *os.File
	dataW   *bufio.Writer
	dataOff int64
	count   int
	scratch []byte
	err     error

	plan      *Plan
	rows      *sorter // the rows naming an address, by key then line
	decisions *sorter // what to do with each row to add, update or reject, by line
	absent    *sorter // the members to unsubscribe, in browse order
}

// NewPlanner returns a Planner for files read through m.
func NewPlanner(m *Mapping, opts Options) (*Planner, error) {
	dir := opts.TempDir
	p := &Planner{mapping: m, opts: opts}
	p.plan = &Plan{planner: p}
	for i := range p.seeds {
		p.seeds[i] = maphash.MakeSeed()
	}
	p.members = newSorter(dir, false)
	p.rows = newSorter(dir, false)
	p.decisions = newSorter(dir, true)
	p.absent = newSorter(dir, true)
	var err error
	if p.data, err = createTemp(dir, "sendloop-sync-members-*"); err != nil {
		return nil, err
	}
	p.dataW = bufio.NewWriterSize(p.data, 64<<10)
	return p, nil
}

// Close closes the plan's temporary files (removed as soon as created); the Plan cannot be
// read after it.
func (p *Planner) Close() error {
	for _, s := range []*sorter{p.members, p.rows, p.decisions, p.absent} {
		s.close()
	}
	closeTemp(p.data)
	return nil
}

// key returns the fingerprint of an address, compared case-insensitively.
func (p *Planner) key(lower string) (uint64, uint64) {
	return maphash.String(p.seeds[0], lower), maphash.String(p.seeds[1], lower)
}

// valuesHash returns the fingerprint of the mapped fields' values, in mapping order.
func (p *Planner) valuesHash(value func(i int) string) uint64 {
	var h maphash.Hash
	h.SetSeed(p.seeds[2])
	var n [binary.MaxVarintLen64]byte
	for i := range p.mapping.Fields {
		v := value(i)
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		h.WriteString(v)
	}
	return h.Sum64()
}

// AddMember records a subscriber of the list, with its custom fields by ID; only the mapped
// fields are kept. A later record for the same address replaces an earlier one. An error
// (writing the temporary files) is also returned by Plan.
func (p *Planner) AddMember(id int, email, status string, fields map[int]string) error {
	if p.err != nil {
		return p.err
	}
	k1, k2 := p.key(strings.ToLower(sendloop.NormalizeAddress(email)))
	r := rec{k1: k1, k2: k2, id: uint32(id), seq: uint32(p.count), kind: kindMember, off: uint64(p.dataOff)}
	if status == StatusUnsubscribed {
		r.kind = kindUnsubscribed
	}
	r.vals = p.valuesHash(func(i int) string { return fields[p.mapping.Fields[i].Field.ID] })
	b := appendString(p.scratch[:0], email)
	for _, f := range p.mapping.Fields {
		b = appendString(b, fields[f.Field.ID])
	}
	p.scratch = b
	r.n = uint32(len(b))
	p.count++
	if _, err := p.dataW.Write(b); err != nil {
		p.err = err
		return err
	}
	p.dataOff += int64(len(b))
	if err := p.members.add(r); err != nil {
		p.err = err
	}
	return p.err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Suppress records an address of the suppression list: the plan never adds it.
func (p *Planner) Suppress(email string) error {
	if p.err != nil {
		return p.err
	}
	k1, k2 := p.key(strings.ToLower(sendloop.NormalizeAddress(email)))
	p.err = p.members.add(rec{k1: k1, k2: k2, kind: kindSuppressed})
	return p.err
}

// Members returns the number of member records added.
func (p *Planner) Members() int { return p.count }

// memberText reads a member's address and values back from the member file.
func (p *Planner) memberText(r rec) (email string, values []string, err error) {
	b := make([]byte, r.n)
	if _, err := p.data.ReadAt(b, int64(r.off)); err != nil {
		return "", nil, fmt.Errorf("reading the plan's temporary file: %w", err)
	}
	next := func() string {
		n, k := binary.Uvarint(b)
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s
	}
	email = next()
	values = make([]string, len(p.mapping.Fields))
	for i := range values {
		values[i] = next()
	}
	return email, values, nil
}

// Change is a custom field an update changes.
type Change struct {
	Field  Field
	Header string // the CSV column's name
	From   string
	To     string
}

// Update is a subscriber whose custom fields differ from its CSV row.
type Update struct {
	Line         int
	SubscriberID int
	Email        string
	// Fields holds the new values of the changed fields, by field ID.
	Fields  map[int]string
	Changes []Change
}

// Unsubscribe is a member the CSV does not name.
type Unsubscribe struct {
	SubscriberID int
	Email        string
}

// Plan is what a sync would do. Every data row of the file is counted once: in Adds,
// Updates, Unchanged, one of the Skipped counts or Rejected.
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
	// Unreadable counts records the CSV reader could not parse (an unterminated quote
	// swallows the lines after it): who is absent from the file is then unknown, and no
	// member is planned for unsubscription.
	Unreadable int

	planner *Planner
}

// Mapping returns the mapping the plan's rows are read through.
func (pl *Plan) Mapping() *Mapping { return pl.planner.mapping }

// ReadFile reads the file that open opens, once, into the plan's records. It may run while
// members and suppressed addresses are added (in another goroutine), and is called once per
// Planner, before Plan. When ctx ends it stops reading and returns ctx's error.
func (p *Planner) ReadFile(ctx context.Context, open func() (*Reader, error)) error {
	pl := p.plan
	return p.scan(ctx, open, func(row Row) error {
		pl.Rows++
		switch {
		case row.Reject != "":
			pl.Rejected++
			if row.Malformed {
				pl.Unreadable++
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
		return p.rows.add(rec{k1: k1, k2: k2, seq: uint32(row.Line), kind: kindRow,
			vals: p.valuesHash(func(i int) string { return row.Values[i] })})
	})
}

// Rows returns the number of records ReadFile has read (once it has returned).
func (p *Planner) Rows() int { return p.plan.Rows }

// Plan compares the members with the file's rows, address by address, and returns the plan;
// call it once, after ReadFile and the last AddMember.
func (p *Planner) Plan() (*Plan, error) {
	if p.err != nil {
		return nil, p.err
	}
	if err := p.dataW.Flush(); err != nil {
		return nil, err
	}
	if err := p.join(p.plan); err != nil {
		return nil, err
	}
	return p.plan, nil
}

// join merges the members with the rows, address by address, and records the decisions.
func (p *Planner) join(pl *Plan) error {
	members, stopM := iter.Pull2(p.members.all())
	defer stopM()
	rows, stopR := iter.Pull2(p.rows.all())
	defer stopR()
	nextM := func() (rec, bool, error) { r, err, ok := members(); return r, ok, err }
	nextR := func() (rec, bool, error) { r, err, ok := rows(); return r, ok, err }
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
		var member rec
		isMember, suppressed := false, false
		for okM && m.k1 == k1 && m.k2 == k2 {
			switch m.kind {
			case kindSuppressed:
				suppressed = true
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
		if isMember && member.kind == kindMember {
			pl.Members++
			if first == 0 && !protected {
				pl.Absent++
				if p.opts.UnsubscribeMissing && pl.Unreadable == 0 {
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
func (p *Planner) decide(pl *Plan, r rec, first *uint32, protected *bool, member rec, isMember, suppressed bool) error {
	if r.kind == kindProtect {
		*protected = true
		return nil
	}
	if *first != 0 {
		pl.Rejected++
		return p.decisions.add(rec{k1: r.k1, k2: r.k2, seq: r.seq, kind: decisionDuplicate, id: *first})
	}
	*first = r.seq
	switch {
	case isMember && member.kind == kindUnsubscribed:
		pl.SkippedUnsubscribed++
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

// scan reads the file that open opens, handing each record to fn as a Row, until ctx ends.
func (p *Planner) scan(ctx context.Context, open func() (*Reader, error), fn func(Row) error) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	for n := 0; ; n++ {
		if n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if p.opts.Progress != nil {
				p.opts.Progress(r.Offset())
			}
		}
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the CSV: %w", err)
		}
		if err := fn(p.mapping.Row(rec)); err != nil {
			return err
		}
	}
	if p.opts.Progress != nil {
		p.opts.Progress(r.Offset())
	}
	return nil
}

// CountRecords counts the data records left in r, without reading them through a mapping:
// the rows an interrupted sync did not reach.
func CountRecords(r *Reader) (int, error) {
	n := 0
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// EventKind tells an Event's kind; kinds combine as a mask for Events.
type EventKind int

// The kinds of Event.
const (
	// EventAdd is a row whose address is to be added to the list.
	EventAdd EventKind = 1 << iota
	// EventReject is a rejected row.
	EventReject
	// EventUpdate is a row whose member's custom fields are to be updated.
	EventUpdate
)

// Event is a row of the file that the sync adds, updates or rejects.
type Event struct {
	Kind EventKind
	Row  Row
	// Reason says why a rejected row is rejected.
	Reason string
	// Update describes an update.
	Update *Update
}

// Events reads the file again from r and yields, in file order, the rows of the kinds that
// mask names (EventAdd|EventReject, say): the rows to add, those rejected, with why, and
// the updates. A row planned for a kind that mask names but that no longer holds the
// address it was planned for (the file changed since) is yielded as an EventReject,
// whatever the mask, with ReasonFileChanged. Rows of unchanged members, skipped rows and suppressed addresses yield
// nothing. A read error is yielded once, and ends the sequence.
func (pl *Plan) Events(r *Reader, mask EventKind) iter.Seq2[Event, error] {
	p := pl.planner
	return func(yield func(Event, error) bool) {
		decisions, stop := iter.Pull2(p.decisions.all())
		defer stop()
		d, err, ok := decisions()
		for {
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !ok && mask&EventReject == 0 {
				return // no decision left, and the rows rejected as read are not wanted
			}
			rec, rerr := r.Read()
			if errors.Is(rerr, io.EOF) {
				return
			}
			if rerr != nil {
				yield(Event{}, fmt.Errorf("reading the CSV: %w", rerr))
				return
			}
			line := uint32(rec.Line)
			var ev Event
			changed := false
			switch {
			case ok && d.seq == line:
				if decisionEvent[d.kind]&mask != 0 {
					row := p.mapping.Row(rec)
					// The file is read again: a line that no longer names the address the
					// decision was made for is skipped, and reported, whatever the mask.
					if k1, k2 := p.key(row.Key); row.Key == "" || k1 != d.k1 || k2 != d.k2 {
						ev, changed = Event{Kind: EventReject, Row: row, Reason: ReasonFileChanged}, true
					} else {
						ev, err = pl.event(d, row)
					}
				}
				if err == nil {
					d, err, ok = decisions()
				}
			case mask&EventReject != 0:
				row := p.mapping.Row(rec)
				if row.Reject != "" {
					ev = Event{Kind: EventReject, Row: row, Reason: row.Reject}
				}
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if ev.Kind&mask == 0 && !changed {
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// ReasonFileChanged is the Reason of a row skipped because the file changed during the sync.
const ReasonFileChanged = "the file changed during the sync: the line no longer holds the address planned for it"

// decisionEvent is the kind of Event of each kind of decision.
var decisionEvent = map[uint32]EventKind{decisionAdd: EventAdd, decisionDuplicate: EventReject, decisionUpdate: EventUpdate}

// event turns a decision about a row into its Event.
func (pl *Plan) event(d rec, row Row) (Event, error) {
	switch d.kind {
	case decisionAdd:
		return Event{Kind: EventAdd, Row: row}, nil
	case decisionDuplicate:
		return Event{Kind: EventReject, Row: row, Reason: fmt.Sprintf("duplicate of line %d", d.id)}, nil
	}
	email, values, err := pl.planner.memberText(d)
	if err != nil {
		return Event{}, err
	}
	u := &Update{Line: row.Line, SubscriberID: int(d.id), Email: email, Fields: map[int]string{}}
	for i, f := range pl.planner.mapping.Fields {
		if values[i] == row.Values[i] {
			continue
		}
		u.Fields[f.Field.ID] = row.Values[i]
		u.Changes = append(u.Changes, Change{Field: f.Field, Header: f.Header, From: values[i], To: row.Values[i]})
	}
	if len(u.Changes) == 0 {
		return Event{}, nil // the fingerprints differed, the values do not
	}
	return Event{Kind: EventUpdate, Row: row, Update: u}, nil
}

// ToUnsubscribe yields the members to unsubscribe, in the order they were added.
func (pl *Plan) ToUnsubscribe() iter.Seq2[Unsubscribe, error] {
	p := pl.planner
	return func(yield func(Unsubscribe, error) bool) {
		for r, err := range p.absent.all() {
			if err != nil {
				yield(Unsubscribe{}, err)
				return
			}
			email, _, err := p.memberText(r)
			if err != nil {
				yield(Unsubscribe{}, err)
				return
			}
			if !yield(Unsubscribe{SubscriberID: int(r.id), Email: email}, nil) {
				return
			}
		}
	}
}

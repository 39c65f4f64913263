package csvsync

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"slices"
	"strings"
)

// StatusUnsubscribed is the SubscriptionStatus of a member who unsubscribed.
const StatusUnsubscribed = "Unsubscribed"

// progressEvery is how many records go by between two Options.Progress calls.
const progressEvery = 1024

// Options tunes a Planner.
type Options struct {
	// UnsubscribeMissing plans the unsubscription of members the CSV does not name.
	UnsubscribeMissing bool
	// Hash hashes a lower-cased address for the duplicate check; nil means hash/maphash with
	// a random seed. Collisions cost a further pass over the file, never a wrong answer.
	Hash func(key string) uint64
	// Progress, when set, is called now and then while the file is read, with the number
	// of bytes read so far.
	Progress func(offset int64)
}

// member is a subscriber of the list, as the plan needs it.
type member struct {
	id        int
	email     string
	status    string
	values    []string // current values of the mapped fields
	line      int      // first CSV line naming it; 0 when none does
	protected bool     // named by a skipped or rejected row: never unsubscribed
}

// Planner compares a CSV with a list's members.
type Planner struct {
	mapping    *Mapping
	opts       Options
	members    []member
	index      map[string]int32 // lower-cased address → members index
	suppressed map[string]int   // lower-cased suppressed address → first CSV line naming it
}

// NewPlanner returns a Planner for files read through m.
func NewPlanner(m *Mapping, opts Options) *Planner {
	if opts.Hash == nil {
		seed := maphash.MakeSeed()
		opts.Hash = func(key string) uint64 { return maphash.String(seed, key) }
	}
	return &Planner{mapping: m, opts: opts, index: map[string]int32{}, suppressed: map[string]int{}}
}

// AddMember records a subscriber of the list, with its custom fields by ID; only the mapped
// fields are kept. A second record for the same address replaces the first.
func (p *Planner) AddMember(id int, email, status string, fields map[int]string) {
	mem := member{id: id, email: email, status: status}
	if len(p.mapping.Fields) > 0 {
		mem.values = make([]string, len(p.mapping.Fields))
		for i, f := range p.mapping.Fields {
			mem.values[i] = fields[f.Field.ID]
		}
	}
	key := strings.ToLower(strings.TrimSpace(email))
	if i, ok := p.index[key]; ok {
		p.members[i] = mem
		return
	}
	p.index[key] = int32(len(p.members))
	p.members = append(p.members, mem)
}

// Suppress records an address of the suppression list: the plan never adds it.
func (p *Planner) Suppress(email string) {
	p.suppressed[strings.ToLower(strings.TrimSpace(email))] = 0
}

// Members returns the number of members recorded.
func (p *Planner) Members() int { return len(p.members) }

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
	// Updates are the members whose custom fields differ from their row.
	Updates []Update
	// Unsubscribes are the members the CSV does not name (with UnsubscribeMissing).
	Unsubscribes []Unsubscribe
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
	dup     map[int]int // line of a repeated address → line of its first row
}

// Mapping returns the mapping the plan's rows are read through.
func (pl *Plan) Mapping() *Mapping { return pl.planner.mapping }

// Plan reads the file that open opens (once, or twice when it repeats addresses that are
// new to the list) and returns the plan. It may be called once per Planner.
func (p *Planner) Plan(open func() (*Reader, error)) (*Plan, error) {
	pl := &Plan{planner: p, dup: map[int]int{}}
	var hashes []uint64 // of the rows new to the list: repeated values are checked afterwards
	err := p.scan(open, func(row Row) {
		pl.Rows++
		switch {
		case row.Reject != "":
			pl.Rejected++
			// A member whose row is rejected is not missing from the file: a stray comma
			// must not unsubscribe anyone.
			if i, ok := p.index[strings.ToLower(row.Email)]; ok && row.Email != "" {
				p.members[i].protected = true
			}
			if row.Malformed {
				pl.Unreadable++
			}
		case row.Skip:
			pl.SkippedStatus++
			if i, ok := p.index[row.Key]; ok {
				p.members[i].protected = true
			}
		default:
			if i, ok := p.index[row.Key]; ok {
				p.planMember(pl, &p.members[i], row)
				return
			}
			if first, ok := p.suppressed[row.Key]; ok {
				if first != 0 {
					pl.dup[row.Line] = first
					pl.Rejected++
					return
				}
				p.suppressed[row.Key] = row.Line
				pl.SkippedSuppressed++
				return
			}
			hashes = append(hashes, p.opts.Hash(row.Key))
			pl.Adds++
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(hashes)
	repeated := map[uint64]bool{}
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] {
			repeated[hashes[i]] = true
		}
	}
	hashes = nil
	if len(repeated) > 0 {
		if err := p.resolveRepeats(open, pl, repeated); err != nil {
			return nil, err
		}
	}
	for i := range p.members {
		m := &p.members[i]
		if m.line != 0 || m.protected || m.status == StatusUnsubscribed {
			continue
		}
		pl.Absent++
		if p.opts.UnsubscribeMissing && pl.Unreadable == 0 {
			pl.Unsubscribes = append(pl.Unsubscribes, Unsubscribe{SubscriberID: m.id, Email: m.email})
		}
	}
	return pl, nil
}

// planMember plans the row of a member of the list.
func (p *Planner) planMember(pl *Plan, m *member, row Row) {
	if m.line != 0 {
		pl.dup[row.Line] = m.line
		pl.Rejected++
		return
	}
	m.line = row.Line
	if m.status == StatusUnsubscribed {
		pl.SkippedUnsubscribed++
		return
	}
	var u *Update
	for i, f := range p.mapping.Fields {
		if m.values[i] == row.Values[i] {
			continue
		}
		if u == nil {
			u = &Update{Line: row.Line, SubscriberID: m.id, Email: m.email, Fields: map[int]string{}}
		}
		u.Fields[f.Field.ID] = row.Values[i]
		u.Changes = append(u.Changes, Change{Field: f.Field, Header: f.Header, From: m.values[i], To: row.Values[i]})
	}
	if u == nil {
		pl.Unchanged++
		return
	}
	pl.Updates = append(pl.Updates, *u)
}

// resolveRepeats reads the file again to tell, among the new rows whose hash repeats, the
// real repetitions of an address from hash collisions.
func (p *Planner) resolveRepeats(open func() (*Reader, error), pl *Plan, repeated map[uint64]bool) error {
	type seen struct {
		key  string
		line int
	}
	groups := map[uint64][]seen{}
	return p.scan(open, func(row Row) {
		if p.kind(row) != kindNew {
			return
		}
		h := p.opts.Hash(row.Key)
		if !repeated[h] {
			return
		}
		for _, s := range groups[h] {
			if s.key == row.Key {
				pl.dup[row.Line] = s.line
				pl.Adds--
				pl.Rejected++
				return
			}
		}
		groups[h] = append(groups[h], seen{key: row.Key, line: row.Line})
	})
}

type rowKind int

const (
	kindReject rowKind = iota
	kindSkip
	kindMember
	kindSuppressed
	kindNew
)

// kind classifies a row by what it is, not by what it repeats.
func (p *Planner) kind(row Row) rowKind {
	switch {
	case row.Reject != "":
		return kindReject
	case row.Skip:
		return kindSkip
	}
	if _, ok := p.index[row.Key]; ok {
		return kindMember
	}
	if _, ok := p.suppressed[row.Key]; ok {
		return kindSuppressed
	}
	return kindNew
}

// scan reads the file that open opens, handing each record to fn as a Row.
func (p *Planner) scan(open func() (*Reader, error), fn func(Row)) error {
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	for n := 0; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the CSV: %w", err)
		}
		fn(p.mapping.Row(rec))
		if p.opts.Progress != nil && n%progressEvery == 0 {
			p.opts.Progress(r.Offset())
		}
	}
	if p.opts.Progress != nil {
		p.opts.Progress(r.Offset())
	}
	return nil
}

// EventKind tells an Event's kind.
type EventKind int

// The kinds of Event.
const (
	// EventAdd is a row whose address is to be added to the list.
	EventAdd EventKind = iota + 1
	// EventReject is a rejected row.
	EventReject
)

// Event is a row of the file that the sync adds or rejects.
type Event struct {
	Kind EventKind
	Row  Row
	// Reason says why a rejected row is rejected.
	Reason string
}

// Events reads the file again from r and yields, in file order, the rows to add and the
// rows rejected, with why. Rows of members, skipped rows and suppressed addresses yield
// nothing: Updates and the counts describe them. A read error is yielded once, and ends
// the sequence.
func (pl *Plan) Events(r *Reader) iter.Seq2[Event, error] {
	p := pl.planner
	return func(yield func(Event, error) bool) {
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Event{}, fmt.Errorf("reading the CSV: %w", err))
				return
			}
			row := p.mapping.Row(rec)
			var ev Event
			if first, ok := pl.dup[row.Line]; ok && row.Reject == "" {
				ev = Event{Kind: EventReject, Row: row, Reason: fmt.Sprintf("duplicate of line %d", first)}
			} else {
				switch p.kind(row) {
				case kindReject:
					ev = Event{Kind: EventReject, Row: row, Reason: row.Reject}
				case kindNew:
					ev = Event{Kind: EventAdd, Row: row}
				default:
					continue
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

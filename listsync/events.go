package listsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

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
	// EventUnsubscribe is a member to be unsubscribed. It has no row, so Events never
	// yields it (Plan.ToUnsubscribe lists them).
	EventUnsubscribe
)

// String returns the kind's name as the plan file's action column writes it: add, reject,
// update or unsubscribe; a mask of several kinds joins them with "|".
func (k EventKind) String() string {
	var names []string
	for _, n := range []struct {
		kind EventKind
		name string
	}{{EventAdd, KindAdd}, {EventReject, KindReject}, {EventUpdate, KindUpdate}, {EventUnsubscribe, KindUnsubscribe}} {
		if k&n.kind != 0 {
			names = append(names, n.name)
			k &^= n.kind
		}
	}
	if k != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("EventKind(%d)", int(k)))
	}
	return strings.Join(names, "|")
}

// Event is a row of the source that the sync adds, updates or rejects.
type Event struct {
	// Kind says what the sync does with the row.
	Kind EventKind
	// Row is the row as read through the mapping.
	Row MappedRow
	// Reason says why a rejected row is rejected.
	Reason string
	// Update describes an update.
	Update *Update

	planned EventKind // for a row rejected because the source changed: what was planned for it
	off     uint64    // an update's member record in the member file
	vals    uint64    // an update's row values' fingerprint
}

// Events reads the source again and yields, in its order, the rows of the kinds that mask
// names; see events. A source that cannot be opened again yields its error.
func (pl *Plan) Events(ctx context.Context, mask EventKind) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		r, err := pl.job.open(ctx)()
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer r.close()
		for ev, err := range pl.events(r, mask, false) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// events reads the source again from r and yields, in its order, the rows of the kinds that
// mask names (EventAdd|EventReject, say): the rows to add, those rejected, with why, and
// the updates. A row planned for a kind that mask names but that no longer holds the
// address it was planned for (the source changed since) is yielded as an EventReject,
// whatever the mask, with ReasonFileChanged; so is one the source no longer yields at all
// (its Row holds its line only), and a row rejected when planned that is not now. Rows of
// unchanged members, skipped rows and suppressed addresses yield nothing, whatever they
// hold now: the plan changes nothing for them. A read error is yielded once, and ends the
// sequence. With scratch, an Event's Row.Values are valid only until the next Event: for
// a caller done with the row by then (one that keeps no Values, and hands the row to no
// goroutine).
func (pl *Plan) events(r pass, mask EventKind, scratch bool) iter.Seq2[Event, error] {
	p := pl.planner
	return func(yield func(Event, error) bool) {
		// A cursor, not iter.Pull, which switches goroutines at every record; not read
		// ahead either, which would hold batches of records for a merge that the reading of
		// the source keeps up with.
		cur, err := p.decisions.cursor()
		if err != nil {
			yield(Event{}, err)
			return
		}
		decisions := func() (rec, error, bool) {
			d, ok, err := cur.next()
			return d, err, ok
		}
		d, err, ok := decisions()
		for {
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !ok {
				return // no decision left: the rows left are unchanged or skipped
			}
			recLine, rerr := r.next()
			eof := errors.Is(rerr, io.EOF)
			if rerr != nil && !eof {
				yield(Event{}, rerr)
				return
			}
			line := uint32(recLine)
			// The rows planned before this one (all those left, at the end) are gone from
			// the source: reported, lest the decisions after them wait for them forever.
			for ok && (eof || d.seq < line) {
				if decisionEvent(d.kind)&mask != 0 {
					row := MappedRow{Line: int(d.seq), Raw: fmt.Sprintf("(line %d)", d.seq)}
					if !yield(Event{Kind: EventReject, Row: row, Reason: ReasonFileChanged, planned: decisionEvent(d.kind)}, nil) {
						return
					}
				}
				if d, err, ok = decisions(); err != nil {
					yield(Event{}, err)
					return
				}
			}
			if !ok || d.seq != line {
				continue // a row the plan changes nothing for
			}
			var ev Event
			if decisionEvent(d.kind)&mask != 0 {
				var row MappedRow
				if scratch {
					row = r.scratchRow()
				} else {
					row = r.row()
				}
				// The source is read again: a row that no longer names the address the
				// decision was made for is skipped, and reported, whatever the mask.
				switch k1, k2 := p.key(row.Key); {
				case d.kind == decisionReject && row.Reject != "":
					ev = Event{Kind: EventReject, Row: row, Reason: row.Reject}
				case d.kind == decisionReject, row.Key == "" || k1 != d.k1 || k2 != d.k2:
					ev = Event{Kind: EventReject, Row: row, Reason: ReasonFileChanged, planned: decisionEvent(d.kind)}
				default:
					ev, err = pl.event(d, row)
				}
			}
			if err == nil {
				d, err, ok = decisions()
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if ev.Kind == 0 {
				continue // not wanted, or an update whose values turn out equal
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// ReasonFileChanged is the Reason of a row skipped because the file changed during the sync.
const ReasonFileChanged = "the file changed during the sync: the line no longer holds the address planned for it"

// decisionEvent returns the kind of Event of a kind of decision.
func decisionEvent(kind uint32) EventKind {
	switch kind {
	case decisionAdd:
		return EventAdd
	case decisionUpdate:
		return EventUpdate
	case decisionDuplicate, decisionReject:
		return EventReject
	case decisionRecheck:
		return eventRecheck
	}
	return 0
}

// eventRecheck is a row lookUp reads back (decisionRecheck): no Events mask of a caller's
// includes it.
const eventRecheck EventKind = 1 << 8

// event turns a decision about a row into its Event.
func (pl *Plan) event(d rec, row MappedRow) (Event, error) {
	switch d.kind {
	case decisionAdd:
		return Event{Kind: EventAdd, Row: row}, nil
	case decisionDuplicate:
		return Event{Kind: EventReject, Row: row, Reason: fmt.Sprintf("duplicate of line %d", d.id)}, nil
	case decisionRecheck:
		return Event{Kind: eventRecheck, Row: row, off: d.off}, nil
	}
	m, err := pl.planner.memberText(d)
	if err != nil {
		return Event{}, err
	}
	u := &Update{Line: row.Line, SubscriberID: int(d.id), Email: m.email, Fields: map[int]string{}}
	values := m.values
	if values == nil {
		// A member of the state: its fingerprint differs, its values are not known, so every
		// mapped field is set.
		values = make([]string, len(pl.planner.mapping.Fields))
	}
	for i, f := range pl.planner.mapping.Fields {
		if m.values != nil && values[i] == row.Values[i] {
			continue
		}
		u.Fields[f.Field.ID] = row.Values[i]
		u.Changes = append(u.Changes, Change{Field: f.Field, Header: f.Header, From: values[i], To: row.Values[i]})
	}
	if len(u.Changes) == 0 {
		return Event{}, nil // the fingerprints differed, the values do not
	}
	return Event{Kind: EventUpdate, Row: row, Update: u, off: d.off,
		vals: pl.planner.valuesHash(pl.planner.appendValues(nil, func(i int) string { return row.Values[i] }))}, nil
}

// ToUnsubscribe yields the members to unsubscribe, in the order they were added.
func (pl *Plan) ToUnsubscribe() iter.Seq2[Unsubscribe, error] {
	return func(yield func(Unsubscribe, error) bool) {
		for u, err := range pl.toUnsubscribe() {
			if !yield(u.Unsubscribe, err) {
				return
			}
		}
	}
}

// pendingUnsubscribe is an unsubscription with its member's record in the member file.
type pendingUnsubscribe struct {
	Unsubscribe
	off uint64
}

// toUnsubscribe is ToUnsubscribe with the members' records.
func (pl *Plan) toUnsubscribe() iter.Seq2[pendingUnsubscribe, error] {
	p := pl.planner
	return func(yield func(pendingUnsubscribe, error) bool) {
		for r, err := range p.absent.all() {
			if err != nil {
				yield(pendingUnsubscribe{}, err)
				return
			}
			m, err := p.memberText(r)
			if err != nil {
				yield(pendingUnsubscribe{}, err)
				return
			}
			if !yield(pendingUnsubscribe{Unsubscribe{SubscriberID: int(r.id), Email: m.email}, r.off}, nil) {
				return
			}
		}
	}
}

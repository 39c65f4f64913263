package sendloop

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/go-sendloop/sendloop/internal/check"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// Member is a list member as Subscribers.Members reads it: the subscriber's ID, address and
// status, and the values of the custom fields the walk was asked for. It costs a fraction
// of a Subscriber, which keeps every custom field in a map and dates, IP addresses and a
// bounce state besides.
type Member struct {
	// SubscriberID is the subscriber's ID.
	SubscriberID int
	// EmailAddress is the subscriber's address, as the service holds it.
	EmailAddress string
	// SubscriptionStatus is the subscriber's state in the list.
	SubscriptionStatus SubscriptionStatus
	// Values are the values of SubscriberMembersParams.FieldIDs, in that order: "" for a
	// field the record does not carry. The slice belongs to the walk, which writes over it
	// once the iteration moves on: copy the values a loop keeps (slices.Clone). The other
	// fields are plain values and may be kept.
	Values []string
}

// SubscriberMembersParams are the parameters of Subscribers.Members.
type SubscriberMembersParams struct {
	// FieldIDs are the custom fields whose values each Member carries in its Values, in
	// this order; a field may be given twice. None: Values is empty.
	FieldIDs []int
	// SegmentID restricts the walk to a segment of the list; 0 for the whole list.
	SegmentID int
	// StartIndex is the page to start from, as SubscriberBrowseParams.StartIndex.
	StartIndex int
	// Concurrency is how many pages Members asks for at once (default 1), as
	// SubscriberBrowseParams.Concurrency: up to MaxBrowseConcurrency.
	Concurrency int
}

// browseParams returns the walk's pages' parameters.
func (p SubscriberMembersParams) browseParams() SubscriberBrowseParams {
	return SubscriberBrowseParams{SegmentID: p.SegmentID, StartIndex: p.StartIndex, Concurrency: p.Concurrency}
}

// validate refuses what Browse refuses, and a field ID that is no ID.
func (p SubscriberMembersParams) validate(command string) error {
	if err := p.browseParams().validate(command); err != nil {
		return err
	}
	for _, id := range p.FieldIDs {
		if check.ID(id) != check.IDValid {
			return invalid(command, ErrCustomFieldNotFound, "FieldIDs", fmt.Sprintf("FieldIDs holds %d, not an ID: IDs run from 1 to 2147483647", id))
		}
	}
	return nil
}

// Members walks the members of a list (or segment) as BrowseIter does (subscriber.browse,
// page by page from p.StartIndex, p.Concurrency pages at once), and yields the same
// records in the same order, with the same errors and stops, but decodes only what a
// Member holds: the ID, the address, the status and the values of p.FieldIDs. Every record
// is still read whole and checked, so that a page BrowseIter refuses is refused here too.
// It is the walk for a big list when the whole Subscriber is not needed: a sync comparing
// a list with a file reads a million members this way at a fraction of the cost.
//
// The walk reuses its memory: the pages it has yielded become the storage of the pages it
// reads next, so a Member's Values are written over once the iteration moves on. A loop
// that keeps the values copies them; SubscriberID, EmailAddress and SubscriptionStatus may
// be kept as they are.
func (s *SubscribersService) Members(ctx context.Context, listID int, p SubscriberMembersParams) iter.Seq2[Member, error] {
	const command = commands.SubscriberBrowse
	if err := checkListID(command, listID); err != nil {
		return failedIter[Member](err)
	}
	if err := p.validate(command); err != nil {
		return failedIter[Member](err)
	}
	slots := newFieldSlots(slices.Clone(p.FieldIDs)) // the caller's slice may change meanwhile
	q := p.browseParams()
	var pool sync.Pool // of *[]Member, each a page's members with their Values arrays
	return pagesAhead(ctx, command, p.StartIndex, BrowsePageSize, min(p.Concurrency, MaxBrowseConcurrency), func(m Member) int { return m.SubscriberID },
		func(ctx context.Context, page int) ([]Member, error) {
			var members []Member
			if stored, _ := pool.Get().(*[]Member); stored != nil {
				members = (*stored)[:0]
			}
			q := q
			q.StartIndex = page
			err := s.browse(ctx, listID, q,
				member("Subscribers", func(d *wire.Decoder) (err error) {
					members, err = decodeMembers(d, members[:0], slots)
					return err
				}))
			return members, err
		},
		func(members []Member) { pool.Put(&members) })
}

// fieldSlots says where the value of each custom field goes in a Member's Values.
type fieldSlots struct {
	ids []int // the field IDs, in Values order
}

func newFieldSlots(ids []int) fieldSlots { return fieldSlots{ids: ids} }

// set stores value at every slot of field id in values (a field may be asked for twice).
func (f fieldSlots) set(values []string, id int, value string) {
	for i, want := range f.ids {
		if want == id {
			values[i] = value
		}
	}
}

// wants reports whether field id is asked for.
func (f fieldSlots) wants(id int) bool {
	for _, want := range f.ids {
		if want == id {
			return true
		}
	}
	return false
}

// decodeMembers appends the members of the array at the cursor to out (of length 0),
// reusing the elements (and their Values arrays) past its length: those of a page read
// before. The records are read with Subscriber's decoder's readers and tolerances, and fail
// where it fails; only what a Member holds is kept.
func decodeMembers(d *wire.Decoder, out []Member, slots fieldSlots) ([]Member, error) {
	nf := len(slots.ids)
	err := d.Array(func() error {
		if len(out) < cap(out) {
			out = out[:len(out)+1]
		} else {
			if cap(out) == 0 {
				out = make([]Member, 0, BrowsePageSize)
				values := make([]string, BrowsePageSize*nf)
				for i := range out[:cap(out)] {
					out[:cap(out)][i].Values = values[i*nf : (i+1)*nf : (i+1)*nf]
				}
				out = out[:1]
			} else {
				out = append(out, Member{}) // a page longer than the service's
			}
		}
		m := &out[len(out)-1]
		m.SubscriberID, m.EmailAddress, m.SubscriptionStatus = 0, "", ""
		if len(m.Values) != nf {
			m.Values = make([]string, nf)
		} else {
			clear(m.Values)
		}
		return decodeMember(d, m, slots)
	})
	return out, err
}

// decodeMember reads a subscriber object into m as Subscriber.decodeWire reads it (see
// zz_decoders_gen.go), member by member with the same readers, so that it fails on the same
// records with the same errors; what a Member does not hold is checked and dropped.
func decodeMember(d *wire.Decoder, m *Member, slots fieldSlots) error {
	return d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "SubscriberID":
			m.SubscriberID, err = d.Int()
		case "EmailAddress":
			m.EmailAddress, err = d.String()
		case "SubscriptionStatus":
			var status string
			status, err = d.Interned(string(StatusSubscribed), string(StatusConfirmationPending), string(StatusUnsubscribed))
			m.SubscriptionStatus = SubscriptionStatus(status)
		case "BounceType", "SubscriptionIP", "UnsubscriptionIP":
			err = d.SkipString()
		case "SubscriptionDate", "UnsubscriptionDate", "OptInDate":
			_, err = d.Date()
		case "CustomFields":
			var raw []byte
			if raw, err = d.Raw(); err == nil {
				err = scanCustomFields(raw, func(id int, value string) { slots.set(m.Values, id, value) })
			}
		case "Score":
			_, err = d.Float()
		case "ScoreLastUpdate":
			_, err = d.DateTime()
		default:
			if id, ok := wire.CustomFieldID(key); ok {
				if !slots.wants(id) {
					return d.SkipString()
				}
				var value string
				value, err = d.String()
				slots.set(m.Values, id, value)
				return err
			}
			var raw []byte
			if raw, err = d.Raw(); err == nil {
				_, err = extraText(raw)
			}
		}
		return err
	})
}

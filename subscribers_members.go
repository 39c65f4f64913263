package sendloop

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/go-sendloop/sendloop/internal/browse"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// The sync engine reads a list's members through browse.Members: a Subscriber costs a
// CustomFields map (two allocations) and keeps dates, IPs and a bounce state a sync never
// looks at, a million times for a million members.
func init() { browse.Members = browseMembers }

// browseMembers is browse.Members: BrowseIter with each page decoded by decodeMembers into
// the storage of a page already read.
func browseMembers(ctx context.Context, subscribers any, listID, concurrency int, fieldIDs []int) iter.Seq2[browse.Member, error] {
	s, ok := subscribers.(*SubscribersService)
	if !ok || s == nil {
		return failedIter[browse.Member](fmt.Errorf("sendloop: browse.Members needs a *SubscribersService, not %T", subscribers))
	}
	const command = commands.SubscriberBrowse
	if err := checkListID(command, listID); err != nil {
		return failedIter[browse.Member](err)
	}
	slots := newFieldSlots(fieldIDs)
	var pool sync.Pool // of *[]browse.Member, each a page's members with their Values arrays
	return pagesAhead(ctx, command, 0, BrowsePageSize, min(concurrency, MaxBrowseConcurrency), func(m browse.Member) int { return m.ID },
		func(ctx context.Context, page int) ([]browse.Member, error) {
			var members []browse.Member
			if p, _ := pool.Get().(*[]browse.Member); p != nil {
				members = (*p)[:0]
			}
			err := s.browse(ctx, listID, SubscriberBrowseParams{StartIndex: page},
				member("Subscribers", func(d *wire.Decoder) (err error) {
					members, err = decodeMembers(d, members[:0], slots)
					return err
				}))
			return members, err
		},
		func(members []browse.Member) { pool.Put(&members) })
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
// where it fails; only the members a sync compares are kept.
func decodeMembers(d *wire.Decoder, out []browse.Member, slots fieldSlots) ([]browse.Member, error) {
	nf := len(slots.ids)
	err := d.Array(func() error {
		if len(out) < cap(out) {
			out = out[:len(out)+1]
		} else {
			if cap(out) == 0 {
				out = make([]browse.Member, 0, BrowsePageSize)
				values := make([]string, BrowsePageSize*nf)
				for i := range out[:cap(out)] {
					out[:cap(out)][i].Values = values[i*nf : (i+1)*nf : (i+1)*nf]
				}
				out = out[:1]
			} else {
				out = append(out, browse.Member{}) // a page longer than the service's
			}
		}
		m := &out[len(out)-1]
		m.ID, m.Email, m.Status = 0, "", ""
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
// records with the same errors; what a sync does not compare is checked and dropped.
func decodeMember(d *wire.Decoder, m *browse.Member, slots fieldSlots) error {
	return d.Object(func(key []byte) (err error) {
		switch string(key) {
		case "SubscriberID":
			m.ID, err = d.Int()
		case "EmailAddress":
			m.Email, err = d.String()
		case "SubscriptionStatus":
			m.Status, err = d.Interned("Subscribed", "Confirmation Pending", "Unsubscribed")
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

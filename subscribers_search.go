package sendloop

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// SubscriberSearchResult is the subscribers of one list whose address matched a search.
type SubscriberSearchResult struct {
	ListID      int         // the list holding the matches
	ListName    string      // the list's name
	Subscribers []SearchHit // the matches in the list, in the order of the service's Subscribers object
}

// SearchHit is one matching subscriber: the service's Subscribers (ID → address) and
// SubscriberDetails (ID → status, bounce and custom fields) objects joined by ID.
type SearchHit struct {
	SubscriberID int    // the subscriber's ID in the list
	EmailAddress string // the matching address
	// SubscriptionStatus is from SubscriberDetails, "" when the service gives no details
	// for the subscriber.
	SubscriptionStatus SubscriptionStatus
	// BounceType is from SubscriberDetails, "" when the service gives no details for the
	// subscriber.
	BounceType BounceType
	// CustomFields are the CustomField<field_id> keys of SubscriberDetails, by field ID;
	// nil when there are none.
	CustomFields CustomFields
}

// UnmarshalJSON decodes one element of SearchResults. Hand-written: it joins two objects
// keyed by subscriber ID (Subscribers and SubscriberDetails) into one list.
func (r *SubscriberSearchResult) UnmarshalJSON(data []byte) error {
	var details map[int]Subscriber
	err := wire.ScanObject(data, func(key, v []byte) (err error) {
		switch string(key) {
		case "ListID":
			r.ListID, err = wire.Int(v)
		case "ListName":
			r.ListName, err = wire.String(v)
		case "Subscribers":
			err = wire.ScanObject(v, func(id, email []byte) error {
				var hit SearchHit
				var ok bool
				if hit.SubscriberID, ok = wire.ID(id); !ok {
					return fmt.Errorf("subscriber ID %q is not a number", id)
				}
				var err error
				hit.EmailAddress, err = wire.String(email)
				r.Subscribers = append(r.Subscribers, hit)
				return err
			})
		case "SubscriberDetails":
			details = map[int]Subscriber{}
			err = wire.ScanObject(v, func(id, d []byte) error {
				n, ok := wire.ID(id)
				if !ok {
					return fmt.Errorf("subscriber ID %q is not a number", id)
				}
				var sub Subscriber
				err := sub.UnmarshalJSON(d)
				details[n] = sub
				return err
			})
		}
		return err
	})
	for i := range r.Subscribers {
		if d, ok := details[r.Subscribers[i].SubscriberID]; ok {
			r.Subscribers[i].SubscriptionStatus = d.SubscriptionStatus
			r.Subscribers[i].BounceType = d.BounceType
			r.Subscribers[i].CustomFields = d.CustomFields
		}
	}
	return err
}

// Search finds subscribers whose address contains email, in every list
// (subscriber.search).
func (s *SubscribersService) Search(ctx context.Context, email string) ([]SubscriberSearchResult, error) {
	const command = commands.SubscriberSearch
	if strings.TrimSpace(email) == "" {
		return nil, &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"EmailAddress"}, Reason: "nothing to search for"}
	}
	var results []SubscriberSearchResult
	err := s.client.doWire(ctx, &apiCall{command: command, form: url.Values{"EmailAddress": {email}}}, member("SearchResults", func(d *wire.Decoder) (err error) {
		results, err = decodeRecords[SubscriberSearchResult](d)
		return err
	}))
	if err != nil {
		return nil, err
	}
	return results, nil
}

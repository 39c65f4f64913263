package sendloop

import (
	"github.com/go-sendloop/sendloop/internal/wire"
)

// SubscribersService subscribes, reads, updates and imports list members (subscriber.*).
type SubscribersService service

// SubscriptionStatus is a subscriber's state in a list. Values the service sends that are
// not among the constants are kept as they came.
type SubscriptionStatus string

// The subscription states of the service.
const (
	StatusSubscribed          SubscriptionStatus = "Subscribed"
	StatusConfirmationPending SubscriptionStatus = "Confirmation Pending"
	StatusUnsubscribed        SubscriptionStatus = "Unsubscribed"
)

// BounceType is a subscriber's bounce state. Unknown values are kept as they came.
type BounceType string

// The bounce states of the service.
const (
	BounceNone BounceType = "Not Bounced"
	BounceHard BounceType = "Hard"
	BounceSoft BounceType = "Soft"
)

// unsetIP is how the service writes an IP address it does not have.
const unsetIP = "0.0.0.0"

// Subscriber is a subscriber record of a list.
type Subscriber struct {
	SubscriberID       int
	EmailAddress       string
	BounceType         BounceType
	SubscriptionStatus SubscriptionStatus
	SubscriptionDate   Date
	SubscriptionIP     string // "0.0.0.0" when unset, as the service sends it
	UnsubscriptionDate Date
	UnsubscriptionIP   string
	OptInDate          Date
	// CustomFields holds the CustomField<id> keys by field ID.
	CustomFields CustomFields
	// Score and ScoreLastUpdate come with a single subscriber (subscriber.get) only.
	Score           float64
	ScoreLastUpdate DateTime
}

// UnmarshalJSON decodes the service's subscriber object; unknown keys are ignored.
func (s *Subscriber) UnmarshalJSON(data []byte) error {
	return wire.ScanObject(data, func(key, v []byte) (err error) {
		switch string(key) {
		case "SubscriberID":
			s.SubscriberID, err = wire.Int(v)
		case "EmailAddress":
			s.EmailAddress, err = wire.String(v)
		case "BounceType":
			var t string
			t, err = wire.Interned(v, string(BounceNone), string(BounceHard), string(BounceSoft))
			s.BounceType = BounceType(t)
		case "SubscriptionStatus":
			var t string
			t, err = wire.Interned(v, string(StatusSubscribed), string(StatusConfirmationPending), string(StatusUnsubscribed))
			s.SubscriptionStatus = SubscriptionStatus(t)
		case "SubscriptionDate":
			err = s.SubscriptionDate.UnmarshalJSON(v)
		case "SubscriptionIP":
			s.SubscriptionIP, err = wire.Interned(v, unsetIP)
		case "UnsubscriptionDate":
			err = s.UnsubscriptionDate.UnmarshalJSON(v)
		case "UnsubscriptionIP":
			s.UnsubscriptionIP, err = wire.Interned(v, unsetIP)
		case "OptInDate":
			err = s.OptInDate.UnmarshalJSON(v)
		case "Score":
			s.Score, err = wire.Float(v)
		case "ScoreLastUpdate":
			err = s.ScoreLastUpdate.UnmarshalJSON(v)
		case "CustomFields":
			err = s.CustomFields.UnmarshalJSON(v)
		default:
			if id, ok := wire.CustomFieldID(key); ok {
				if s.CustomFields == nil {
					s.CustomFields = make(CustomFields, 8)
				}
				s.CustomFields[id], err = wire.String(v)
			}
		}
		return err
	})
}

// decodeSubscribers decodes an array of subscriber objects (an object of them is accepted
// too, as PHP sends a list with gaps).
func decodeSubscribers(value []byte) ([]Subscriber, error) {
	var out []Subscriber
	err := wire.ScanArray(value, func(elem []byte) error {
		out = append(out, Subscriber{})
		return out[len(out)-1].UnmarshalJSON(elem)
	})
	return out, err
}

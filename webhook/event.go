package webhook

import (
	"strings"
	"time"
)

// Kind says which list event a webhook delivery reports.
type Kind string

// The event kinds. Their values are the canonical wire spellings of the
// Action field.
const (
	// KindSubscription is posted to a list's WebServiceSubscriptionURL once
	// a subscription is confirmed.
	KindSubscription Kind = "Subscription"
	// KindUnsubscription is posted to a list's WebServiceUnsubscriptionURL
	// once an unsubscription is processed.
	KindUnsubscription Kind = "Unsubscription"
)

// ParseKind maps an Action value to a Kind. Matching ignores case and
// surrounding white space and accepts these synonyms:
//
//	KindSubscription:   "subscription", "subscribe", "subscribed"
//	KindUnsubscription: "unsubscription", "unsubscribe", "unsubscribed"
//
// An empty value yields ErrMissingAction, anything else ErrUnknownAction.
func ParseKind(s string) (Kind, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "subscription", "subscribe", "subscribed":
		return KindSubscription, nil
	case "unsubscription", "unsubscribe", "unsubscribed":
		return KindUnsubscription, nil
	case "":
		return "", ErrMissingAction
	}
	return "", ErrUnknownAction
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool {
	return k == KindSubscription || k == KindUnsubscription
}

// Known values of Subscriber.BounceType. Values arriving in another letter
// case are converted to these spellings; unknown values are kept as sent.
const (
	BounceNotBounced = "Not Bounced"
	BounceHard       = "Hard"
	BounceSoft       = "Soft"
)

// Known values of Subscriber.SubscriptionStatus. Values arriving in another
// letter case are converted to these spellings; unknown values are kept as
// sent.
const (
	StatusSubscribed          = "Subscribed"
	StatusConfirmationPending = "Confirmation Pending"
	StatusUnsubscribed        = "Unsubscribed"
)

// Event is one webhook delivery.
type Event struct {
	// Kind is the reported event, from the action member.
	Kind Kind
	// Time is the action_timestamp member (Unix seconds; Timestamp is read too) in UTC;
	// zero when the member is absent.
	Time time.Time
	// ListID identifies the list. The service's callback names none: it comes from the
	// query parameter given to WithListIDParam (each list's callback URL can carry it, as
	// ?list=ID), or from a ListID member when a body carries one; zero otherwise.
	ListID int
	// Subscriber is the subscriber record.
	Subscriber Subscriber
	// Extra holds the top-level members other than action, action_timestamp, subscriber
	// and the subscriber's own keys: the custom arguments the service may return; nil
	// when there are none.
	Extra map[string]string
}

// Subscriber is the subscriber record carried by an Event.
//
// Text fields are trimmed of surrounding white space; custom field and
// Extra values are kept verbatim.
type Subscriber struct {
	// ID is the SubscriberID; zero when absent.
	ID int
	// EmailAddress is always non-empty in a successfully parsed Event.
	EmailAddress string
	// BounceType is one of the Bounce constants, or the value as sent.
	BounceType string
	// SubscriptionStatus is one of the Status constants, or the value as
	// sent.
	SubscriptionStatus string
	// SubscriptionIP is empty when unset (sent as "0.0.0.0").
	SubscriptionIP string
	// UnsubscriptionIP is empty when unset (sent as "0.0.0.0").
	UnsubscriptionIP string
	// SubscriptionDate is zero when unset (sent as "0000-00-00" or empty).
	SubscriptionDate time.Time
	// UnsubscriptionDate is zero when unset.
	UnsubscriptionDate time.Time
	// OptInDate is zero when unset.
	OptInDate time.Time
	// CustomFields maps the numeric id of each CustomField<id> key to its
	// value; nil when there are none.
	CustomFields map[int]string
	// Extra holds every other key of the record under its name as sent;
	// nil when there are none.
	Extra map[string]string
}

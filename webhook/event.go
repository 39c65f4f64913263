package webhook

import (
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
)

// Kind says which list event a webhook delivery reports.
type Kind string

// The event kinds. Their values are the canonical wire spellings of the
// action member.
const (
	// KindSubscription is posted to a list's WebServiceSubscriptionURL once
	// a subscription is confirmed.
	KindSubscription Kind = "Subscription"
	// KindUnsubscription is posted to a list's WebServiceUnsubscriptionURL
	// once an unsubscription is processed.
	KindUnsubscription Kind = "Unsubscription"
)

// ParseKind maps an action value to a Kind. Matching ignores case and
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
	// Subscriber is the subscriber record, the root package's type: the same typed
	// status, bounce type, dates and custom fields as subscriber.get's, with the keys it
	// does not know in Subscriber.Extra. Text values are trimmed of surrounding white space,
	// status and bounce type written as the service spells them whatever their case;
	// custom field and Extra values are kept verbatim, and the unset IP '0.0.0.0' as sent.
	Subscriber sendloop.Subscriber
	// AddressValid reports whether Subscriber.EmailAddress is an email address by
	// sendloop.CheckAddress, the rule every SDK method that takes an address applies. The
	// address is the service's data, so an event whose address is not one is still parsed
	// and passed on (the Handler answers 200 unless given WithRejectInvalidAddress): check
	// this before sending to it or copying it into another list.
	AddressValid bool
	// Extra holds the top-level members other than action, action_timestamp, subscriber
	// and the subscriber's own keys: the custom arguments the service may return; nil
	// when there are none.
	Extra map[string]string
}

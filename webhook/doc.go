// Package webhook receives the subscriber data that Sendloop posts to the
// URLs held in a list's settings: WebServiceSubscriptionURL, posted once a
// subscription is confirmed, and WebServiceUnsubscriptionURL, posted once an
// unsubscription is processed.
//
// Use Parse or ParseBody to turn a delivery into an Event, or mount
// a Handler built with NewHandler, which also checks the method, the body
// size and an optional shared token.
//
// The service's specification does not show the body, encoding or method of
// these posts, nor any retry or signing scheme. This package therefore makes
// the decisions below.
//
// # Body formats
//
// The service posts an XML document whose root element is sendloop_webservice, holding the
// event (action: Subscription or Unsubscription), its time (action_timestamp, Unix seconds)
// and the subscriber, whose children are the keys of the subscriber record (subscriber.get's
// keys, custom fields included):
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<sendloop_webservice>
//	  <action>Subscription</action>
//	  <action_timestamp>1763700000</action_timestamp>
//	  <subscriber>
//	    <SubscriberID>12</SubscriberID>
//	    <EmailAddress>ann@example.com</EmailAddress>
//	    <SubscriptionDate>2026-11-21</SubscriptionDate>
//	    <CustomField7>Ann</CustomField7>
//	    ...
//	  </subscriber>
//	</sendloop_webservice>
//
// The body decides the format, not the Content-Type, which the service does not publish (a
// PHP sender labels an XML string application/x-www-form-urlencoded): after an optional BOM
// and white space, '<' is XML, '{' is JSON and anything else a form; only a
// multipart/form-data body is recognised by its header, for its boundary. A form that names
// no member of the callback (text such as "hello world") is not a webhook body
// (ErrNotWebhookBody), answered 400 "webhook: not a webhook body". The same members
// are read in every format: a form writes them action=…&action_timestamp=…&subscriber[Key]=…
// (Subscriber[Key] too), and JSON as {"action": …, "action_timestamp": …, "subscriber": {…}}
// with string or number values.
//
// Parsing is tolerant: names match without regard to case, Action and Timestamp are read
// too (older shapes), subscriber keys may also appear at the top level (the subscriber
// element wins on conflict), any other top-level member (the custom arguments the service
// may return) is kept in Event.Extra, and keys of the subscriber that the package does not
// know in Subscriber.Extra; XML attributes and deeper nesting are ignored. The subscriber
// is the root package's sendloop.Subscriber, read with the same decoder as subscriber.get's
// answer: dates are 'YYYY-MM-DD' (date-times and RFC 3339 are accepted too), '0000-00-00'
// or empty meaning unset, the zero Date; the unset IP address '0.0.0.0' is kept as sent. A
// missing action_timestamp gives the zero Time; a value that does not convert (a
// non-numeric timestamp or SubscriberID) is an error, answered 400, and nothing is passed
// on.
//
// The callback names no list: give each list its own callback URLs carrying its ID
// (https://hooks.example.com/sendloop?list=12) and the Handler's WithListIDParam("list")
// fills Event.ListID. A Handler so told never passes on an event without a list ID: a
// request with neither the parameter nor a list ID in its body, or whose parameter and body
// name different lists, is answered 400.
//
// An action must be present and known (see ParseKind), unless the Handler is given
// WithDefaultKind, and the subscriber record must carry an EmailAddress. Errors name a
// member one way, as the service's body does (action, action_timestamp, subscriber,
// EmailAddress, CustomField7, …), whatever the case it was sent in.
//
// # Addresses
//
// The EmailAddress is the service's data: an event whose address is not an email address
// (by sendloop.CheckAddress, the rule every SDK method applies before sending) is still
// parsed and, by default, passed on and answered 200, with Event.AddressValid false; check
// it before using the address. A receiver that prefers the service to see such a delivery
// fail gives the Handler WithRejectInvalidAddress, which answers 400 instead. The
// specification is silent on whether the service retries a refused delivery.
//
// # Authentication
//
// Since the service signs nothing, a Handler can require a shared token
// (WithToken). The token is best placed in the configured URL, as in
// https://example.com/hooks/sendloop?token=SECRET, because a URL is all the
// list settings hold; the X-Sendloop-Token header is accepted as well, for
// proxies or other senders. Tokens are compared in constant time and never
// appear in responses, errors or logs.
//
// # Responses and retries
//
// The Handler answers 200 once the callback succeeds, 4xx with a short
// plain-text reason when the request is at fault (see NewHandler), and 500
// when the callback fails, so that a sender that retries will try again.
// Nothing is known about whether or how the service retries, so deliveries
// may repeat, or never come: make the callback idempotent, for instance by
// keying on Event.Kind, Event.ListID and Subscriber.SubscriberID or EmailAddress, and
// do not rely on webhooks alone to keep lists in sync.
package webhook

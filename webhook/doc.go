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
// The expected body is an XML document whose root element, of any name,
// holds an Action, a Unix Timestamp, optionally a ListID, and a Subscriber
// element with the subscriber record's keys:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<Webhook>
//	  <Action>Subscription</Action>
//	  <Timestamp>1763700000</Timestamp>
//	  <ListID>3</ListID>
//	  <Subscriber>
//	    <SubscriberID>12</SubscriberID>
//	    <EmailAddress>ann@example.com</EmailAddress>
//	    <SubscriptionDate>2026-11-21</SubscriptionDate>
//	    <CustomField7>Ann</CustomField7>
//	    ...
//	  </Subscriber>
//	</Webhook>
//
// The same data is accepted form-encoded, with subscriber keys written as
// Subscriber[EmailAddress] (also as a multipart/form-data body), and as a
// JSON object with a nested "Subscriber" object whose values may be strings
// or numbers. ParseBody describes how the format is chosen.
//
// Parsing is tolerant: element and key names match without regard to case,
// subscriber keys may also appear unprefixed at the top level (the
// Subscriber container wins on conflict), keys the package does not know
// are kept in Subscriber.Extra, and XML attributes and deeper nesting are
// ignored. Dates are 'YYYY-MM-DD' (date-times are accepted too), with
// '0000-00-00' or empty meaning unset, which gives the zero time.Time; the
// unset IP address '0.0.0.0' gives the empty string. Values that do not
// convert, such as a non-numeric SubscriberID, are errors.
//
// An Action must be present and known (see ParseKind), unless the Handler
// is given WithDefaultKind, and the subscriber record must carry an
// EmailAddress.
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
// keying on Event.Kind, Event.ListID and Subscriber.ID or EmailAddress, and
// do not rely on webhooks alone to keep lists in sync.
package webhook

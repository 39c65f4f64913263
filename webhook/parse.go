package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// DefaultMaxBodyBytes is the body size limit of Parse and of a
// Handler without WithMaxBodyBytes.
const DefaultMaxBodyBytes = 1 << 20

// Sentinel errors, matched with errors.Is. ParseBody and Parse wrap
// them in a *ParseError.
var (
	// ErrEmptyBody means the body was empty or only white space.
	ErrEmptyBody = errors.New("empty body")
	// ErrNotWebhookBody means the body is neither XML, JSON nor a form naming any member
	// of the callback (action, action_timestamp, subscriber, a subscriber key): text such
	// as "hello world", say.
	ErrNotWebhookBody = errors.New("not a webhook body")
	// ErrBodyTooLarge means the body exceeded the size limit.
	ErrBodyTooLarge = errors.New("body too large")
	// ErrMissingAction means the body carried no action member.
	ErrMissingAction = errors.New("missing action")
	// ErrUnknownAction means the action is none that ParseKind accepts.
	ErrUnknownAction = errors.New("unknown action")
	// ErrMissingSubscriber means the body carried no subscriber record.
	ErrMissingSubscriber = errors.New("missing subscriber")
	// ErrMissingEmailAddress means the subscriber record has no
	// EmailAddress.
	ErrMissingEmailAddress = errors.New("missing email address")
	// ErrInvalidValue means a field's value could not be converted (a
	// number, date or timestamp that does not parse). ParseError.Field
	// names the field.
	ErrInvalidValue = errors.New("invalid value")
)

// ParseError is the error type of ParseBody and Parse. Its message
// names the body format and field but never repeats field values, which
// may be personal data.
type ParseError struct {
	// Format is the body format: "xml", "json", "form" or "multipart";
	// empty when the error precedes format detection.
	Format string
	// Field is the offending member, named as the service's body names it whatever the
	// case it was sent in: action, action_timestamp (also for Timestamp), subscriber,
	// ListID, or a subscriber key such as EmailAddress or CustomField7; a key the package
	// does not know is named as sent. Empty when the error concerns the body as a whole.
	Field string
	// Err is the cause: one of the Err variables, or a syntax or read error.
	Err error
}

// Error implements error.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("webhook")
	if e.Format != "" {
		b.WriteString(": ")
		b.WriteString(e.Format)
		b.WriteString(" body")
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("parse error")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads the body of r, at most DefaultMaxBodyBytes of it, and
// parses it with ParseBody using r's Content-Type header. It ignores the
// method and the URL, so a token in the query never reaches the Event.
func Parse(r *http.Request) (*Event, error) {
	if r.Body == nil {
		return nil, &ParseError{Err: ErrEmptyBody}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxBodyBytes+1))
	if err != nil {
		return nil, &ParseError{Err: fmt.Errorf("read body: %w", err)}
	}
	if len(body) > DefaultMaxBodyBytes {
		return nil, &ParseError{Err: ErrBodyTooLarge}
	}
	return ParseBody(r.Header.Get("Content-Type"), body)
}

// ParseBody parses a webhook body. The content type selects the format:
//
//	text/xml, application/xml, */*+xml        XML
//	application/json, text/json, */*+json     JSON
//	application/x-www-form-urlencoded         form
//	multipart/form-data                       form, multipart-encoded
//
// When contentType is empty or anything else, the first byte that is not
// white space decides: '<' XML, '{' JSON, otherwise form. A leading UTF-8
// byte order mark is ignored. A form that names no member of the callback
// (see ErrNotWebhookBody) is not a webhook body.
//
// All errors are of type *ParseError.
func ParseBody(contentType string, body []byte) (*Event, error) {
	return parseBody(contentType, body, "")
}

// parseBody is ParseBody with a kind to use when the body has no action
// (none when empty).
func parseBody(contentType string, body []byte, defaultKind Kind) (*Event, error) {
	body = bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &ParseError{Err: ErrEmptyBody}
	}

	format, boundary := detectFormat(contentType, trimmed[0])
	var (
		rec *record
		err error
	)
	switch format {
	case "xml":
		rec, err = parseXML(body)
	case "json":
		rec, err = parseJSON(body)
	case "multipart":
		rec, err = parseMultipart(body, boundary)
	default:
		rec, err = parseForm(body)
		if !rec.namesMember() {
			// Text that merely parses as a form ("hello world") is no callback: saying
			// so beats reporting a form without an action.
			return nil, &ParseError{Err: ErrNotWebhookBody}
		}
	}
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Format = format
			return nil, pe
		}
		return nil, &ParseError{Format: format, Err: err}
	}
	ev, err := rec.event(defaultKind)
	if err != nil {
		err.(*ParseError).Format = format
		return nil, err
	}
	return ev, nil
}

// detectFormat returns the body format, and for multipart the boundary. The body decides,
// not the Content-Type: the service's label for these posts is not published, and PHP
// senders label an XML string application/x-www-form-urlencoded. Only a multipart body
// needs its header, for the boundary.
func detectFormat(contentType string, first byte) (format, boundary string) {
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && mt == "multipart/form-data" && params["boundary"] != "" {
		return "multipart", params["boundary"]
	}
	switch first {
	case '<':
		return "xml", ""
	case '{':
		return "json", ""
	}
	return "form", ""
}

// fields is an ordered set of key/value pairs whose keys compare without
// regard to case; the first value of a key wins.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(wire.AppendValidUTF8(nil, []byte(s)))
}

type fields struct {
	keys []string          // as first sent, in order
	vals map[string]string // lower-cased key -> value
}

// add keeps the first value of key. Invalid UTF-8 in either is replaced by U+FFFD, the
// sendloop packages' one rule, whatever the body's format; an empty key names nothing and
// is dropped, as the form reader drops "Subscriber[]".
func (f *fields) add(key, value string) {
	if key == "" {
		return
	}
	key, value = validUTF8(key), validUTF8(value)
	lk := strings.ToLower(key)
	if _, dup := f.vals[lk]; dup {
		return
	}
	if f.vals == nil {
		f.vals = make(map[string]string)
	}
	f.vals[lk] = value
	f.keys = append(f.keys, key)
}

func (f *fields) get(lowerKey string) (string, bool) {
	v, ok := f.vals[lowerKey]
	return v, ok
}

// record is a decoded body before conversion: the top-level keys and the
// keys of the subscriber record.
type record struct {
	top    fields
	sub    fields
	hasSub bool // a subscriber container was present, even if empty
}

// namesMember reports a member of the callback in rec: a top-level key with a meaning of
// its own or of the subscriber record, or a subscriber container.
func (rec *record) namesMember() bool {
	if rec.hasSub {
		return true
	}
	for _, k := range rec.top.keys {
		if lk := strings.ToLower(k); reservedTop(lk) || subscriberKey(lk) {
			return true
		}
	}
	return false
}

// Top-level keys with a meaning of their own. A top-level key of the subscriber record
// (a flat body) is taken for the subscriber's; any other one is kept in Event.Extra.
func reservedTop(lowerKey string) bool {
	switch lowerKey {
	case "action", "action_timestamp", "timestamp", "listid":
		return true
	}
	return false
}

// subscriberKey reports a key of the subscriber record (subscriber.get's keys).
func subscriberKey(lowerKey string) bool {
	switch lowerKey {
	case "subscriberid", "emailaddress", "bouncetype", "subscriptionstatus", "subscriptiondate",
		"subscriptionip", "unsubscriptiondate", "unsubscriptionip", "optindate", "score", "scorelastupdate":
		return true
	}
	_, ok := customFieldID(lowerKey)
	return ok
}

// event converts the record; errors are *ParseError without Format.
func (rec *record) event(defaultKind Kind) (*Event, error) {
	ev := &Event{}

	action, _ := rec.top.get("action")
	kind, err := ParseKind(action)
	if errors.Is(err, ErrMissingAction) && defaultKind != "" {
		kind, err = defaultKind, nil
	}
	if err != nil {
		return nil, &ParseError{Field: "action", Err: err}
	}
	ev.Kind = kind

	tsKey := "action_timestamp"
	ts, ok := rec.top.get(tsKey)
	if !ok {
		tsKey = "timestamp"
		ts, ok = rec.top.get(tsKey)
	}
	if ok && strings.TrimSpace(ts) != "" {
		sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
		if err != nil {
			return nil, &ParseError{Field: "action_timestamp", Err: ErrInvalidValue}
		}
		ev.Time = time.Unix(sec, 0).UTC()
	}

	// Subscriber keys at the top level (a flat body) fill in what the subscriber container
	// lacks; other top-level members (custom arguments, say) are the event's Extra.
	sub := &rec.sub
	for _, k := range rec.top.keys {
		lk := strings.ToLower(k)
		switch {
		case reservedTop(lk):
		case subscriberKey(lk):
			sub.add(k, rec.top.vals[lk])
		default:
			if ev.Extra == nil {
				ev.Extra = map[string]string{}
			}
			ev.Extra[k] = rec.top.vals[lk]
		}
	}
	if !rec.hasSub && len(sub.keys) == 0 {
		return nil, &ParseError{Field: "subscriber", Err: ErrMissingSubscriber}
	}

	listID, _ := rec.top.get("listid")
	if strings.TrimSpace(listID) == "" {
		listID, _ = sub.get("listid")
	}
	if ev.ListID, err = atoi(listID); err != nil {
		return nil, &ParseError{Field: "ListID", Err: err}
	}

	if err := sub.subscriber(&ev.Subscriber); err != nil {
		return nil, err
	}
	if ev.Subscriber.EmailAddress == "" {
		return nil, &ParseError{Field: "EmailAddress", Err: ErrMissingEmailAddress}
	}
	ev.AddressValid = sendloop.CheckAddress(ev.Subscriber.EmailAddress) == nil
	return ev, nil
}

// subscriberKeys maps the lower-cased keys of the subscriber record to their spelling.
var subscriberKeys = map[string]string{
	"subscriberid": "SubscriberID", "emailaddress": "EmailAddress", "bouncetype": "BounceType",
	"subscriptionstatus": "SubscriptionStatus", "subscriptiondate": "SubscriptionDate",
	"subscriptionip": "SubscriptionIP", "unsubscriptiondate": "UnsubscriptionDate",
	"unsubscriptionip": "UnsubscriptionIP", "optindate": "OptInDate", "score": "Score",
	"scorelastupdate": "ScoreLastUpdate",
}

// subscriber fills s from the subscriber keys with the root package's decoder, one key at a
// time, so that a value that does not convert names its key.
func (f *fields) subscriber(s *sendloop.Subscriber) error {
	for _, key := range f.keys {
		lk := strings.ToLower(key)
		raw := f.vals[lk]
		v := strings.TrimSpace(raw)
		name, known := subscriberKeys[lk]
		switch {
		case lk == "listid":
			continue // read by event
		case lk == "subscriberid" && strings.HasPrefix(v, "-"):
			return &ParseError{Field: name, Err: ErrInvalidValue}
		case lk == "bouncetype":
			v = canonical(v, string(sendloop.BounceNone), string(sendloop.BounceHard), string(sendloop.BounceSoft))
		case lk == "subscriptionstatus":
			v = canonical(v, string(sendloop.StatusSubscribed), string(sendloop.StatusConfirmationPending), string(sendloop.StatusUnsubscribed))
		case lk == "subscriptiondate", lk == "unsubscriptiondate", lk == "optindate", lk == "scorelastupdate":
			// RFC 3339, with its offset, is read too, as the UTC wall clock.
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				v = t.UTC().Format(time.DateTime)
			}
		case known:
		default:
			if id, ok := customFieldID(lk); ok {
				name, v = "CustomField"+strconv.Itoa(id), raw
			} else {
				name, v = key, raw // kept in Extra, verbatim
			}
		}
		member, err := json.Marshal(map[string]string{name: v})
		if err == nil {
			err = s.UnmarshalJSON(member)
		}
		if err != nil {
			return &ParseError{Field: name, Err: ErrInvalidValue}
		}
	}
	return nil
}

// customFieldID returns the id of a lower-cased "customfield<id>" key.
func customFieldID(lowerKey string) (int, bool) {
	digits, ok := strings.CutPrefix(lowerKey, "customfield")
	if !ok || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.Atoi(digits)
	if err != nil { // out of range
		return 0, false
	}
	return id, true
}

// atoi parses an optional non-negative decimal number; empty is zero.
func atoi(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, ErrInvalidValue
	}
	return n, nil
}

// canonical returns the known value equal to v but for case, or v.
func canonical(v string, known ...string) string {
	for _, k := range known {
		if strings.EqualFold(v, k) {
			return k
		}
	}
	return v
}

// Date layouts accepted besides the documented 'YYYY-MM-DD', in case the

package sendloop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/check"
	"github.com/go-sendloop/sendloop/internal/commands"
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

// Subscriber is a subscriber record of a list.
//
//sendloop:decode
type Subscriber struct {
	SubscriberID       int                // the subscriber's ID within the service
	EmailAddress       string             // the address, as the service keeps it
	BounceType         BounceType         // the address's bounce state; kept as sent
	SubscriptionStatus SubscriptionStatus // e.g. StatusSubscribed; other values kept as sent
	SubscriptionDate   Date               // zero for the service's 0000-00-00
	SubscriptionIP     string             `wire:",common=0.0.0.0"` // "0.0.0.0" when unset, as the service sends it
	UnsubscriptionDate Date               // zero while subscribed
	UnsubscriptionIP   string             `wire:",common=0.0.0.0"` // "0.0.0.0" when unset, as the service sends it
	OptInDate          Date               // the opt-in's confirmation; zero when none
	// CustomFields holds the CustomField<id> keys by field ID.
	CustomFields CustomFields `wire:",customfields"`
	// Score and ScoreLastUpdate come with a single subscriber (subscriber.get) only.
	Score           float64
	ScoreLastUpdate DateTime // when Score was last computed; zero when never
	// Extra holds the keys this package does not know, as they came (a structured value as
	// its JSON); nil when there are none. The webhook package fills it from a callback too.
	Extra map[string]string `wire:",extra=extraText"`
}

// minSubscriberJSON is a size below that of any subscriber record the service sends: its
// nine standard members' names alone take more.
const minSubscriberJSON = 160

// decodeSubscribers decodes an array of subscriber objects (an object of them is accepted
// too, as PHP sends a list with gaps).
func decodeSubscribers(value []byte) ([]Subscriber, error) { return recordsFrom[Subscriber](value) }

// hasControl reports a control character, which no parameter that is text for people or
// logs should carry.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// SubscriberSubscribeParams are the parameters of Subscribers.Subscribe.
type SubscriberSubscribeParams struct {
	EmailAddress string `url:"EmailAddress"` // required; checked before sending
	// SubscriptionIP is the address the subscriber subscribed from; the service requires it.
	// The specification types it as a string: it is sent as given (an IPv4 or IPv6 address,
	// or whatever the caller records), refusing only control characters.
	SubscriptionIP string `url:"SubscriptionIP"`
	// Fields holds custom field values by field ID, sent as Fields[CustomField<id>].
	Fields CustomFields `url:"Fields,omitempty"`
}

// SubscriberSubscribeResult is the service's answer to a subscription.
type SubscriberSubscribeResult struct {
	SubscriberID int // the new (or, after a confirmed retry, existing) subscriber's ID
	// SubscriptionStatus is StatusSubscribed, or StatusConfirmationPending on a double
	// opt-in list, where the address owner must confirm from an email first.
	SubscriptionStatus SubscriptionStatus
	// RedirectURL is the page to send the subscriber to. It is empty when ConfirmedOnRetry:
	// only the lost answer carried it, and subscriber.get does not return it.
	RedirectURL string
	// ConfirmedOnRetry reports that an attempt whose answer was lost (a reset, a timeout, a
	// 502 or 504) subscribed the address: the retry was answered "already exists"
	// (ErrEmailExists) and subscriber.get showed the subscriber in the list. SubscriberID
	// and SubscriptionStatus then come from that read-back.
	ConfirmedOnRetry bool
}

// validate refuses what the service would: the address, SubscriptionIP and custom field IDs.
func (p SubscriberSubscribeParams) validate(command string) error {
	if err := checkEmail(command, "EmailAddress", p.EmailAddress); err != nil {
		return err
	}
	if strings.TrimSpace(p.SubscriptionIP) == "" {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"SubscriptionIP"}, Reason: "SubscriptionIP is empty"}
	}
	if hasControl(p.SubscriptionIP) {
		return invalid(command, ErrInvalidParameterValue, "SubscriptionIP", "SubscriptionIP holds control characters")
	}
	if err := checkFieldIDs(command, "Fields", p.Fields); err != nil {
		return err
	}
	return nil
}

// Subscribe adds an address to a list (subscriber.subscribe). On a double opt-in list the
// subscriber stays Confirmation Pending until the address owner confirms.
//
// The address, the list ID and SubscriptionIP are checked before sending. When a retry
// after an attempt that may have run (a reset, a timeout, 502, 504) is answered
// ErrEmailExists, Subscribe reads the subscriber back (subscriber.get): subscribed or
// pending, the call succeeds with ConfirmedOnRetry; otherwise, or when the read-back
// fails, the error matches ErrOutcomeUnknown and not ErrEmailExists (the answer is in
// OutcomeUnknownError.Last). A plain ErrEmailExists means the address was in the list
// before the call.
func (s *SubscribersService) Subscribe(ctx context.Context, listID int, p SubscriberSubscribeParams) (*SubscriberSubscribeResult, error) {
	const command = commands.SubscriberSubscribe
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	form, err := wire.Values(p)
	if err != nil {
		return nil, err
	}
	form.Set("ListID", strconv.Itoa(listID))
	res := new(SubscriberSubscribeResult)
	err = s.client.do(ctx, &apiCall{command: command, form: form}, func(key, v []byte) (err error) {
		switch string(key) {
		case "SubscriberID":
			res.SubscriberID, err = wire.Int(v)
		case "SubscriptionStatus":
			var st string
			st, err = wire.Interned(v, string(StatusSubscribed), string(StatusConfirmationPending))
			res.SubscriptionStatus = SubscriptionStatus(st)
		case "RedirectURL":
			res.RedirectURL, err = wire.String(v)
		}
		return err
	})
	if answer, ok := alreadyDone(err, ErrEmailExists); ok {
		res = &SubscriberSubscribeResult{ConfirmedOnRetry: true}
		err = settleRetry(command, answer, func() error {
			sub, err := s.Get(ctx, listID, SubscriberGetParams{EmailAddress: p.EmailAddress})
			if err != nil {
				return err
			}
			if !sub.SubscriptionStatus.isMember() {
				return fmt.Errorf("the subscriber's status is %q", sub.SubscriptionStatus)
			}
			res.SubscriberID, res.SubscriptionStatus = sub.SubscriberID, sub.SubscriptionStatus
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// isMember reports a status of an address that is in the list: subscribed or pending.
func (s SubscriptionStatus) isMember() bool {
	return s == StatusSubscribed || s == StatusConfirmationPending
}

func checkFieldIDs(command, field string, fields CustomFields) error {
	for id := range fields {
		if check.ID(id) != check.IDValid {
			return invalid(command, ErrCustomFieldNotFound, field, fmt.Sprintf("custom field ID %d is not an ID: IDs run from 1 to 2147483647", id))
		}
	}
	return nil
}

// SubscriberGetParams names a subscriber of a list: give exactly one of SubscriberID and
// EmailAddress.
type SubscriberGetParams struct {
	SubscriberID int    `url:"SubscriberID,omitempty"` // the subscriber's ID, or 0
	EmailAddress string `url:"EmailAddress,omitempty"` // the subscriber's address, or ""
}

// validate requires exactly one of SubscriberID and EmailAddress, each well formed.
func (p SubscriberGetParams) validate(command string) error {
	switch {
	case p.SubscriberID == 0 && p.EmailAddress == "":
		return &ValidationError{Code: ErrMissingParameters, Command: command,
			Fields: []string{"SubscriberID", "EmailAddress"}, Reason: "give SubscriberID or EmailAddress"}
	case p.SubscriberID != 0 && p.EmailAddress != "":
		return &ValidationError{Code: ErrInvalidParameterValue, Command: command,
			Fields: []string{"SubscriberID", "EmailAddress"}, Reason: "give SubscriberID or EmailAddress, not both"}
	case checkOptionalID(command, "SubscriberID", p.SubscriberID) != nil:
		return checkOptionalID(command, "SubscriberID", p.SubscriberID)
	case p.EmailAddress != "":
		if err := checkEmail(command, "EmailAddress", p.EmailAddress); err != nil {
			return err
		}
	}
	return nil
}

// Get returns one subscriber of a list, with its score (subscriber.get).
func (s *SubscribersService) Get(ctx context.Context, listID int, p SubscriberGetParams) (*Subscriber, error) {
	const command = commands.SubscriberGet
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	form, err := wire.Values(p)
	if err != nil {
		return nil, err
	}
	form.Set("ListID", strconv.Itoa(listID))
	sub := new(Subscriber)
	err = s.client.do(ctx, &apiCall{command: command, form: form}, func(key, v []byte) error {
		if string(key) == "Subscriber" {
			return sub.UnmarshalJSON(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// SubscriberUpdateParams names a subscriber and its changes. With SubscriberID set,
// EmailAddress, when given, is the subscriber's new address; without it, EmailAddress
// names the subscriber.
type SubscriberUpdateParams struct {
	SubscriberID int          `url:"SubscriberID,omitempty"` // names the subscriber when set
	EmailAddress string       `url:"EmailAddress,omitempty"` // the new address, or the subscriber's own without an ID
	Fields       CustomFields `url:"Fields,omitempty"`       // custom field values to set, by field ID
}

// validate names the subscriber and requires something to change.
func (p SubscriberUpdateParams) validate(command string) error {
	if p.SubscriberID == 0 && p.EmailAddress == "" {
		return &ValidationError{Code: ErrMissingParameters, Command: command,
			Fields: []string{"SubscriberID", "EmailAddress"}, Reason: "give SubscriberID or EmailAddress"}
	}
	if err := checkOptionalID(command, "SubscriberID", p.SubscriberID); err != nil {
		return err
	}
	if p.EmailAddress != "" {
		if err := checkEmail(command, "EmailAddress", p.EmailAddress); err != nil {
			return err
		}
	}
	if len(p.Fields) == 0 && (p.SubscriberID == 0 || p.EmailAddress == "") {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"Fields"},
			Reason: "nothing to change: no custom field and no new address"}
	}
	if err := checkFieldIDs(command, "Fields", p.Fields); err != nil {
		return err
	}
	return nil
}

// Update changes a subscriber's custom fields, or its address (subscriber.update). The
// subscriber is named by SubscriberID or EmailAddress; with both, EmailAddress is the new
// address.
//
// Nothing to change: an update with no field set is refused before sending with
// ErrMissingParameters, the rule of every Update method of this package. Here that is an
// update without Fields that names the subscriber only.
func (s *SubscribersService) Update(ctx context.Context, listID int, p SubscriberUpdateParams) error {
	const command = commands.SubscriberUpdate
	if err := checkListID(command, listID); err != nil {
		return err
	}
	if err := p.validate(command); err != nil {
		return err
	}
	form, err := wire.Values(p)
	if err != nil {
		return err
	}
	form.Set("ListID", strconv.Itoa(listID))
	return s.client.do(ctx, &apiCall{command: command, form: form}, nil)
}

// BrowsePageSize is how many subscribers subscriber.browse returns per page.
const BrowsePageSize = 100

// SubscriberBrowseParams selects a page of a list's subscribers.
type SubscriberBrowseParams struct {
	// SegmentID restricts the page to a segment of the list; 0 for the whole list.
	SegmentID int `url:"SegmentID,omitempty"`
	// StartIndex is the page index, from 0: page n holds subscribers n·100 to n·100+99.
	StartIndex int `url:"StartIndex,omitempty"`
	// Concurrency is how many pages BrowseIter asks for at once (default 1: one after the
	// other). It is not sent, and Browse ignores it. Over a real link each page costs a
	// round trip, so N pages in flight read a big list up to N times faster; the pages
	// still come in order, and at most N are held in memory. Values above
	// MaxBrowseConcurrency count as that.
	Concurrency int `url:"-"`
}

// MaxBrowseConcurrency is the most pages BrowseIter asks for at once, whatever
// SubscriberBrowseParams.Concurrency says: each costs a goroutine and a page of memory.
const MaxBrowseConcurrency = 256

// validate refuses an impossible StartIndex or SegmentID.
func (p SubscriberBrowseParams) validate(command string) error {
	if p.StartIndex < 0 || p.StartIndex > math.MaxInt32 {
		return invalid(command, ErrInvalidParameterValue, "StartIndex", "StartIndex cannot be negative")
	}
	if err := idError(command, "SegmentID", p.SegmentID, true, ErrInvalidSegmentID); err != nil {
		return err
	}
	return nil
}

// Browse returns one page of up to BrowsePageSize subscribers (subscriber.browse).
func (s *SubscribersService) Browse(ctx context.Context, listID int, p SubscriberBrowseParams) ([]Subscriber, error) {
	const command = commands.SubscriberBrowse
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	var subs []Subscriber
	if err := s.browse(ctx, listID, p, readBrowsePage(&subs)); err != nil {
		return nil, err
	}
	return subs, nil
}

// browse asks for a page of subscribers (p checked) and reads the answer with read.
func (s *SubscribersService) browse(ctx context.Context, listID int, p SubscriberBrowseParams, read func(key []byte, d *wire.Decoder) error) error {
	form, err := wire.Values(p)
	if err != nil {
		return err
	}
	form.Set("ListID", strconv.Itoa(listID))
	return s.client.doWire(ctx, &apiCall{command: commands.SubscriberBrowse, form: form}, read)
}

// readBrowsePage reads the Subscribers of a subscriber.browse answer into subs.
func readBrowsePage(subs *[]Subscriber) func(key []byte, d *wire.Decoder) error {
	return member("Subscribers", func(d *wire.Decoder) (err error) {
		// Room for the page at once (a record is over minSubscriberJSON bytes): a page of
		// 100 would otherwise be copied seven times as it grows.
		*subs, err = appendRecords(d, make([]Subscriber, 0, min(BrowsePageSize, d.Remaining()/minSubscriberJSON)))
		return err
	})
}

// BrowseIter walks every subscriber of a list (or segment) page by page, from
// p.StartIndex, in order. It yields an error once and stops; it stops after a short or
// empty page, and with an error on a page that repeats the previous one.
//
// With p.Concurrency N above 1 it asks for up to N pages at once (the next pages are known
// before this one arrives), holds at most N pages in memory, and yields exactly what it
// would one page at a time. Once a page is known to end the list it asks for no page after
// it, so it reads at most N-1 pages past the end. When the walk stops (the loop breaks, a
// page fails or ends the list) the pages still in flight are cancelled and dropped, their
// errors unseen. The client's window of calls in flight applies to these pages too: a
// service answering 429 or 503 gets fewer of them at once.
func (s *SubscribersService) BrowseIter(ctx context.Context, listID int, p SubscriberBrowseParams) iter.Seq2[Subscriber, error] {
	const command = commands.SubscriberBrowse
	if err := checkListID(command, listID); err != nil {
		return failedIter[Subscriber](err)
	}
	if err := p.validate(command); err != nil {
		return failedIter[Subscriber](err)
	}
	return pagesAhead(ctx, command, p.StartIndex, BrowsePageSize, min(p.Concurrency, MaxBrowseConcurrency), func(sub Subscriber) int { return sub.SubscriberID },
		func(ctx context.Context, page int) ([]Subscriber, error) {
			q := p
			q.StartIndex = page
			return s.Browse(ctx, listID, q)
		}, nil)
}

// failedIter yields err and stops.
func failedIter[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// ImportSubscriber is one row of an import.
type ImportSubscriber struct {
	EmailAddress string // required; a malformed one fails its row before sending
	// Fields holds custom field values by field ID, sent as Subscribers[n][CustomField<id>].
	Fields CustomFields
}

// SubscriberImportResult is the service's count of one import call.
type SubscriberImportResult struct {
	Imported  int // added to the list
	Duplicate int // already in the list, or repeated in the call
	Failed    int // refused
}

// SubscriberImportParams are the parameters of Subscribers.Import.
type SubscriberImportParams struct {
	// Subscribers are the rows to import (at least one).
	Subscribers []ImportSubscriber
}

// Import adds rows to a list in one call, without opt-in emails (subscriber.import). The
// service answers with counts only; ImportAll tells which rows failed.
func (s *SubscribersService) Import(ctx context.Context, listID int, p SubscriberImportParams) (*SubscriberImportResult, error) {
	const command = commands.SubscriberImport
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	return s.importChecked(ctx, listID, p.Subscribers)
}

// validate requires at least one row, each well formed.
func (p SubscriberImportParams) validate(command string) error {
	if len(p.Subscribers) == 0 {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"Subscribers"}, Reason: "no row to import"}
	}
	for i, r := range p.Subscribers {
		if err := checkImportRow(command, i, r); err != nil {
			return err
		}
	}
	return nil
}

// importChecked sends rows already checked, in one call.
func (s *SubscribersService) importChecked(ctx context.Context, listID int, rows []ImportSubscriber) (*SubscriberImportResult, error) {
	var enc importEncoder
	body := enc.start(s.client.appendKeyParam(make([]byte, 0, 96+len(rows)*96)), listID)
	for i, r := range rows {
		body = enc.appendRow(body, i, r)
	}
	res, err := s.sendImport(ctx, body, nil)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// importAttempts is how a subscriber.import call went.
type importAttempts struct {
	// retried reports that an attempt before the answered one may have run: rows it
	// imported are then counted as duplicates.
	retried bool
	// once reports an answer to the first and only attempt: the body is then no longer
	// read by the HTTP transport (an attempt that failed may still be writing it).
	once bool
}

// sendImport sends an encoded subscriber.import body; att, when not nil, receives how the
// attempts went.
func (s *SubscribersService) sendImport(ctx context.Context, body []byte, att *importAttempts) (res SubscriberImportResult, err error) {
	const command = commands.SubscriberImport
	resp, err := s.client.roundTrip(ctx, &apiCall{command: command, body: body})
	if err != nil {
		return res, err
	}
	err = s.client.readAnswer(resp, answer{command: command, red: s.client.transport.Redactor(),
		decode: func(key, v []byte) (err error) {
			switch string(key) {
			case "TotalImported":
				res.Imported, err = wire.Int(v)
			case "TotalDuplicate":
				res.Duplicate, err = wire.Int(v)
			case "TotalFailed":
				res.Failed, err = wire.Int(v)
			}
			return err
		}})
	if att != nil {
		att.retried, att.once = resp.EarlierAttemptMayHaveRun, resp.Attempts == 1
	}
	return res, err
}

func checkImportRow(command string, i int, r ImportSubscriber) error {
	err := checkEmail(command, "EmailAddress", r.EmailAddress)
	if err == nil {
		err = checkFieldIDs(command, "Fields", r.Fields)
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		// Name the row only on failure: ImportAll checks every row.
		for j, f := range ve.Fields {
			ve.Fields[j] = "Subscribers[" + strconv.Itoa(i) + "][" + f + "]"
		}
	}
	return err
}

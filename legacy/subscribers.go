package legacy

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// Status is the Status member of a legacy answer. Values the service sends that are not
// among the constants are kept as they came.
type Status string

// The Status values of the legacy API.
const (
	// StatusWaitingForOptIn means that a double opt-in subscription waits for its
	// confirmation (the v3 API's 'Confirmation Pending').
	StatusWaitingForOptIn Status = "Waiting For Opt-In Confirmation"
	// StatusSubscribed means that the address is subscribed.
	StatusSubscribed Status = "Subscribed"
	// StatusUnsubscribed means that the address was unsubscribed.
	StatusUnsubscribed Status = "Unsubscribed"
	// StatusCompleted means that a media command succeeded.
	StatusCompleted Status = "Completed"
)

// Names of the legacy commands with typed methods, as errors and logs carry them.
const (
	// CommandSubscriberAdd is sent by Client.SubscriberAdd.
	CommandSubscriberAdd = commands.LegacySubscriberAdd
	// CommandSubscriberUnsubscribe is sent by Client.SubscriberUnsubscribe.
	CommandSubscriberUnsubscribe = commands.LegacySubscriberUnsubscribe
	// CommandChartListActivity is sent by Client.ChartListActivity.
	CommandChartListActivity = commands.LegacyChartListActivity
	// CommandMediaUpload is sent by Client.MediaUpload.
	CommandMediaUpload = commands.LegacyMediaUpload
	// CommandMediaBrowse is sent by Client.MediaBrowse.
	CommandMediaBrowse = commands.LegacyMediaBrowse
)

// SubscriberAddParams are the parameters of Subscriber.Add.
type SubscriberAddParams struct {
	// EmailAddress is the address to subscribe, sent as Fields[EmailAddress] (required).
	EmailAddress string
	// SubscriptionIP is the address the subscription came from (required). It is sent as
	// given; only control characters are refused.
	SubscriptionIP string
	// CustomFields holds custom field values by field ID, sent as
	// Fields[CustomField<id>]. The fields must exist in the list beforehand.
	CustomFields map[int]string
}

// SubscriberAddResult is the answer of Subscriber.Add.
type SubscriberAddResult struct {
	// Status is StatusWaitingForOptIn on a double opt-in list, StatusSubscribed otherwise.
	Status Status
	// SubscriberID identifies the subscriber.
	SubscriberID int
	// RedirectURL is the page to send the subscriber to. It is empty when ConfirmedOnRetry:
	// only the lost answer carried it.
	RedirectURL string
	// ConfirmedOnRetry reports that an attempt whose answer was lost (a reset, a timeout, a
	// 502 or 504) subscribed the address: the retry was answered code 6 (already exists) and
	// the v3 subscriber.get showed the address in the list. SubscriberID and Status then come
	// from that read-back.
	ConfirmedOnRetry bool
}

// SubscriberAdd subscribes an address to a list (Subscriber.Add). On a double opt-in list
// the address waits for its confirmation and an opt-in email is sent.
//
// A missing address (4), an address that is no email address (5) and a list ID that
// cannot exist (3) fail before anything is sent. The command is an idempotent write: it is
// retried after transient failures. When a retry after an attempt that may have run is
// answered ErrEmailExists, the address is read back with the v3 subscriber.get on the same
// host: in the list (subscribed or pending), the call succeeds with ConfirmedOnRetry;
// otherwise, or when the read-back fails, the error matches ErrOutcomeUnknown and not
// ErrEmailExists (the answer is in OutcomeUnknownError.Last).
func (c *Client) SubscriberAdd(ctx context.Context, listID int, p SubscriberAddParams) (*SubscriberAddResult, error) {
	const cmd = CommandSubscriberAdd
	if err := checkListID(cmd, listID); err != nil {
		return nil, err
	}
	if err := p.validate(cmd); err != nil {
		return nil, err
	}
	form := url.Values{
		"ListID":               {strconv.Itoa(listID)},
		"Fields[EmailAddress]": {p.EmailAddress},
		"SubscriptionIP":       {p.SubscriptionIP},
	}
	wire.EncodeCustomFields("Fields", p.CustomFields, &form)
	st, err := c.call(ctx, cmd, form)
	if answer, ok := alreadyDone(err, ErrEmailExists); ok {
		res := &SubscriberAddResult{ConfirmedOnRetry: true}
		err = settleRetry(cmd, answer, func() error {
			m, err := c.subscriberStatus(ctx, listID, p.EmailAddress)
			switch {
			case err != nil:
				return err
			case m.Status == "Subscribed":
				res.Status = StatusSubscribed
			case m.Status == "Confirmation Pending":
				res.Status = StatusWaitingForOptIn
			default:
				return fmt.Errorf("the subscriber's status is %q", m.Status)
			}
			res.SubscriberID = m.SubscriberID
			return nil
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	id, err := intMember(cmd, st, "SubscriberID")
	if err != nil {
		return nil, err
	}
	return &SubscriberAddResult{Status: Status(st.Text("Status")), SubscriberID: id, RedirectURL: st.Text("RedirectURL")}, nil
}

// SubscriberUnsubscribeParams are the parameters of Subscriber.Unsubscribe.
type SubscriberUnsubscribeParams struct {
	// EmailAddress is the address to unsubscribe (required).
	EmailAddress string
	// UnsubscriptionIP is the address the request came from (required). It is sent as
	// given; only control characters are refused.
	UnsubscriptionIP string
}

// SubscriberUnsubscribeResult is the answer of Subscriber.Unsubscribe.
type SubscriberUnsubscribeResult struct {
	// Status is StatusUnsubscribed.
	Status Status
	// RedirectURL is the page to send the former subscriber to. It is empty when
	// ConfirmedOnRetry: only the lost answer carried it.
	RedirectURL string
	// ConfirmedOnRetry reports that an attempt whose answer was lost (a reset, a timeout, a
	// 502 or 504) unsubscribed the address: the retry was answered code 8 (not in the list)
	// and the v3 subscriber.get showed the address unsubscribed.
	ConfirmedOnRetry bool
}

// SubscriberUnsubscribe takes an address out of a list (Subscriber.Unsubscribe); the
// list's unsubscription webhook is posted. Validation before sending is as for
// SubscriberAdd. The command is an idempotent write. When a retry after an attempt that may
// have run is answered ErrEmailNotInList, the address is read back with the v3
// subscriber.get: unsubscribed, the call succeeds with Status Unsubscribed, ConfirmedOnRetry
// and no RedirectURL (only the lost answer carried it); otherwise, or when the read-back
// fails, the error matches ErrOutcomeUnknown and not ErrEmailNotInList (the answer is in
// OutcomeUnknownError.Last).
func (c *Client) SubscriberUnsubscribe(ctx context.Context, listID int, p SubscriberUnsubscribeParams) (*SubscriberUnsubscribeResult, error) {
	const cmd = CommandSubscriberUnsubscribe
	if err := checkListID(cmd, listID); err != nil {
		return nil, err
	}
	if err := p.validate(cmd); err != nil {
		return nil, err
	}
	form := url.Values{
		"ListID":           {strconv.Itoa(listID)},
		"EmailAddress":     {p.EmailAddress},
		"UnsubscriptionIP": {p.UnsubscriptionIP},
	}
	st, err := c.call(ctx, cmd, form)
	if answer, ok := alreadyDone(err, ErrEmailNotInList); ok {
		err = settleRetry(cmd, answer, func() error {
			m, err := c.subscriberStatus(ctx, listID, p.EmailAddress)
			if err != nil {
				return err
			}
			if m.Status != "Unsubscribed" {
				return fmt.Errorf("the subscriber's status is %q", m.Status)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return &SubscriberUnsubscribeResult{Status: StatusUnsubscribed, ConfirmedOnRetry: true}, nil
	}
	if err != nil {
		return nil, err
	}
	return &SubscriberUnsubscribeResult{Status: Status(st.Text("Status")), RedirectURL: st.Text("RedirectURL")}, nil
}

// intMember decodes an integer member of an answer; an absent member is 0.
func intMember(cmd string, st Struct, name string) (int, error) {
	v, ok := st.Get(name)
	if !ok {
		return 0, nil
	}
	n, err := v.Int()
	if err != nil || n != int64(int(n)) {
		return 0, fmt.Errorf("sendloop/legacy: %s: member %s (%s %q) is not an integer", cmd, name, v.Kind(), excerpt(v.Text()))
	}
	return int(n), nil
}

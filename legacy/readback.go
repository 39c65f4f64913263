package legacy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/outcome"
	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// alreadyDone reports whether err is an answer with code to a call of which an earlier
// attempt may have run.
func alreadyDone(err error, code ErrorCode) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e) && e.EarlierAttemptMayHaveRun && e.Code == code
	return e, ok
}

// settleRetry decides an "already done" answer with a read-back: prove returns nil when the
// service shows the intended end state. Otherwise an *OutcomeUnknownError that wraps the
// first failure only, with the answer and the read-back's failure in its fields.
func settleRetry(command string, answer *Error, prove func() error) error {
	return outcome.Settle("sendloop/legacy: "+command, answer.earlierFailure, answer, prove)
}

// listMember is what the read-back learns of an address in a list.
type listMember struct {
	SubscriberID int
	Status       string // the v3 SubscriptionStatus: Subscribed, Confirmation Pending, Unsubscribed
}

// subscriberStatus reads an address's record in a list with the v3 command subscriber.get,
// on the same host and key: the legacy API has no read that names a list (its
// Subscriber.Get is not specified). The request is a read, sent as a POST with the key in
// the body.
func (c *Client) subscriberStatus(ctx context.Context, listID int, email string) (_ *listMember, err error) {
	var resp *transport.Response
	defer func() { c.transport.Ended(resp, err) }()
	const command = commands.SubscriberGet
	form := url.Values{"APIKey": {c.key()}, "ListID": {strconv.Itoa(listID)}, "EmailAddress": {email}}
	resp, err = c.transport.Do(ctx, &transport.Request{
		Command:     command,
		Class:       transport.Read,
		Method:      http.MethodPost,
		URL:         c.baseURL + "/api/v3/" + command + "/json",
		Body:        []byte(form.Encode()),
		ContentType: "application/x-www-form-urlencoded",
	})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.httpError(command, resp, "unexpected status")
	}
	var (
		success bool
		code    int
		member  listMember
	)
	err = wire.ScanObject(resp.Body, func(key, v []byte) (err error) {
		switch string(key) {
		case "Success":
			success, err = wire.Bool(v)
		case "ErrorCode":
			code, err = wire.Int(v)
		case "Subscriber":
			err = wire.ScanObject(v, func(key, v []byte) (err error) {
				switch string(key) {
				case "SubscriberID":
					member.SubscriberID, err = wire.Int(v)
				case "SubscriptionStatus":
					member.Status, err = wire.String(v)
				}
				return err
			})
		}
		return err
	})
	switch {
	case err != nil:
		return nil, c.httpError(command, resp, "the answer is not the JSON subscriber.get answers with")
	case !success || code != 0:
		return nil, fmt.Errorf("sendloop/legacy: %s answered error %d", command, code)
	}
	return &member, nil
}

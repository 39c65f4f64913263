package sendloop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/legacy"
)

// SubscriberUnsubscribeParams are the parameters of Subscribers.Unsubscribe.
type SubscriberUnsubscribeParams struct {
	// EmailAddress is the address to take out of the list (required).
	EmailAddress string
	// UnsubscriptionIP is the address the unsubscription came from; the service requires
	// it. It is sent as given, refusing only control characters. A job acting on no
	// person's request (a sync, a clean-up) has no such address: it passes "0.0.0.0", the
	// value the service itself records when none is known, as the sendloop CLI's sync does.
	UnsubscriptionIP string
}

// SubscriberUnsubscribeResult is the service's answer to an unsubscription from one list.
type SubscriberUnsubscribeResult struct {
	// SubscriptionStatus is StatusUnsubscribed.
	SubscriptionStatus SubscriptionStatus
	// RedirectURL is the page to send the former subscriber to. It is empty when
	// ConfirmedOnRetry: only the lost answer carried it.
	RedirectURL string
	// ConfirmedOnRetry reports that an attempt whose answer was lost (a reset, a timeout, a
	// 502 or 504) unsubscribed the address: the retry was answered "not in the list" and
	// subscriber.get showed the address unsubscribed.
	ConfirmedOnRetry bool
}

// validate refuses what the service would: the address and a missing UnsubscriptionIP.
func (p SubscriberUnsubscribeParams) validate(command string) error {
	if err := checkEmail(command, "EmailAddress", p.EmailAddress); err != nil {
		return err
	}
	if strings.TrimSpace(p.UnsubscriptionIP) == "" {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"UnsubscriptionIP"}, Reason: "UnsubscriptionIP is empty"}
	}
	if hasControl(p.UnsubscriptionIP) {
		return invalid(command, ErrInvalidParameterValue, "UnsubscriptionIP", "UnsubscriptionIP holds control characters")
	}
	return nil
}

// ErrNotInList is matched (errors.Is) by the error of Subscribers.Unsubscribe when the list
// does not hold the address. The service answers so with the legacy API's code 8, and the
// error is that answer (a *legacy.Error, matching legacy.ErrEmailNotInList as well): only
// its matching ErrNotInList is added.
var ErrNotInList = errors.New("sendloop: the address is not in the list")

// notInListError is the legacy answer "not in the list", matching ErrNotInList too.
type notInListError struct{ err error }

func (e *notInListError) Error() string        { return e.err.Error() }
func (e *notInListError) Unwrap() error        { return e.err }
func (e *notInListError) Is(target error) bool { return target == ErrNotInList }

// Unsubscribe takes an address out of one list. The v3 API has no command for that (its
// subscriber.unsubscribe names no list: see UnsubscribeFromAllLists), so Unsubscribe sends
// the legacy API's Subscriber.Unsubscribe through the client's Legacy client: same key,
// host, HTTP client, retries, rate limiter and logger. The list's unsubscription webhook is
// posted.
//
// The list ID, the address and UnsubscriptionIP are checked before sending, with a
// *ValidationError of this package. An address the list does not hold fails with an error
// matching ErrNotInList. The service's other answers are the legacy API's: a *legacy.Error
// with a legacy code, and ErrOutcomeUnknown, which both packages share. The command is an
// idempotent write: when a retry after an attempt that may have run is answered "not in
// the list", the address is read back with subscriber.get: unsubscribed, the call succeeds
// with ConfirmedOnRetry; otherwise, or when the read-back fails, the error matches
// ErrOutcomeUnknown and not ErrNotInList (the answer is in OutcomeUnknownError.Last).
func (s *SubscribersService) Unsubscribe(ctx context.Context, listID int, p SubscriberUnsubscribeParams) (*SubscriberUnsubscribeResult, error) {
	const command = legacy.CommandSubscriberUnsubscribe
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	if err := p.validate(command); err != nil {
		return nil, err
	}
	res, err := s.client.legacy.SubscriberUnsubscribe(ctx, listID, legacy.SubscriberUnsubscribeParams{
		EmailAddress: p.EmailAddress, UnsubscriptionIP: p.UnsubscriptionIP,
	})
	if errors.Is(err, legacy.ErrEmailNotInList) {
		return nil, &notInListError{err}
	}
	if err != nil {
		return nil, err
	}
	return &SubscriberUnsubscribeResult{
		SubscriptionStatus: SubscriptionStatus(res.Status),
		RedirectURL:        res.RedirectURL,
		ConfirmedOnRetry:   res.ConfirmedOnRetry,
	}, nil
}

// UnsubscribeFromAllLists takes the address out of every list that holds it
// (subscriber.unsubscribe, which names no list); Unsubscribe leaves one list only. The
// lists' unsubscription webhooks are posted. When a retry after an attempt that may have
// run is answered "not subscribed" (ErrSubscriberNotFound or ErrNotFound),
// UnsubscribeFromAllLists checks with subscriber.search that the address is subscribed or
// pending in no list: then it succeeds; otherwise, or when the search fails, the error
// matches ErrOutcomeUnknown and not the answer (which is in OutcomeUnknownError.Last).
func (s *SubscribersService) UnsubscribeFromAllLists(ctx context.Context, email string) error {
	const command = commands.SubscriberUnsubscribe
	if err := checkEmail(command, "EmailAddress", email); err != nil {
		return err
	}
	err := s.client.do(ctx, &apiCall{command: command, form: url.Values{"EmailAddress": {email}}}, nil)
	if answer, ok := alreadyDone(err, ErrSubscriberNotFound, ErrNotFound); ok {
		err = settleRetry(command, answer, func() error {
			results, err := s.Search(ctx, email)
			if err != nil {
				return err
			}
			for _, r := range results {
				for _, hit := range r.Subscribers {
					if strings.EqualFold(hit.EmailAddress, email) && hit.SubscriptionStatus.isMember() {
						return fmt.Errorf("the address is still %q in list %d", hit.SubscriptionStatus, r.ListID)
					}
				}
			}
			return nil
		})
	}
	return err
}

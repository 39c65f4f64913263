package sendlooptest

import "time"

// state is the account's data. Every field is guarded by Server.mu; each command file adds
// its own part.
type state struct {
	account          account
	lists            lists
	nextSubscriberID int
	suppressions     suppressions
	outbox           []Email
	pendingHooks     []webhookJob // posted once the request's lock is released
}

func newState(now time.Time) *state {
	return &state{account: newAccount(now)}
}

// Wire forms of dates, and the service's unset values.
const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02 15:04:05"
	zeroDate       = "0000-00-00"
	zeroDateTime   = "0000-00-00 00:00:00"
)

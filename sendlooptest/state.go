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
	dayCache         dayCache
	media            mediaLibrary                 // the legacy API's media library (legacy.go)
	campaigns        campaigns                    // campaigns.go
	activity         []*activity                  // what recipients did with delivered campaigns (reports.go)
	people           people                       // tracked persons (person.go)
	memberStates     map[memberState]*memberState // the shared parts of subscriber records (members.go)
	lastState        *memberState                 // the one interned last
	slab             []subscriber                 // where new subscriber records are made
	importSeen       map[string]bool              // subscriber.import's scratch (subscribers.go)
	importBuf        []byte
}

// day returns now's date in wire form, formatting it once per day: imports stamp
// thousands of rows with it.
func (st *state) day(now time.Time) string {
	if y, m, d := now.Date(); y != st.dayCache.y || m != st.dayCache.m || d != st.dayCache.d || st.dayCache.text == "" {
		st.dayCache = dayCache{y, m, d, now.Format(dateLayout)}
	}
	return st.dayCache.text
}

type dayCache struct {
	y    int
	m    time.Month
	d    int
	text string
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

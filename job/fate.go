package job

// Fate is what became of one row of a job. The zero Fate is invalid: every row a job
// reports has one of the fates below.
type Fate uint8

// The fates of a row.
const (
	// Done: the row's work was done (a message sent, a change made, or nothing to change).
	Done Fate = iota + 1
	// Skipped: the row needed no work, or was left on purpose (an earlier run did it, a
	// filter, a shard); the row's report says why.
	Skipped
	// Rejected: the row was refused before anything was sent for it (no address, an
	// invalid value, a duplicate); the row's report says why.
	Rejected
	// Refused: the service or the relay refused the row's work for good.
	Refused
	// Unknown: the work may or may not have been done (the connection broke after the
	// request was sent). A job never does it again by itself.
	Unknown
	// Deferred: the service kept answering "later"; a rerun tries again.
	Deferred
	// NotAttempted: the run stopped before the row; a rerun does it.
	NotAttempted
	// Suppressed: the address is on a suppression list, so nothing is sent to it.
	Suppressed
	// NotSubscribed: the address is not a subscribed member of the list a send names
	// (not in the list, unsubscribed, bounced or unconfirmed), so nothing is sent to it.
	NotSubscribed

	fateEnd // one past the last fate
)

// Fates lists every fate in order, for reports that show a count per fate.
func Fates() []Fate {
	fates := make([]Fate, 0, fateEnd-1)
	for f := Done; f < fateEnd; f++ {
		fates = append(fates, f)
	}
	return fates
}

var fateNames = [fateEnd]string{
	Done: "done", Skipped: "skipped", Rejected: "rejected", Refused: "refused",
	Unknown: "unknown", Deferred: "deferred", NotAttempted: "not attempted",
	Suppressed: "suppressed", NotSubscribed: "not subscribed",
}

// Valid reports whether f is one of the fates above.
func (f Fate) Valid() bool { return f >= Done && f < fateEnd }

// String returns the fate's name ("done", "skipped", "rejected", "refused", "unknown",
// "deferred", "not attempted", "suppressed", "not subscribed"), or "invalid fate".
func (f Fate) String() string {
	if !f.Valid() {
		return "invalid fate"
	}
	return fateNames[f]
}

// Settled reports whether a rerun leaves the row as it is: done, skipped, rejected,
// refused, suppressed and not subscribed rows are settled; unknown, deferred and not
// attempted rows are not (unknown ones wait for a decision).
func (f Fate) Settled() bool {
	switch f {
	case Unknown, Deferred, NotAttempted:
		return false
	}
	return f.Valid()
}

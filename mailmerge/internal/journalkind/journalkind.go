// Package journalkind holds the kinds of record a send's journal writes (in flight, sent,
// refused, unknown, deferred, and the rows decided without sending), their names in the
// file and in the database, and the one mapping from a kind to the row's job.Fate. The kinds
// are the stores' own: what a program sees of a record is its fate.
package journalkind

import "github.com/go-sendloop/sendloop/job"

// Kind is what a journal record says of a key. Its values fit in 3 bits (the file
// journal's index keeps a key's kind beside its offset): at most 7 kinds.
type Kind uint8

// The kinds of record: InFlight when a message's final dot is about to go out, then one
// of the outcomes; Suppressed and NotSubscribed for a row decided without sending.
const (
	// InFlight is written, durably, before the final dot: a key whose last record it is
	// (the process died) is unknown.
	InFlight Kind = iota + 1
	// Sent: the server accepted the message.
	Sent
	// Refused: the server refused the message for good.
	Refused
	// Unknown: the connection was lost after the final dot, before the reply.
	Unknown
	// Deferred: a 4xx reply to the final dot; nothing was delivered.
	Deferred
	// Suppressed: the address is on a suppression list; nothing was sent (a kind 0.4.0
	// never wrote).
	Suppressed
	// NotSubscribed: the address is not a subscribed member of the list; nothing was sent
	// (a kind 0.4.0 never wrote).
	NotSubscribed

	end
)

// names are the kinds as the file and the database write them; the first five are
// sendloop 0.4.0's.
var names = [end]string{
	InFlight: "in_flight", Sent: "sent", Refused: "refused", Unknown: "unknown", Deferred: "deferred",
	Suppressed: "suppressed", NotSubscribed: "not_subscribed",
}

// String returns the kind's name in a journal: in_flight, sent, refused, unknown,
// deferred, suppressed or not_subscribed ("" for an invalid kind).
func (k Kind) String() string {
	if k < 1 || k >= end {
		return ""
	}
	return names[k]
}

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool { return k >= 1 && k < end }

// Parse returns the kind of a name String returns.
func Parse(name string) (Kind, bool) {
	for k := InFlight; k < end; k++ {
		if names[k] == name {
			return k, true
		}
	}
	return 0, false
}

// Fate is the one mapping from a record to what became of its row: a message in flight
// when its run ended reads as unknown, never as free to send.
func (k Kind) Fate() job.Fate {
	switch k {
	case Sent:
		return job.Done
	case Refused:
		return job.Refused
	case Deferred:
		return job.Deferred
	case Suppressed:
		return job.Suppressed
	case NotSubscribed:
		return job.NotSubscribed
	}
	return job.Unknown // InFlight, Unknown, and anything a later release may add
}

// Outcome returns the kind that records an outcome fate (Done, Refused, Unknown,
// Deferred), or a row decided without sending (Suppressed, NotSubscribed).
func Outcome(f job.Fate) (Kind, bool) {
	switch f {
	case job.Done:
		return Sent, true
	case job.Refused:
		return Refused, true
	case job.Unknown:
		return Unknown, true
	case job.Deferred:
		return Deferred, true
	case job.Suppressed:
		return Suppressed, true
	case job.NotSubscribed:
		return NotSubscribed, true
	}
	return 0, false
}

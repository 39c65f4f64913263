package job

import "fmt"

// Tally counts the rows of one kind of work by fate. Its counts add up to the rows of that
// kind the job was given: Total is that sum.
type Tally struct {
	Done          int // rows of fate Done
	Skipped       int // rows of fate Skipped
	Rejected      int // rows of fate Rejected
	Refused       int // rows of fate Refused
	Unknown       int // rows of fate Unknown
	Deferred      int // rows of fate Deferred
	NotAttempted  int // rows of fate NotAttempted
	Suppressed    int // rows of fate Suppressed
	NotSubscribed int // rows of fate NotSubscribed
}

// Add counts n more rows of fate f. It panics on an invalid fate, which is a bug of the
// job that reports it.
func (t *Tally) Add(f Fate, n int) { *t.slot(f) += n }

// Of returns the count of fate f (0 for an invalid fate).
func (t Tally) Of(f Fate) int {
	if !f.Valid() {
		return 0
	}
	return *t.slot(f)
}

// Total returns the sum of every count.
func (t Tally) Total() int {
	n := 0
	for _, f := range Fates() {
		n += t.Of(f)
	}
	return n
}

// Plus returns the sum of t and u, fate by fate.
func (t Tally) Plus(u Tally) Tally {
	for _, f := range Fates() {
		t.Add(f, u.Of(f))
	}
	return t
}

func (t *Tally) slot(f Fate) *int {
	switch f {
	case Done:
		return &t.Done
	case Skipped:
		return &t.Skipped
	case Rejected:
		return &t.Rejected
	case Refused:
		return &t.Refused
	case Unknown:
		return &t.Unknown
	case Deferred:
		return &t.Deferred
	case NotAttempted:
		return &t.NotAttempted
	case Suppressed:
		return &t.Suppressed
	case NotSubscribed:
		return &t.NotSubscribed
	}
	panic(fmt.Sprintf("job: no tally for %v", f))
}

// Progress is what a job's OnProgress hook receives: the kind of work under way, how many
// of its rows are handled and how many it has, and their fates so far.
type Progress struct {
	// Kind names the work under way, in the job's words: "plan", "add", "update",
	// "unsubscribe", "send".
	Kind string
	// Done is how many of the kind's rows are handled (Tally.Total()); Total how many it
	// has, or -1 when not known yet.
	Done, Total int
	// Tally counts the kind's handled rows by fate.
	Tally Tally
}

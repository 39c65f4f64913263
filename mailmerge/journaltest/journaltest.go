// Package journaltest is the conformance suite of a send's journal store
// (mailmerge.JournalStore): what a rerun finds after each kind of record, durability across
// a reopen, rows decided without sending, concurrent use and, for a store that several runs
// share, claims. The file journal and package mailmerge/pgjournal's PostgreSQL journal both
// pass it; a store of another kind runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		journaltest.Run(t, journaltest.Store{Open: ..., Close: ...})
//	}
package journaltest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
)

// Store opens the journals of one kind of store for the suite.
type Store struct {
	// Open opens the journal name, bound to binding, as a run does: a second Open of a name
	// is another run on the same journal (a rerun, or a run beside a live one). Each
	// subtest uses names of its own. resendUnknown is the run's option of that name, for a
	// store whose claims depend on it.
	Open func(t *testing.T, name string, binding mailmerge.JournalBinding, resendUnknown bool) mailmerge.JournalStore
	// Close ends a run: its records stay, and its claims still in flight read as unknown.
	Close func(t *testing.T, j mailmerge.JournalStore)
	// Shared reports a store that two live runs may hold at once: the suite then checks
	// that a key claimed by one is refused to the other.
	Shared bool
}

// Binding is the binding the suite opens journals with.
var Binding = mailmerge.JournalBinding{Fingerprint: "sha256:journaltest-template"}

// Run runs the suite against s, one subtest per rule.
func Run(t *testing.T, s Store) {
	t.Helper()
	t.Run("records survive a rerun", func(t *testing.T) { t.Parallel(); testRecords(t, s) })
	t.Run("decided rows", func(t *testing.T) { t.Parallel(); testDecided(t, s) })
	t.Run("refuses what is no record", func(t *testing.T) { t.Parallel(); testRefuses(t, s) })
	t.Run("concurrent use", func(t *testing.T) { t.Parallel(); testConcurrent(t, s) })
	if s.Shared {
		t.Run("claims across live runs", func(t *testing.T) { t.Parallel(); testClaims(t, s) })
	}
}

// step is a record a run writes: a claim (Fate 0), an outcome, or a decision.
type step struct {
	key, id, reply string
	fate           job.Fate
	decided        bool
}

func (st step) write(t *testing.T, j mailmerge.JournalStore) {
	t.Helper()
	var err error
	switch {
	case st.decided:
		err = j.Decide(st.key, st.fate, st.reply)
	case st.fate == 0:
		err = j.Claim(st.key, st.id)
	default:
		err = j.Record(mailmerge.JournalRecord{Key: st.key, Fate: st.fate, MessageID: st.id, Reply: st.reply})
	}
	if err != nil {
		t.Fatalf("%s: %v", st.key, err)
	}
}

// want is what a rerun's Lookup must find.
type want struct {
	key   string
	fate  job.Fate
	reply string
	id    bool // a Message-ID is kept
}

func check(t *testing.T, j mailmerge.JournalStore, wants []want) {
	t.Helper()
	for _, w := range wants {
		rec, ok := j.Lookup(w.key)
		switch {
		case !ok:
			t.Errorf("Lookup(%s): no record, want %v", w.key, w.fate)
		case rec.Key != w.key || rec.Fate != w.fate || rec.Reply != w.reply || (rec.MessageID != "") != w.id:
			t.Errorf("Lookup(%s) = %+v, want fate %v, reply %q, Message-ID %v", w.key, rec, w.fate, w.reply, w.id)
		}
	}
}

func testRecords(t *testing.T, s Store) {
	const name = "records"
	j := s.Open(t, name, Binding, false)
	if got := j.Binding().Fingerprint; got != Binding.Fingerprint {
		t.Errorf("Binding().Fingerprint = %q, want %q", got, Binding.Fingerprint)
	}
	for _, st := range []step{
		{key: "ann@example.com", id: "<1@x>"},
		{key: "ann@example.com", id: "<1@x>", fate: job.Done, reply: "250 2.0.0 queued"},
		{key: "bob@example.com", id: "<2@x>"}, // in flight when the run dies
		{key: "cy@example.com", id: "<3@x>"},
		{key: "cy@example.com", id: "<3@x>", fate: job.Refused, reply: "550 5.1.1 no such user"},
		{key: "dee@example.com", id: "<4@x>"},
		{key: "dee@example.com", id: "<4@x>", fate: job.Deferred, reply: "451 4.3.0 later"},
		{key: "eve@example.com", id: "<5@x>"},
		{key: "eve@example.com", id: "<5@x>", fate: job.Unknown},
	} {
		st.write(t, j)
	}
	wants := []want{
		{"ann@example.com", job.Done, "250 2.0.0 queued", true},
		{"bob@example.com", job.Unknown, "", true},
		{"cy@example.com", job.Refused, "550 5.1.1 no such user", true},
		{"dee@example.com", job.Deferred, "451 4.3.0 later", true},
		{"eve@example.com", job.Unknown, "", true},
	}
	check(t, j, wants) // the run itself reads what it wrote
	s.Close(t, j)

	again := s.Open(t, name, Binding, false) // a rerun
	defer s.Close(t, again)
	check(t, again, wants)
	if rec, ok := again.Lookup("zed@example.com"); ok {
		t.Errorf("Lookup of a key never written = %+v", rec)
	}
	// A deferred key may be claimed again: nothing was delivered.
	if err := again.Claim("dee@example.com", "<6@x>"); err != nil {
		t.Errorf("claiming a deferred key again: %v", err)
	}
}

func testDecided(t *testing.T, s Store) {
	const name = "decided"
	j := s.Open(t, name, Binding, false)
	step{key: "sup@example.com", fate: job.Suppressed, reply: "on the global suppression list", decided: true}.write(t, j)
	step{key: "uns@example.com", fate: job.NotSubscribed, reply: "unsubscribed from list 7", decided: true}.write(t, j)
	wants := []want{
		{"sup@example.com", job.Suppressed, "on the global suppression list", false},
		{"uns@example.com", job.NotSubscribed, "unsubscribed from list 7", false},
	}
	check(t, j, wants)
	s.Close(t, j)
	again := s.Open(t, name, Binding, false)
	defer s.Close(t, again)
	check(t, again, wants)
}

func testRefuses(t *testing.T, s Store) {
	j := s.Open(t, "refuses", Binding, false)
	defer s.Close(t, j)
	for _, f := range []job.Fate{job.Skipped, job.Rejected, job.NotAttempted, job.Suppressed, job.NotSubscribed, 0} {
		if err := j.Record(mailmerge.JournalRecord{Key: "ann@example.com", Fate: f}); err == nil {
			t.Errorf("Record with fate %v: no error, want one (not the outcome of a message)", f)
		}
	}
	for _, f := range []job.Fate{job.Done, job.Refused, job.Unknown, job.Deferred, job.Skipped, 0} {
		if err := j.Decide("ann@example.com", f, "why"); err == nil {
			t.Errorf("Decide with fate %v: no error, want one (not a fate decided without sending)", f)
		}
	}
	if rec, ok := j.Lookup("ann@example.com"); ok {
		t.Errorf("a refused record was kept: %+v", rec)
	}
}

func testConcurrent(t *testing.T, s Store) {
	const name, goroutines, keys = "concurrent", 8, 25
	j := s.Open(t, name, Binding, false)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*keys)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				key := fmt.Sprintf("u%d-%d@example.net", g, i)
				if err := j.Claim(key, "<"+key+">"); err != nil {
					errs <- err
					continue
				}
				j.Lookup(key)
				if err := j.Record(mailmerge.JournalRecord{Key: key, Fate: job.Done, MessageID: "<" + key + ">", Reply: "250 ok"}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.Close(t, j)
	again := s.Open(t, name, Binding, false)
	defer s.Close(t, again)
	for g := range goroutines {
		for i := range keys {
			key := fmt.Sprintf("u%d-%d@example.net", g, i)
			if rec, ok := again.Lookup(key); !ok || rec.Fate != job.Done {
				t.Errorf("%s after the rerun: %+v %v, want done", key, rec, ok)
			}
		}
	}
}

func testClaims(t *testing.T, s Store) {
	const name, key = "claims", "ann@example.com"
	a := s.Open(t, name, Binding, false)
	b := s.Open(t, name, Binding, true) // even resending unknown keys
	defer s.Close(t, b)
	if err := a.Claim(key, "<a@x>"); err != nil {
		t.Fatal(err)
	}
	err := b.Claim(key, "<b@x>")
	var claimed *mailmerge.ClaimedError
	switch {
	case !errors.Is(err, mailmerge.ErrKeyClaimed):
		t.Fatalf("a second live run claims a key the first holds: %v, want ErrKeyClaimed", err)
	case !errors.As(err, &claimed):
		t.Errorf("the refusal %v is not a *mailmerge.ClaimedError", err)
	case claimed.Record.Key != key || claimed.Record.Fate != job.Unknown:
		t.Errorf("the refusal carries %+v, want the key in flight (unknown)", claimed.Record)
	}
	// The first run dies: its claim is never free to a plain rerun.
	s.Close(t, a)
	plain := s.Open(t, name, Binding, false)
	defer s.Close(t, plain)
	if rec, ok := plain.Lookup(key); !ok || rec.Fate != job.Unknown {
		t.Errorf("a dead run's claim reads %+v %v, want unknown", rec, ok)
	}
	if err := plain.Claim(key, "<c@x>"); !errors.Is(err, mailmerge.ErrKeyClaimed) {
		t.Errorf("a plain rerun claims a dead run's key: %v, want ErrKeyClaimed", err)
	}
	// A key another run has sent is never claimed again.
	if err := b.Claim("bob@example.com", "<d@x>"); err != nil {
		t.Fatal(err)
	}
	if err := b.Record(mailmerge.JournalRecord{Key: "bob@example.com", Fate: job.Done, MessageID: "<d@x>", Reply: "250 ok"}); err != nil {
		t.Fatal(err)
	}
	if err := plain.Claim("bob@example.com", "<e@x>"); !errors.Is(err, mailmerge.ErrKeyClaimed) {
		t.Errorf("claiming a key another run sent: %v, want ErrKeyClaimed", err)
	}
}

package smtp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// watchJournal checks, at each record, what the fake relay holds, and can
// fail the in-flight record of one key.
type watchJournal struct {
	smtp.Journal
	fake    *sendlooptest.Relay
	failKey string
	mu      sync.Mutex
	errs    []string
}

func (w *watchJournal) Append(rec smtp.JournalRecord) error {
	has := delivered(w.fake)[rec.Key] > 0
	w.mu.Lock()
	switch {
	case rec.State == smtp.JournalInFlight && has:
		w.errs = append(w.errs, rec.Key+": in flight after the relay got the message")
	case rec.State == smtp.JournalSent && !has:
		w.errs = append(w.errs, rec.Key+": sent before the relay got the message")
	}
	w.mu.Unlock()
	if rec.State == smtp.JournalInFlight && rec.Key == w.failKey {
		return errors.New("no space left on device")
	}
	return w.Journal.Append(rec)
}

func TestSendKeyedJournalsInFlightBeforeTheFinalDot(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	w := &watchJournal{Journal: openJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding), fake: fake}
	keys := []string{"ann@example.net", "bob@example.net", "cat@example.net", "dan@example.net"}
	for key, res := range sendKeyed(t, client, keyed(keys...), smtp.SendKeyedOptions{Journal: w}) {
		if res.State != smtp.KeySent {
			t.Errorf("%s: %v (%v)", key, res.State, res.Err)
		}
	}
	for _, e := range w.errs {
		t.Error(e)
	}
}

// TestSendKeyedJournalFailureStopsTheRun fails the in-flight record of one
// key: its final dot never goes out, the relay keeps nothing of it, and the
// run stops.
func TestSendKeyedJournalFailureStopsTheRun(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	const bad = "bob@example.net"
	w := &watchJournal{Journal: openJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding), fake: fake, failKey: bad}
	keys := []string{"ann@example.net", bad, "cat@example.net", "dan@example.net"}
	got := sendKeyed(t, client, keyed(keys...), smtp.SendKeyedOptions{Journal: w})
	if res := got[bad]; res.State != smtp.KeyNotAttempted || !errors.Is(res.Err, smtp.ErrJournalFailed) || !errors.Is(res.Err, smtp.ErrRunStopped) {
		t.Errorf("%s: %v (%v), want not attempted, journal failed", bad, res.State, res.Err)
	}
	// Once the client's connections are closed and the relay has ended their sessions, a
	// message it (wrongly) accepted would be there.
	client.Close()
	if !testkit.Eventually(func() bool { return fake.OpenConnections() == 0 }, time.Minute) {
		t.Fatalf("%d relay sessions still open a minute after the client closed", fake.OpenConnections())
	}
	n := delivered(fake)
	if n[bad] != 0 {
		t.Errorf("%s was delivered without its in-flight record", bad)
	}
	for _, key := range keys {
		res := got[key]
		switch {
		case res.State == smtp.KeySent && n[key] == 1:
		case res.State == smtp.KeyNotAttempted && errors.Is(res.Err, smtp.ErrRunStopped) && n[key] == 0:
		default:
			t.Errorf("%s: %v (%v), delivered %d times", key, res.State, res.Err, n[key])
		}
	}
}

// TestSendKeyedConcurrentJournal sends many keys over four connections:
// each is delivered once, and its journal lines are in flight, then sent.
func TestSendKeyedConcurrentJournal(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(4))
	path := filepath.Join(t.TempDir(), "journal")
	j := openJournal(t, path, testBinding)
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("user%d@example.net", i))
	}
	for key, res := range sendKeyed(t, client, keyed(keys...), smtp.SendKeyedOptions{Journal: j}) {
		if res.State != smtp.KeySent {
			t.Errorf("%s: %v (%v)", key, res.State, res.Err)
		}
	}
	j.Close()
	for key, n := range delivered(fake) {
		if n != 1 {
			t.Errorf("%s delivered %d times", key, n)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states := make(map[string]string)
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		line := sc.Text()
		key := line[strings.Index(line, `"k":"`)+5:]
		key = key[:strings.IndexByte(key, '"')]
		switch {
		case strings.Contains(line, `"s":"in_flight"`):
			states[key] += "f"
		case strings.Contains(line, `"s":"sent"`):
			states[key] += "s"
		default:
			t.Errorf("unexpected record %s", line)
		}
	}
	for _, key := range keys {
		if states[key] != "fs" {
			t.Errorf("%s: records %q, want in flight then sent", key, states[key])
		}
	}
}

func TestWithRate(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithRate(40, 1))
	start := time.Now()
	got := sendKeyed(t, client, keyed("a@example.net", "b@example.net", "c@example.net", "d@example.net", "e@example.net"), smtp.SendKeyedOptions{})
	if elapsed := time.Since(start); elapsed < 95*time.Millisecond {
		t.Errorf("5 messages at 40/s with a burst of 1 took %v, want at least 100ms", elapsed)
	}
	for key, res := range got {
		if res.State != smtp.KeySent {
			t.Errorf("%s: %v", key, res.State)
		}
	}
	for _, bad := range []smtp.Option{smtp.WithRate(-1, 1), smtp.WithRate(float64(0)/zero(), 1)} {
		if _, err := smtp.NewRelay("127.0.0.1:25", smtp.Auth{Username: "u", Password: "p"}, bad); err == nil {
			t.Error("an invalid rate was accepted")
		}
	}
}

func zero() float64 { return 0 }

// TestSendKeyedCancel ends the context after the first result: every key is
// still yielded, none is left in flight in the journal, and the rerun sends
// exactly the keys not sent.
func TestSendKeyedCancel(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	path := filepath.Join(t.TempDir(), "journal")
	var keys []string
	for i := range 40 {
		keys = append(keys, fmt.Sprintf("user%d@example.net", i))
	}
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	j := openJournal(t, path, testBinding)
	seq, err := client.SendKeyed(ctx, keyed(keys...), smtp.SendKeyedOptions{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for res := range seq {
		n++
		cancel()
		switch res.State {
		case smtp.KeySent, smtp.KeyDeferred, smtp.KeyUnknown:
		case smtp.KeyNotAttempted:
			if !errors.Is(res.Err, smtp.ErrNotAttempted) || !errors.Is(res.Err, context.Canceled) {
				t.Errorf("%s: %v", res.Key, res.Err)
			}
		default:
			t.Errorf("%s: %v (%v)", res.Key, res.State, res.Err)
		}
	}
	if n != len(keys) {
		t.Fatalf("%d results for %d keys", n, len(keys))
	}
	for rec := range j.All() {
		if rec.State == smtp.JournalInFlight {
			t.Errorf("%s left in flight by a cancelled run", rec.Key)
		}
	}
	j.Close()
	j = openJournal(t, path, testBinding)
	sendKeyed(t, client, keyed(keys...), smtp.SendKeyedOptions{Journal: j})
	got := delivered(fake)
	for _, key := range keys {
		if rec, _ := j.Lookup(key); got[key] != 1 && !(rec.State == smtp.JournalUnknown && got[key] == 0) {
			t.Errorf("%s delivered %d times (journal %v)", key, got[key], rec.State)
		}
	}
}

// TestSendKeyedSomeRecipientsRefused: a message to two recipients, one
// refused, is sent; refused only when both are.
func TestSendKeyedSomeRecipientsRefused(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	for _, f := range []string{"b@example.net", "c@example.net", "d@example.net"} {
		fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: f, Code: 550})
	}
	msgs := func(yield func(string, *smtp.Message) bool) {
		for _, to := range [][]string{{"a@example.net", "b@example.net"}, {"c@example.net", "d@example.net"}} {
			m := template
			m.To = to
			if !yield("row-"+to[0], &m) {
				return
			}
		}
	}
	j := openJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding)
	got := sendKeyed(t, client, msgs, smtp.SendKeyedOptions{Journal: j})
	if res := got["row-a@example.net"]; res.State != smtp.KeySent || !errors.Is(res.Err, smtp.ErrSomeRecipientsRefused) {
		t.Errorf("one of two refused: %v (%v), want sent", res.State, res.Err)
	}
	if res := got["row-c@example.net"]; res.State != smtp.KeyRefused {
		t.Errorf("both refused: %v (%v), want refused", res.State, res.Err)
	}
	if rec, _ := j.Lookup("row-c@example.net"); rec.State != smtp.JournalRefused || !strings.HasPrefix(rec.Reply, "550 ") {
		t.Errorf("journal: %+v", rec)
	}
}

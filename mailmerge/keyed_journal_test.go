package mailmerge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
	"github.com/stretchr/testify/require"
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
	JournalStore
	fake    *sendlooptest.Relay
	failKey string
	mu      sync.Mutex
	errs    []string
}

func (w *watchJournal) Claim(key, messageID string) error {
	has := delivered(w.fake)[key] > 0
	w.mu.Lock()
	if has {
		w.errs = append(w.errs, key+": in flight after the relay got the message")
	}
	w.mu.Unlock()
	if key == w.failKey {
		return errors.New("no space left on device")
	}
	return w.JournalStore.Claim(key, messageID)
}

func (w *watchJournal) Record(rec JournalRecord) error {
	has := delivered(w.fake)[rec.Key] > 0
	w.mu.Lock()
	if rec.Fate == job.Done && !has {
		w.errs = append(w.errs, rec.Key+": sent before the relay got the message")
	}
	w.mu.Unlock()
	return w.JournalStore.Record(rec)
}

func TestSendKeyedJournalsInFlightBeforeTheFinalDot(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	w := &watchJournal{JournalStore: mustOpenJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding), fake: fake}
	keys := []string{"ann@example.net", "bob@example.net", "cat@example.net", "dan@example.net"}
	for key, res := range sendAllKeyed(t, client, keyed(keys...), keyedOptions{journal: w}) {
		if res.Fate != job.Done {
			t.Errorf("%s: %v (%v)", key, res.Fate, res.Err)
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
	w := &watchJournal{JournalStore: mustOpenJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding), fake: fake, failKey: bad}
	keys := []string{"ann@example.net", bad, "cat@example.net", "dan@example.net"}
	got := sendAllKeyed(t, client, keyed(keys...), keyedOptions{journal: w})
	if res := got[bad]; res.Fate != job.NotAttempted || !errors.Is(res.Err, errJournalFailed) || !errors.Is(res.Err, smtp.ErrRunStopped) {
		t.Errorf("%s: %v (%v), want not attempted, journal failed", bad, res.Fate, res.Err)
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
		case res.Fate == job.Done && n[key] == 1:
		case res.Fate == job.NotAttempted && errors.Is(res.Err, smtp.ErrRunStopped) && n[key] == 0:
		default:
			t.Errorf("%s: %v (%v), delivered %d times", key, res.Fate, res.Err, n[key])
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
	j := mustOpenJournal(t, path, testBinding)
	var keys []string
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("user%d@example.net", i))
	}
	for key, res := range sendAllKeyed(t, client, keyed(keys...), keyedOptions{journal: j}) {
		if res.Fate != job.Done {
			t.Errorf("%s: %v (%v)", key, res.Fate, res.Err)
		}
	}
	j.Close()
	for key, n := range delivered(fake) {
		if n != 1 {
			t.Errorf("%s delivered %d times", key, n)
		}
	}
	f, err := os.Open(path)
	require.NoError(t, err)
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
	got := sendAllKeyed(t, client, keyed("a@example.net", "b@example.net", "c@example.net", "d@example.net", "e@example.net"), keyedOptions{})
	if elapsed := time.Since(start); elapsed < 95*time.Millisecond {
		t.Errorf("5 messages at 40/s with a burst of 1 took %v, want at least 100ms", elapsed)
	}
	for key, res := range got {
		if res.Fate != job.Done {
			t.Errorf("%s: %v", key, res.Fate)
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
	j := mustOpenJournal(t, path, testBinding)
	seq, err := sendKeyed(ctx, client, keyed(keys...), keyedOptions{journal: j})
	require.NoError(t, err)
	n := 0
	for res := range seq {
		n++
		cancel()
		switch res.Fate {
		case job.Done, job.Deferred, job.Unknown:
		case job.NotAttempted:
			if !errors.Is(res.Err, smtp.ErrNotAttempted) || !errors.Is(res.Err, context.Canceled) {
				t.Errorf("%s: %v", res.Key, res.Err)
			}
		default:
			t.Errorf("%s: %v (%v)", res.Key, res.Fate, res.Err)
		}
	}
	if n != len(keys) {
		t.Fatalf("%d results for %d keys", n, len(keys))
	}
	for rec := range j.All() {
		if r, _ := j.lookup(rec.Key); r.Kind == journalkind.InFlight {
			t.Errorf("%s left in flight by a cancelled run", rec.Key)
		}
	}
	j.Close()
	j = mustOpenJournal(t, path, testBinding)
	sendAllKeyed(t, client, keyed(keys...), keyedOptions{journal: j})
	got := delivered(fake)
	for _, key := range keys {
		if rec, _ := j.Lookup(key); got[key] != 1 && !(rec.Fate == job.Unknown && got[key] == 0) {
			t.Errorf("%s delivered %d times (journal %v)", key, got[key], rec.Fate)
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
	j := mustOpenJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding)
	got := sendAllKeyed(t, client, msgs, keyedOptions{journal: j})
	if res := got["row-a@example.net"]; res.Fate != job.Done || !errors.Is(res.Err, smtp.ErrSomeRecipientsRefused) {
		t.Errorf("one of two refused: %v (%v), want sent", res.Fate, res.Err)
	}
	if res := got["row-c@example.net"]; res.Fate != job.Refused {
		t.Errorf("both refused: %v (%v), want refused", res.Fate, res.Err)
	}
	if rec, _ := j.Lookup("row-c@example.net"); rec.Fate != job.Refused || !strings.HasPrefix(rec.Reply, "550 ") {
		t.Errorf("journal: %+v", rec)
	}
}

package mailmerge

import (
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// template is the message of the keyed tests; keyed gives each key a copy
// addressed to it.
var template = smtp.Message{From: "news@example.com", Subject: "News for {{NAME}}", Text: "Hi {{NAME}}"}

var testBinding = JournalBinding{Fingerprint: TemplateFingerprint(&template)}

// keyed yields a message to each address, keyed by the address.
func keyed(addrs ...string) iter.Seq2[string, *smtp.Message] {
	return func(yield func(string, *smtp.Message) bool) {
		for _, a := range addrs {
			m := template
			m.To = []string{a}
			m.Headers.MergeVars = map[string]any{"NAME": a}
			if !yield(a, &m) {
				return
			}
		}
	}
}

func mustOpenJournal(t *testing.T, path string, binding JournalBinding) *FileJournal {
	t.Helper()
	j, err := OpenJournal(path, binding)
	require.NoError(t, err)
	t.Cleanup(func() { j.Close() })
	return j
}

func sendAllKeyed(t *testing.T, client *smtp.Relay, msgs iter.Seq2[string, *smtp.Message], opts keyedOptions) map[string]keyedResult {
	t.Helper()
	seq, err := sendKeyed(testContext(t), client, msgs, opts)
	require.NoError(t, err)
	got := make(map[string]keyedResult)
	next := 0
	for res := range seq {
		if res.Index != next {
			t.Errorf("result %d has index %d: not in input order", next, res.Index)
		}
		next++
		if _, dup := got[res.Key]; !dup {
			got[res.Key] = res
		}
	}
	return got
}

// delivered counts the messages the fake relay accepted per recipient.
func delivered(fake *sendlooptest.Relay) map[string]int {
	n := make(map[string]int)
	for _, m := range fake.Messages() {
		for _, to := range m.EnvelopeTo {
			n[to]++
		}
	}
	return n
}

func TestSendKeyedStates(t *testing.T) {
	t.Parallel()
	const a, b, c = "ann@example.net", "bob@example.net", "cat@example.net"
	type want struct {
		state   job.Fate
		journal job.Fate // 0: no record
		err     error
	}
	tests := []struct {
		name   string
		faults []sendlooptest.RelayFault
		opts   []smtp.Option
		keys   []string
		want   map[string]want
	}{
		{"all sent", nil, nil, []string{a, b, c}, map[string]want{
			a: {job.Done, job.Done, nil}, b: {job.Done, job.Done, nil}, c: {job.Done, job.Done, nil}}},
		{"one recipient refused", []sendlooptest.RelayFault{{Command: "RCPT", Recipient: b, Code: 550, Message: "5.1.1 no such user"}}, nil,
			[]string{a, b, c}, map[string]want{
				a: {job.Done, job.Done, nil}, b: {job.Refused, job.Refused, smtp.ErrPermanent}, c: {job.Done, job.Done, nil}}},
		{"data refused", []sendlooptest.RelayFault{{Command: "DATA", Code: 554, Message: "5.7.1 spam"}}, nil,
			[]string{a}, map[string]want{a: {job.Refused, job.Refused, smtp.ErrPermanent}}},
		{"dropped after the final dot", []sendlooptest.RelayFault{{Command: "DATA", Drop: true}}, nil,
			[]string{a}, map[string]want{a: {job.Unknown, job.Unknown, smtp.ErrOutcomeUnknown}}},
		{"data 451, no retry left", []sendlooptest.RelayFault{{Command: "DATA", Code: 451}}, nil,
			[]string{a}, map[string]want{a: {job.Deferred, job.Deferred, smtp.ErrTemporary}}},
		{"data 451, then sent on retry", []sendlooptest.RelayFault{{Command: "DATA", Code: 451}}, []smtp.Option{retrying},
			[]string{a}, map[string]want{a: {job.Done, job.Done, nil}}},
		{"rcpt 452, no retry left", []sendlooptest.RelayFault{{Command: "RCPT", Code: 452}}, nil,
			[]string{a}, map[string]want{a: {job.Deferred, 0, smtp.ErrTemporary}}},
		{"421 to MAIL, sent on a new connection", []sendlooptest.RelayFault{{Command: "MAIL", Code: 421}}, []smtp.Option{retrying},
			[]string{a}, map[string]want{a: {job.Done, job.Done, nil}}},
		{"invalid key, message and duplicate", nil, nil, []string{a, "not an address", "", a}, map[string]want{
			a: {job.Done, job.Done, nil}, "not an address": {job.Rejected, 0, nil}, "": {job.Rejected, 0, errInvalidKey}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := startRelay(t)
			for _, f := range tt.faults {
				fake.InjectFault(f)
			}
			client := newClient(t, fake, testPassword, nil, tt.opts...)
			j := mustOpenJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding)
			got := sendAllKeyed(t, client, keyed(tt.keys...), keyedOptions{journal: j})
			for key, w := range tt.want {
				res := got[key]
				if res.Fate != w.state || (w.err != nil && !errors.Is(res.Err, w.err)) || (w.err == nil && w.state == job.Done && res.Err != nil) {
					t.Errorf("%q: %v (%v), want %v (%v)", key, res.Fate, res.Err, w.state, w.err)
				}
				rec, ok := j.Lookup(key)
				if (w.journal == 0) == ok || (ok && rec.Fate != w.journal) {
					t.Errorf("%q: journal %v (%v), want %v", key, rec.Fate, ok, w.journal)
				}
				if ok && w.state != job.NotAttempted && rec.MessageID != res.MessageID {
					t.Errorf("%q: journal Message-ID %q, result %q", key, rec.MessageID, res.MessageID)
				}
				if w.journal == job.Done && rec.Reply != res.Reply.String() {
					t.Errorf("%q: journal reply %q, result %q", key, rec.Reply, res.Reply)
				}
			}
			for to, n := range delivered(fake) {
				if n > 1 {
					t.Errorf("%s got %d messages", to, n)
				}
			}
		})
	}
	t.Run("duplicate key", func(t *testing.T) {
		t.Parallel()
		fake := startRelay(t)
		client := newClient(t, fake, testPassword, nil)
		seq, err := sendKeyed(testContext(t), client, keyed(a, b, a), keyedOptions{})
		require.NoError(t, err)
		var states []string
		for res := range seq {
			states = append(states, res.Fate.String())
			if res.Index == 2 && !errors.Is(res.Err, errDuplicateKey) {
				t.Errorf("second %s: %v, want ErrDuplicateKey", a, res.Err)
			}
			var dup *duplicateKeyError
			if res.Index == 2 && (!errors.As(res.Err, &dup) || dup.First != 0 || dup.Key != a) {
				t.Errorf("second %s: %#v, want the first at index 0", a, res.Err)
			}
		}
		if strings.Join(states, " ") != "done done rejected" || delivered(fake)[a] != 1 {
			t.Errorf("states %v, %s got %d messages", states, a, delivered(fake)[a])
		}
	})
}

func TestSendKeyedSessionFailuresStopTheRun(t *testing.T) {
	t.Parallel()
	var keys []string // more than the workers of the pool: some wait for the stop
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("user%d@example.net", i))
	}
	tests := []struct {
		name   string
		client func(t *testing.T) *smtp.Relay
	}{
		{"wrong password (535)", func(t *testing.T) *smtp.Relay {
			fake, err := sendlooptest.StartRelay(t, testUser, "the-right-one")
			require.NoError(t, err)
			return newClient(t, fake, testPassword, nil, retrying)
		}},
		{"untrusted certificate", func(t *testing.T) *smtp.Relay {
			fake := startRelay(t)
			client, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: testUser, Password: testPassword}, retrying)
			require.NoError(t, err)
			t.Cleanup(func() { client.Close() })
			return client
		}},
		{"554 greeting", func(t *testing.T) *smtp.Relay {
			fake := startRelay(t)
			fake.InjectFault(sendlooptest.RelayFault{Command: "CONNECT", Code: 554, Message: "5.7.1 no service for you", Times: 100})
			return newClient(t, fake, testPassword, nil, retrying)
		}},
		{"MAIL FROM refused", func(t *testing.T) *smtp.Relay {
			fake := startRelay(t)
			fake.InjectFault(sendlooptest.RelayFault{Command: "MAIL", Code: 550, Message: "5.7.1 sender not allowed"})
			t.Cleanup(func() {
				if n := len(fake.Messages()); n != 0 {
					t.Errorf("the relay got %d messages after the run stopped", n)
				}
			})
			return newClient(t, fake, testPassword, nil, retrying, smtp.WithMaxConnections(1))
		}},
		{"relay down", func(t *testing.T) *smtp.Relay {
			client, err := smtp.NewRelay(testkit.RefusingAddr(t), smtp.Auth{Username: testUser, Password: testPassword}, retrying)
			require.NoError(t, err)
			t.Cleanup(func() { client.Close() })
			return client
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := mustOpenJournal(t, filepath.Join(t.TempDir(), "journal"), testBinding)
			got := sendAllKeyed(t, tt.client(t), keyed(keys...), keyedOptions{journal: j})
			for _, key := range keys {
				res := got[key]
				if res.Fate != job.NotAttempted || !errors.Is(res.Err, smtp.ErrRunStopped) {
					t.Errorf("%s: %v (%v), want not attempted, run stopped", key, res.Fate, res.Err)
				}
				if rec, ok := j.Lookup(key); ok {
					t.Errorf("%s journaled %v: a rerun would not send it", key, rec.Fate)
				}
			}
		})
	}
}

// TestSendKeyedRerunNeverSendsTwice runs a list through faults, then again
// with more keys: no key is sent twice, unknown ones are named, refused
// ones are sent again only when asked.
func TestSendKeyedRerunNeverSendsTwice(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil, smtp.WithMaxConnections(1))
	path := filepath.Join(t.TempDir(), "journal")
	const sent, unknown, refused, later = "ann@example.net", "bob@example.net", "cat@example.net", "dan@example.net"
	first := []string{sent, unknown, refused}

	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Recipient: refused, Code: 550})
	j := mustOpenJournal(t, path, testBinding)
	// One key at a time, so that the drop after the dot hits the second.
	for _, key := range first {
		if key == unknown {
			fake.InjectFault(sendlooptest.RelayFault{Command: "DATA", Drop: true})
		}
		sendAllKeyed(t, client, keyed(key), keyedOptions{journal: j})
	}
	j.Close()

	runs := []struct {
		name string
		opts keyedOptions
		want map[string]string // state/skip
	}{
		{"rerun", keyedOptions{}, map[string]string{sent: "skipped/already_sent", unknown: "skipped/unknown", refused: "skipped/refused", later: "done/"}},
		{"again", keyedOptions{}, map[string]string{sent: "skipped/already_sent", unknown: "skipped/unknown", refused: "skipped/refused", later: "skipped/already_sent"}},
		{"resend refused", keyedOptions{resendRefused: true}, map[string]string{sent: "skipped/already_sent", unknown: "skipped/unknown", refused: "done/", later: "skipped/already_sent"}},
	}
	for _, run := range runs {
		j := mustOpenJournal(t, path, testBinding)
		run.opts.journal = j
		got := sendAllKeyed(t, client, keyed(sent, unknown, refused, later), run.opts)
		for key, w := range run.want {
			if s := got[key].Fate.String() + "/" + got[key].Skip.String(); s != w {
				t.Errorf("%s: %s: %s, want %s", run.name, key, s, w)
			}
		}
		if res := got[sent]; res.Previous == nil || res.MessageID == "" || res.MessageID != res.Previous.MessageID || res.Reply.Code != 250 {
			t.Errorf("%s: the skipped sent key lacks its earlier Message-ID and reply: %+v", run.name, res)
		}
		j.Close()
	}
	for to, n := range delivered(fake) {
		if n != 1 {
			t.Errorf("%s got %d messages, want 1", to, n)
		}
	}
	// Asked for, the unknown key is sent again: its recipient may get two.
	j = mustOpenJournal(t, path, testBinding)
	got := sendAllKeyed(t, client, keyed(sent, unknown), keyedOptions{journal: j, resendUnknown: true})
	if got[unknown].Fate != job.Done || got[sent].Fate != job.Skipped || delivered(fake)[unknown] != 2 {
		t.Errorf("resend unknown: %v, %v", got[unknown].Fate, got[sent].Fate)
	}
}

func TestSendKeyedShards(t *testing.T) {
	t.Parallel()
	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	var keys []string
	for i := range 60 {
		keys = append(keys, fmt.Sprintf("user%d@example.net", i))
	}
	const n = 3
	dir := t.TempDir()
	for k := range n {
		shard := ShardSpec{Index: k, Count: n}
		j := mustOpenJournal(t, filepath.Join(dir, fmt.Sprint(k)), JournalBinding{Fingerprint: testBinding.Fingerprint, Shard: shard})
		got := sendAllKeyed(t, client, keyed(keys...), keyedOptions{journal: j, shard: shard})
		for _, key := range keys {
			mine := Shard(key, n) == k
			if res := got[key]; mine != (res.Fate == job.Done) || !mine && res.Skip != SkipShard {
				t.Errorf("shard %d: %s: %v/%v", k, key, res.Fate, res.Skip)
			}
		}
	}
	got := delivered(fake)
	for _, key := range keys {
		if got[key] != 1 {
			t.Errorf("%s got %d messages over %d shards, want 1", key, got[key], n)
		}
	}
	// A journal of another shard is refused before anything is sent.
	j := mustOpenJournal(t, filepath.Join(dir, "0"), JournalBinding{Fingerprint: testBinding.Fingerprint, Shard: ShardSpec{Index: 0, Count: n}})
	_, err := sendKeyed(testContext(t), client, keyed(keys...), keyedOptions{journal: j, shard: ShardSpec{Index: 1, Count: n}})
	var mismatch *JournalMismatchError
	if !errors.As(err, &mismatch) || !errors.Is(err, ErrJournalMismatch) {
		t.Errorf("err = %v, want *JournalMismatchError", err)
	}
	if _, err := sendKeyed(testContext(t), client, keyed(keys...), keyedOptions{shard: ShardSpec{Index: 3, Count: 3}}); err == nil {
		t.Error("shard 3 of 3 accepted")
	}
}

package mailmerge

import (
	"bytes"
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
)

func headerLine(b JournalBinding) string {
	return fmt.Sprintf(`{"sendloop_journal":1,"fingerprint":%q,"shard_index":%d,"shard_count":%d}`+"\n", b.Fingerprint, b.Shard.Index, b.Shard.Count)
}

// TestJournalAfterACrash opens a journal left by a process killed in the
// middle of a run: a key in flight with no outcome, a key sent, and a torn
// last record. The rerun skips the first two and sends the third.
func TestJournalAfterACrash(t *testing.T) {
	t.Parallel()
	const inFlight, sent, torn = "ann@example.net", "bob@example.net", "cat@example.net"
	path := filepath.Join(t.TempDir(), "journal")
	whole := headerLine(testBinding) +
		`{"k":"ann@example.net","s":"in_flight","id":"<1@example.com>","t":"2026-11-25T10:00:00Z"}` + "\n" +
		`{"k":"bob@example.net","s":"in_flight","id":"<2@example.com>"}` + "\n" +
		`{"k":"bob@example.net","s":"sent","id":"<2@example.com>","r":"250 2.0.0 Ok: queued as X1"}` + "\n"
	if err := os.WriteFile(path, []byte(whole+`{"k":"cat@example.net","s":"in_fl`), 0o600); err != nil {
		t.Fatal(err)
	}
	j := mustOpenJournal(t, path, testBinding)
	if data, _ := os.ReadFile(path); string(data) != whole {
		t.Errorf("the torn record was not truncated:\n%s", data)
	}
	if rec, ok := j.lookup(inFlight); !ok || rec.Kind != journalkind.InFlight || rec.MessageID != "<1@example.com>" || rec.Time.IsZero() {
		t.Errorf("in flight: %+v %v", rec, ok)
	}
	if _, ok := j.Lookup(torn); ok {
		t.Error("the torn record was read")
	}

	fake := startRelay(t)
	client := newClient(t, fake, testPassword, nil)
	got := sendAllKeyed(t, client, keyed(inFlight, sent, torn), keyedOptions{journal: j})
	if r := got[inFlight]; r.Fate != job.Skipped || r.Skip != SkipUnknown || r.MessageID != "<1@example.com>" {
		t.Errorf("in flight: %v/%v %q, want skipped as unknown", r.Fate, r.Skip, r.MessageID)
	}
	if r := got[sent]; r.Fate != job.Skipped || r.Skip != SkipAlreadySent || r.Reply.String() != "250 2.0.0 Ok: queued as X1" {
		t.Errorf("sent: %v/%v %q", r.Fate, r.Skip, r.Reply)
	}
	if r := got[torn]; r.Fate != job.Done {
		t.Errorf("torn: %v (%v), want sent", r.Fate, r.Err)
	}
	if n := len(fake.Messages()); n != 1 {
		t.Errorf("relay got %d messages, want 1", n)
	}
	j.Close()
	// The file reads back whole: the new records start on their own line.
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 6 || !strings.Contains(lines[4], `"s":"in_flight"`) || !strings.Contains(lines[5], `"s":"sent"`) {
		t.Errorf("journal after the rerun:\n%s", data)
	}
	var keys []string
	for rec := range mustOpenJournal(t, path, testBinding).All() {
		keys = append(keys, rec.Key+"="+rec.Fate.String())
	}
	if s := strings.Join(keys, " "); s != "ann@example.net=unknown bob@example.net=done cat@example.net=done" {
		t.Errorf("All = %s", s)
	}
}

func TestOpenJournalRefuses(t *testing.T) {
	t.Parallel()
	other := JournalBinding{Fingerprint: "sha256:other"}
	shard := JournalBinding{Fingerprint: testBinding.Fingerprint, Shard: ShardSpec{Index: 1, Count: 2}}
	record := `{"k":"a@example.net","s":"sent"}` + "\n"
	tests := []struct {
		name    string
		content string
		want    error
		line    int
	}{
		{"another message", headerLine(other) + record, ErrJournalMismatch, 0},
		{"another shard", headerLine(shard) + record, ErrJournalMismatch, 0},
		{"not a journal", "name,email\nann,ann@example.net\n", ErrJournalCorrupt, 1},
		{"not a journal, one line", "hello", ErrJournalCorrupt, 1},
		{"a future version", `{"sendloop_journal":2,"fingerprint":"x"}` + "\n", ErrJournalCorrupt, 1},
		{"a bad record before a good one", headerLine(testBinding) + record + "{garbage\n" + record, ErrJournalCorrupt, 3},
		{"an unknown state before a good one", headerLine(testBinding) + `{"k":"a","s":"maybe"}` + "\n" + record, ErrJournalCorrupt, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "journal")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			j, err := OpenJournal(path, testBinding)
			if err == nil {
				j.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			var corrupt *JournalCorruptError
			if tt.line != 0 && (!errors.As(err, &corrupt) || corrupt.Line != tt.line || corrupt.Path != path) {
				t.Errorf("err = %v, want line %d of %s", err, tt.line, path)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Errorf("the file was changed:\n%s", data)
			}
		})
	}
	if _, err := OpenJournal(filepath.Join(t.TempDir(), "j"), JournalBinding{}); err == nil {
		t.Error("a binding without a fingerprint was accepted")
	}
}

func TestJournalTornEnds(t *testing.T) {
	t.Parallel()
	header := headerLine(testBinding)
	good := header + `{"k":"a@example.net","s":"sent"}` + "\n"
	tests := []struct {
		name, content, want string
	}{
		{"empty", "", header},
		{"torn header", `{"sendloop_jour`, header},
		{"header without its end of line", strings.TrimSuffix(header, "\n"), header},
		{"record without its end of line", good + `{"k":"b@example.net","s":"sent"}`, good},
		{"zeros after a machine crash", good + "\x00\x00\x00\x00", good},
		{"malformed lines at the end", good + "{\"k\":\n\x00\x00\n", good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "journal")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			j := mustOpenJournal(t, path, testBinding)
			if err := j.append(record{Key: "c@example.net", Kind: journalkind.Sent}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			data, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(data), tt.want) || strings.Count(string(data[len(tt.want):]), "\n") != 1 {
				t.Errorf("journal =\n%q\nwant %q and one record", data, tt.want)
			}
			if _, ok := mustOpenJournal(t, path, testBinding).Lookup("c@example.net"); !ok {
				t.Error("the new record is not read back")
			}
		})
	}
}

// TestJournalConcurrentAppends appends from many goroutines: every record
// is one whole line.
func TestJournalConcurrentAppends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "journal")
	j := mustOpenJournal(t, path, testBinding)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				key := fmt.Sprintf("u%d-%d@example.net", g, i)
				for _, s := range []journalkind.Kind{journalkind.InFlight, journalkind.Sent} {
					if err := j.append(record{Key: key, Kind: s, MessageID: "<" + key + ">"}); err != nil {
						t.Error(err)
					}
					j.Lookup(key)
				}
			}
		}()
	}
	wg.Wait()
	j.Close()
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 1+8*100*2 {
		t.Errorf("%d lines", n)
	}
	n := 0
	for rec := range mustOpenJournal(t, path, testBinding).All() {
		n++
		if rec.Fate != job.Done {
			t.Errorf("%s: %v", rec.Key, rec.Fate)
		}
	}
	if n != 800 {
		t.Errorf("%d keys", n)
	}
}

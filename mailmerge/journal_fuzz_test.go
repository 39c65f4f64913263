package mailmerge

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParseJournal reads arbitrary bytes as a journal: no panic, the good
// length is a whole number of lines, and what is read writes back to the
// same records.
func FuzzParseJournal(f *testing.F) {
	header := `{"sendloop_journal":1,"fingerprint":"sha256:ab","shard_index":1,"shard_count":3}` + "\n"
	rec := `{"k":"ann@example.net","s":"sent","id":"<1@x>","r":"250 Ok","t":"2026-11-25T10:00:00.5Z"}` + "\n"
	for _, seed := range []string{
		"",
		header,
		header + rec,
		header + rec + `{"k":"b","s":"in_flight"}`,
		header + "{bad\n" + rec,
		header + rec + "\x00\x00",
		`{"sendloop_jo`,
		"name,email\n",
		header + `{"k":"\u00e9\n","s":"unknown","t":"not a time"}` + "\n",
		header + `{"k":"","s":"sent"}` + "\n",
		`{"sendloop_journal":1,"fingerprint":"x","shard_index":5,"shard_count":2}` + "\n",
		header + rec + `{"k":"c","s":"suppressed","r":"on the global list"}` + "\n" + `{"k":"d","s":"not_subscribed","r":"unsubscribed"}` + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []record
		binding, hasHeader, good, err := parseJournal(bufio.NewReader(bytes.NewReader(data)), func(r record, _ int64) { recs = append(recs, r) })
		if good < 0 || good > int64(len(data)) || (good > 0 && data[good-1] != '\n') {
			t.Fatalf("good = %d of %d bytes", good, len(data))
		}
		if err != nil {
			var corrupt *JournalCorruptError
			if !errors.As(err, &corrupt) || corrupt.Line < 1 {
				t.Fatalf("err = %v, want *JournalCorruptError with a line", err)
			}
			return
		}
		if !hasHeader {
			if len(recs) > 0 || good != 0 {
				t.Fatalf("records without a header")
			}
			return
		}
		// Write back what was read, and read it again.
		var buf strings.Builder
		buf.WriteString(string(data[:strings.IndexByte(string(data), '\n')+1]))
		for _, r := range recs {
			if r.Key == "" || !r.Kind.Valid() {
				t.Fatalf("bad record %+v", r)
			}
			buf.Write(encodeJournalRecord(r))
		}
		var again []record
		b2, _, good2, err := parseJournal(bufio.NewReader(strings.NewReader(buf.String())), func(r record, _ int64) { again = append(again, r) })
		if err != nil || b2 != binding || good2 != int64(buf.Len()) || len(again) != len(recs) {
			t.Fatalf("reread: %v, %d records of %d", err, len(again), len(recs))
		}
		for i := range recs {
			a, b := recs[i], again[i]
			if !a.Time.Equal(b.Time) {
				t.Fatalf("time %v != %v", a.Time, b.Time)
			}
			a.Time, b.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("record %+v read back as %+v", a, b)
			}
		}
	})
}

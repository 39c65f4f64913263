package mailmerge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge/internal/journalkind"
)

// Durability of a FileJournal: besides at Close, an fsync of the file starts
// after journalSyncEvery records, or when a record comes journalSyncInterval
// or more after the last one started.
const (
	// journalSyncEvery is the most records a FileJournal writes between the
	// starts of two fsyncs, unless an fsync is still running.
	journalSyncEvery = 32
	// journalSyncInterval is the time after which the next record of a
	// FileJournal is fsynced, however few came since the last fsync.
	journalSyncInterval = time.Second
)

// record is one line of a journal file: a key and the kind of its record.
type record struct {
	Key       string
	Kind      journalkind.Kind
	MessageID string
	Reply     string
	Time      time.Time
}

// public is the record as a program sees it: its fate.
func (r record) public() JournalRecord {
	return JournalRecord{Key: r.Key, Fate: r.Kind.Fate(), MessageID: r.MessageID, Reply: r.Reply, Time: r.Time}
}

// journalVersion is the format of the header line.
const journalVersion = 1

// FileJournal is a JournalStore in a file, one JSON object a line: a header line
// with the binding, then one line per record, appended, never rewritten.
//
//	{"sendloop_journal":1,"fingerprint":"sha256:…","shard_index":0,"shard_count":3}
//	{"k":"ann@example.com","s":"in_flight","id":"<…@example.com>","t":"2026-11-25T13:00:00.1Z"}
//	{"k":"ann@example.com","s":"sent","id":"<…@example.com>","r":"250 2.0.0 Ok: queued as 4Bc9X","t":"…"}
//
// Durability: each record is one unbuffered write to the file, so it
// survives the death of the process (kill -9, a panic, an OOM kill) as soon
// as Append returns. An fsync after every journalSyncEvery records, or when
// journalSyncInterval passed since the last one, and at Close, bounds what
// a crash of the machine can lose to the records of that group and those
// written while it runs; lost in-flight records can then let a key be sent
// again, which only the fsync of every record would prevent. The fsyncs run
// in the background, so that no connection waits for the disk; Close waits
// for them, and a failed one stops the journal as a failed write does.
//
// A torn last record (the machine stopped in the middle of a write) is
// dropped, and the file truncated to the last whole record, when the
// journal is opened; a malformed record before the last one is
// *JournalCorruptError. One process at a time may use a journal file.
//
// Memory: a FileJournal keeps, per key, a 64-bit hash and the offset of the
// key's last record in the file (a few tens of bytes, whatever the lengths of
// the keys and replies); Lookup and All read the records back from the file.
// A hash collision is told apart by reading the key back, so it never makes
// a key look journaled that is not.
//
// A FileJournal is safe for concurrent use.
type FileJournal struct {
	path    string
	binding JournalBinding

	mu   sync.Mutex
	f    *os.File
	size int64 // the length of the file's whole records: where the next one goes
	// The memory of a journal is a few tens of bytes per key, whatever the
	// length of the keys and replies (see journalIndex): each key's last
	// record stays in the file, read back by Lookup and All.
	idx      journalIndex
	buf      []byte // read buffer of readAt
	unsynced int
	synced   time.Time
	fsync    func(*os.File) error // (*os.File).Sync; tests hold it
	syncing  int                  // fsyncs under way in the background (syncGroupLocked)
	resync   bool                 // a group completed during the fsync under way
	idle     *sync.Cond           // on j.mu: broadcast when syncing falls to 0
	err      error                // a failed write: the journal takes no more records
}

// OpenJournal opens the journal file at path for binding, creating it if
// it does not exist (or is empty), and reads its records. A journal written
// for another fingerprint or shard is *JournalMismatchError; a file that is
// not a journal, or a malformed record before the last one,
// *JournalCorruptError.
func OpenJournal(path string, binding JournalBinding) (*FileJournal, error) {
	return openJournal(path, binding, newJournalIndex())
}

// openJournal is OpenJournal with the index to fill (tests give one whose
// hashes collide).
func openJournal(path string, binding JournalBinding, idx journalIndex) (*FileJournal, error) {
	if binding.Fingerprint == "" || !utf8.ValidString(binding.Fingerprint) {
		return nil, errors.New("mailmerge: OpenJournal: the binding needs a fingerprint (TemplateFingerprint)")
	}
	if err := binding.Shard.validate(); err != nil {
		return nil, err
	}
	// 0600: a journal names every recipient, personal data like the sync state.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mailmerge: opening the journal: %w", err)
	}
	j := &FileJournal{path: path, binding: binding, f: f, idx: idx, synced: time.Now()}
	j.idle, j.fsync = sync.NewCond(&j.mu), (*os.File).Sync
	if err := j.load(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// load reads the file, truncates a torn tail, and writes the header of a
// new journal.
func (j *FileJournal) load() error {
	var idxErr error
	got, hasHeader, good, err := parseJournal(bufio.NewReader(j.f), func(rec record, off int64) {
		if idxErr == nil {
			idxErr = j.idx.set(rec.Key, rec.Kind, off, j.readAt)
		}
	})
	if err == nil && idxErr != nil {
		err = idxErr
	}
	var corrupt *JournalCorruptError
	if errors.As(err, &corrupt) {
		corrupt.Path = j.path
		return corrupt
	}
	if err != nil {
		return fmt.Errorf("mailmerge: reading the journal %q: %w", j.path, err)
	}
	if hasHeader && got != j.binding {
		return &JournalMismatchError{Path: j.path, Journal: got, Want: j.binding}
	}
	size, err := j.f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("mailmerge: reading the journal %q: %w", j.path, err)
	}
	j.size = good
	if size != good {
		// A torn last record: drop it, so that the next one starts a line.
		if err := j.f.Truncate(good); err != nil {
			return fmt.Errorf("mailmerge: truncating the torn end of the journal %q: %w", j.path, err)
		}
	}
	if hasHeader {
		return nil
	}
	line, _ := json.Marshal(journalHeader{Version: journalVersion, Fingerprint: j.binding.Fingerprint,
		ShardIndex: j.binding.Shard.Index, ShardCount: j.binding.Shard.Count})
	j.size = int64(len(line)) + 1
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("mailmerge: writing the journal %q: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("mailmerge: writing the journal %q: %w", j.path, err)
	}
	// The new file's name must survive a machine crash too.
	if dir, err := os.Open(filepath.Dir(j.path)); err == nil {
		_ = dir.Sync() // not supported everywhere (Windows): best effort
		dir.Close()
	}
	return nil
}

// Path returns the file of the journal.
func (j *FileJournal) Path() string { return j.path }

// Binding returns the binding the journal was opened with.
func (j *FileJournal) Binding() JournalBinding { return j.binding }

// Lookup returns the last record of key, if any, read back from the file.
// Should the file fail to read back, the key is reported with the fate of
// the record the journal keeps in memory, or job.Unknown when even that
// cannot be told apart from another key's: never as absent, so that a key
// journaled is never sent again by mistake.
func (j *FileJournal) Lookup(key string) (JournalRecord, bool) {
	rec, ok := j.lookup(key)
	return rec.public(), ok
}

func (j *FileJournal) lookup(key string) (record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok, err := j.idx.find(key, j.readAt)
	if err != nil {
		return record{Key: key, Kind: journalkind.Unknown}, true
	}
	if !ok {
		return record{}, false
	}
	rec, err := j.readAt(e.offset())
	if err != nil || rec.Key != key {
		return record{Key: key, Kind: e.state()}, true
	}
	return rec, true
}

// All yields the last record of every key, in the order of those records
// in the file: e.g. to list the keys left unknown. It reads the file; the
// records appended while it runs may be left out.
func (j *FileJournal) All() iter.Seq[JournalRecord] {
	return func(yield func(JournalRecord) bool) {
		j.mu.Lock()
		size := j.size
		j.mu.Unlock()
		f, err := os.Open(j.path)
		if err != nil {
			return
		}
		defer f.Close()
		var off int64
		r := bufio.NewReader(io.LimitReader(f, size))
		for {
			line, err := r.ReadBytes('\n')
			if len(line) == 0 || line[len(line)-1] != '\n' {
				return
			}
			at := off
			off += int64(len(line))
			rec, perr := parseJournalRecord(line)
			if at == 0 || perr != nil { // the header
				continue
			}
			j.mu.Lock()
			e, ok, ferr := j.idx.find(rec.Key, j.readAt)
			j.mu.Unlock()
			if ferr == nil && ok && e.offset() == at && !yield(rec.public()) {
				return
			}
			if err != nil {
				return
			}
		}
	}
}

// readAt reads the record whose line starts at off; j.mu is held (or the
// journal is being opened).
func (j *FileJournal) readAt(off int64) (record, error) {
	f := j.f
	if f == nil { // closed: Lookup still answers
		var err error
		if f, err = os.Open(j.path); err != nil {
			return record{}, err
		}
		defer f.Close()
	}
	if j.buf == nil {
		j.buf = make([]byte, 512)
	}
	var line []byte
	for {
		n, err := f.ReadAt(j.buf, off+int64(len(line)))
		if i := bytes.IndexByte(j.buf[:n], '\n'); i >= 0 {
			line = append(line, j.buf[:i+1]...)
			break
		}
		line = append(line, j.buf[:n]...)
		if err != nil {
			return record{}, fmt.Errorf("mailmerge: reading back the journal %q at %d: %w", j.path, off, err)
		}
	}
	return parseJournalRecord(line)
}

// Claim records key in flight, before its message's final dot.
func (j *FileJournal) Claim(key, messageID string) error {
	return j.append(record{Key: key, Kind: journalkind.InFlight, MessageID: messageID})
}

// Record records the outcome of key's message (rec.Fate job.Done, job.Refused,
// job.Unknown or job.Deferred).
func (j *FileJournal) Record(rec JournalRecord) error {
	kind, ok := journalkind.Outcome(rec.Fate)
	if !ok || kind == journalkind.Suppressed || kind == journalkind.NotSubscribed {
		return fmt.Errorf("mailmerge: journal record of %q: %v is not the outcome of a message", rec.Key, rec.Fate)
	}
	return j.append(record{Key: rec.Key, Kind: kind, MessageID: rec.MessageID, Reply: rec.Reply, Time: rec.Time})
}

// Decide records a row decided without sending (fate job.Suppressed or
// job.NotSubscribed), with its reason: a kind of record sendloop 0.4.0 never wrote.
func (j *FileJournal) Decide(key string, fate job.Fate, reason string) error {
	kind, err := decidedKind(key, fate)
	if err != nil {
		return err
	}
	return j.append(record{Key: key, Kind: kind, Reply: reason})
}

// decidedKind is the kind of record of a row decided without sending.
func decidedKind(key string, fate job.Fate) (journalkind.Kind, error) {
	if kind, ok := journalkind.Outcome(fate); ok && (kind == journalkind.Suppressed || kind == journalkind.NotSubscribed) {
		return kind, nil
	}
	return 0, fmt.Errorf("mailmerge: journal record of %q: %v is not a fate decided without sending", key, fate)
}

// append writes rec with one write to the file (setting Time when zero),
// and fsyncs it with the records before it when its group is complete. After
// a failed write the journal takes no more records.
func (j *FileJournal) append(rec record) error {
	if rec.Key == "" || !utf8.ValidString(rec.Key) {
		return fmt.Errorf("mailmerge: journal key %q: want non-empty UTF-8", rec.Key)
	}
	if !rec.Kind.Valid() {
		return fmt.Errorf("mailmerge: journal record of %q: invalid kind %d", rec.Key, rec.Kind)
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	line := encodeJournalRecord(rec)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if j.f == nil {
		return errors.New("mailmerge: the journal is closed")
	}
	if _, err := j.f.Write(line); err != nil {
		j.err = fmt.Errorf("mailmerge: writing the journal %q: %w", j.path, err)
		return j.err
	}
	off := j.size
	j.size += int64(len(line))
	if err := j.idx.set(rec.Key, rec.Kind, off, j.readAt); err != nil {
		j.err = err
		return j.err
	}
	j.unsynced++
	if now := time.Now(); j.unsynced >= journalSyncEvery || now.Sub(j.synced) >= journalSyncInterval {
		return j.syncGroupLocked(now)
	}
	return nil
}

// syncGroupLocked fsyncs the records written so far in the background: an fsync takes a
// few hundred microseconds to milliseconds, the time of several messages, which no
// connection waits for. A group that completes while an fsync runs is fsynced by the same
// goroutine right after it. An fsync covers every write that finished before it started.
func (j *FileJournal) syncGroupLocked(now time.Time) error {
	j.unsynced, j.synced = 0, now
	if j.syncing > 0 {
		j.resync = true
		return nil
	}
	j.syncing++
	go j.syncInBackground(j.f)
	return nil
}

// syncInBackground fsyncs f until no group is left waiting; a failure stops the journal
// (the next Append and Close return it).
func (j *FileJournal) syncInBackground(f *os.File) {
	for {
		err := j.fsync(f)
		j.mu.Lock()
		if err != nil && j.err == nil {
			j.err = fmt.Errorf("mailmerge: syncing the journal %q: %w", j.path, err)
		}
		if !j.resync || j.err != nil {
			j.resync = false
			j.syncing--
			j.idle.Broadcast()
			j.mu.Unlock()
			return
		}
		j.resync = false
		j.mu.Unlock()
	}
}

func (j *FileJournal) syncLocked(now time.Time) error {
	if j.unsynced == 0 {
		return nil
	}
	if err := j.fsync(j.f); err != nil {
		j.err = fmt.Errorf("mailmerge: syncing the journal %q: %w", j.path, err)
		return j.err
	}
	j.unsynced, j.synced = 0, now
	return nil
}

// Sync flushes the records written so far to stable storage.
func (j *FileJournal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	return j.syncLocked(time.Now())
}

// Close syncs and closes the file. It returns the error of a failed write
// or sync, if one happened since the journal was opened: the records from
// it on are missing from the file, and a rerun reports their keys unknown.
// It may be called more than once; the later calls return nil.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	for j.syncing > 0 { // the file stays open until their fsyncs return
		j.idle.Wait()
	}
	if j.f == nil { // closed by another Close meanwhile
		return nil
	}
	err := j.err
	if err == nil {
		err = j.syncLocked(time.Now())
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}

// journalHeader is the first line of a journal file.
type journalHeader struct {
	Version     int    `json:"sendloop_journal"`
	Fingerprint string `json:"fingerprint"`
	ShardIndex  int    `json:"shard_index"`
	ShardCount  int    `json:"shard_count"`
}

// journalLine is a record line.
type journalLine struct {
	Key       string `json:"k"`
	State     string `json:"s"`
	MessageID string `json:"id,omitempty"`
	Reply     string `json:"r,omitempty"`
	Time      string `json:"t,omitempty"`
}

// encodeJournalRecord returns the line of rec, its end of line included; <, > and & are
// written as they are, so that Message-IDs read as such.
func encodeJournalRecord(rec record) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(journalLine{Key: rec.Key, State: rec.Kind.String(), MessageID: rec.MessageID,
		Reply: rec.Reply, Time: rec.Time.UTC().Format(time.RFC3339Nano)})
	return buf.Bytes()
}

// headerPrefix starts every journal file.
var headerPrefix = []byte(`{"sendloop_journal":`)

// parseJournal reads a journal: its header, then each record, passed to
// each in order with the offset of its line. It returns the binding of the header (hasHeader false for
// an empty file or a torn header) and the length of the whole lines read,
// to which a torn end is truncated. Malformed lines at the end are a torn
// end; one followed by a good record is a *JournalCorruptError (its Path
// left empty).
func parseJournal(r *bufio.Reader, each func(rec record, offset int64)) (binding JournalBinding, hasHeader bool, good int64, err error) {
	var offset int64
	lineNo := 0
	badLine := 0 // the first malformed line not yet followed by a good one
	var badErr error
	for {
		line, readErr := r.ReadBytes('\n')
		if readErr != nil && readErr != io.EOF {
			return binding, hasHeader, good, readErr
		}
		if len(line) == 0 {
			break
		}
		lineNo++
		offset += int64(len(line))
		whole := line[len(line)-1] == '\n'
		if !hasHeader {
			if !whole && (bytes.HasPrefix(line, headerPrefix) || bytes.HasPrefix(headerPrefix, line)) {
				break // a torn header: the file is new
			}
			b, err := parseJournalHeader(line)
			if err != nil || !whole {
				if err == nil {
					err = errors.New("the header line is not complete")
				}
				return binding, false, 0, &JournalCorruptError{Line: lineNo, Err: fmt.Errorf("not a sendloop journal: %w", err)}
			}
			binding, hasHeader, good = b, true, offset
			continue
		}
		rec, err := parseJournalRecord(line)
		if err == nil && !whole {
			err = errors.New("torn record: no end of line")
		}
		if err != nil {
			if badLine == 0 {
				badLine, badErr = lineNo, err
			}
			continue
		}
		if badLine != 0 {
			return binding, hasHeader, good, &JournalCorruptError{Line: badLine, Err: badErr}
		}
		each(rec, offset-int64(len(line)))
		good = offset
	}
	return binding, hasHeader, good, nil
}

func parseJournalHeader(line []byte) (JournalBinding, error) {
	var h journalHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return JournalBinding{}, err
	}
	b := JournalBinding{Fingerprint: h.Fingerprint, Shard: ShardSpec{Index: h.ShardIndex, Count: h.ShardCount}}
	switch {
	case h.Version != journalVersion:
		return b, fmt.Errorf("format version %d, want %d", h.Version, journalVersion)
	case h.Fingerprint == "":
		return b, errors.New("no fingerprint")
	}
	return b, b.Shard.validate()
}

func parseJournalRecord(line []byte) (record, error) {
	var l journalLine
	if err := json.Unmarshal(line, &l); err != nil {
		return record{}, err
	}
	state, ok := journalkind.Parse(l.State)
	switch {
	case !ok:
		return record{}, fmt.Errorf("unknown state %q", l.State)
	case l.Key == "":
		return record{}, errors.New("no key")
	}
	rec := record{Key: l.Key, Kind: state, MessageID: l.MessageID, Reply: l.Reply}
	if l.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return record{}, fmt.Errorf("time: %w", err)
		}
		rec.Time = t
	}
	return rec, nil
}

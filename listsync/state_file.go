package listsync

import (
	"bufio"
	"compress/flate"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// The state file, as written:
//
//	magic (8) | in-use mark (1) | reserved (7) | key ID (16) | salt (32) | chunks…
//
// Each chunk is a 4-byte big-endian length (its top bit marks the last chunk) and that
// many bytes sealed with AES-256-GCM under a key derived from the API key and the salt.
// A chunk's nonce is its index; its additional data is the file's prefix (but the in-use
// mark), its index and whether it is the last: chunks cannot be reordered, dropped or cut
// off without the reader noticing. The chunks carry a DEFLATE stream of the header and the
// entries (see stateEncoder). The in-use mark stays outside the seal so that a run can
// set it in place before its first write: clearing it takes write access to the file, and
// it only ever makes a run trust the state it could have read anyway.
const (
	stateMagic      = "SLSTATE1"
	stateMarkOffset = 8
	stateKeyIDOff   = 16
	stateSaltOff    = 32
	statePrefixLen  = 64
	stateChunk      = 64 << 10
	stateLastChunk  = 1 << 31
	// stateVersion 2 records which members are the sync's (stateFlagOwned); 1, 0.4.0's,
	// did not, and still reads (stateHeader.Owners false).
	stateVersion   = 2
	stateVersionV1 = 1
	stateTagEntry  = 1
	stateTagEnd    = 0
)

// The status codes of an entry; another status is written out after stateStatusOther.
const (
	stateStatusSubscribed   = 0
	stateStatusUnsubscribed = 1
	stateStatusOther        = 2
	stateFlagUnknown        = 1 << 4
	stateFlagOwned          = 1 << 5 // the sync brought the member, or its source named it
)

const statusSubscribed = "Subscribed"

// errStateOtherAccount is the reading of a state sealed under another API key.
var errStateOtherAccount = errors.New("written for another account (another API key)")

// stateHeader binds a state to what it describes.
type stateHeader struct {
	BaseURL  string
	ListID   int
	Mapping  uint64       // mappingHash of the mapping the values were hashed through
	LastFull time.Time    // when the members were last read whole
	Owners   bool         // the entries say which members are the sync's (not in a 0.4.0 state)
	Activity activityBase // the list's activity as last read, for the next run's drift (version 2)
}

// activityBase is what the list's activity chart (Chart.ListActivity) counted from a day
// on, as a run read it and then changed it: the next run counts the subscriptions and
// unsubscriptions since by the difference.
type activityBase struct {
	From         string // the first day counted, YYYY-MM-DD; "" when none was read
	Subs, Unsubs uint64 // the subscriptions and unsubscriptions counted from From on
}

// stateEntry is a member of the list, as a state keeps it.
type stateEntry struct {
	ID      int    // subscriber ID; 0 when unknown (an address this sync added)
	Email   string // the address, normalised and lower-cased
	Status  string // the SubscriptionStatus
	Values  uint64 // valuesHash of the mapped fields' values, in mapping order
	Unknown bool   // the outcome of this run's change to it is unknown: read it back before deciding
	Owned   bool   // the sync's: it added the member, or its source named it (UnsubscribeMissing may remove it)
}

// keyDeriver derives a state's keys from the account's API key without holding the key:
// (*sendloop.Client).DeriveKey, HKDF-SHA256 of the key with salt and info (one block, as
// 0.4.0 derived them itself).
type keyDeriver func(salt []byte, info string) []byte

// stateKeyID names the API key in the clear: a state sealed under another key is told
// from a damaged one without trying it. It is derived, not the key's hash.
func stateKeyID(keys keyDeriver) []byte {
	return keys([]byte("sendloop sync state"), "key id")[:16]
}

// stateAEAD returns the cipher of a file with salt.
func stateAEAD(keys keyDeriver, salt []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(keys(salt, "sendloop sync state: file key"))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// chunkAD returns the additional data of chunk i.
func chunkAD(prefix []byte, i uint64, last bool) []byte {
	ad := make([]byte, 0, statePrefixLen+9)
	ad = append(ad, prefix[:stateMarkOffset]...)
	ad = append(ad, prefix[stateKeyIDOff:statePrefixLen]...)
	ad = binary.BigEndian.AppendUint64(ad, i)
	if last {
		return append(ad, 1)
	}
	return append(ad, 0)
}

func chunkNonce(n []byte, i uint64) []byte {
	clear(n)
	binary.BigEndian.PutUint64(n[len(n)-8:], i)
	return n
}

// sealWriter seals what is written to it, a chunk at a time.
type sealWriter struct {
	w      io.Writer
	aead   cipher.AEAD
	prefix []byte
	buf    []byte
	out    []byte
	nonce  []byte
	i      uint64
}

func (s *sealWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		k := min(len(b), stateChunk-len(s.buf))
		s.buf = append(s.buf, b[:k]...)
		b = b[k:]
		if len(s.buf) == stateChunk {
			if err := s.flush(false); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// flush seals the chunk held; the last one may be empty.
func (s *sealWriter) flush(last bool) error {
	s.out = s.out[:4]
	s.out = s.aead.Seal(s.out, chunkNonce(s.nonce, s.i), s.buf, chunkAD(s.prefix, s.i, last))
	size := uint32(len(s.out) - 4)
	if last {
		size |= stateLastChunk
	}
	binary.BigEndian.PutUint32(s.out, size)
	s.i++
	s.buf = s.buf[:0]
	_, err := s.w.Write(s.out)
	return err
}

// openReader opens the chunks read from r.
type openReader struct {
	r      io.Reader
	aead   cipher.AEAD
	prefix []byte
	nonce  []byte
	sealed []byte
	plain  []byte // plain[pos:] is left to read
	pos    int
	i      uint64
	last   bool
}

// errStateDamaged is a state that does not open: damaged, cut off, or tampered with.
var errStateDamaged = errors.New("damaged or cut off")

func (o *openReader) Read(b []byte) (int, error) {
	for o.pos == len(o.plain) {
		if o.last {
			return 0, io.EOF
		}
		var size [4]byte
		if _, err := io.ReadFull(o.r, size[:]); err != nil {
			return 0, errStateDamaged // cut off before the last chunk
		}
		n := binary.BigEndian.Uint32(size[:])
		last := n&stateLastChunk != 0
		n &^= stateLastChunk
		if n < uint32(o.aead.Overhead()) || n > stateChunk+uint32(o.aead.Overhead()) {
			return 0, errStateDamaged
		}
		o.sealed = append(o.sealed[:0], make([]byte, n)...)
		if _, err := io.ReadFull(o.r, o.sealed); err != nil {
			return 0, errStateDamaged
		}
		plain, err := o.aead.Open(o.plain[:0], chunkNonce(o.nonce, o.i), o.sealed, chunkAD(o.prefix, o.i, last))
		if err != nil {
			return 0, errStateDamaged
		}
		o.plain, o.pos, o.last = plain, 0, last
		o.i++
		if last {
			var one [1]byte
			if n, _ := o.r.Read(one[:]); n > 0 {
				return 0, errStateDamaged // bytes after the last chunk
			}
		}
	}
	n := copy(b, o.plain[o.pos:])
	o.pos += n
	return n, nil
}

// stateWriter writes a state to a new version in its store; commit makes it the state.
type stateWriter struct {
	sink  stateSink
	bw    *bufio.Writer
	seal  *sealWriter
	z     *flate.Writer
	enc   *bufio.Writer
	tmp   []byte
	count int
	subs  int
}

// createState starts writing a state for h in the file at path, sealed under keys.
func createState(path string, keys keyDeriver, h stateHeader) (*stateWriter, error) {
	return createStateIn(fileStore{path: path, sync: true}, keys, h)
}

// createStateIn starts writing a state for h in store, sealed under keys.
func createStateIn(store stateStore, keys keyDeriver, h stateHeader) (*stateWriter, error) {
	sink, err := store.create()
	if err != nil {
		return nil, fmt.Errorf("writing the state: %w", err)
	}
	prefix := make([]byte, statePrefixLen)
	copy(prefix, stateMagic)
	copy(prefix[stateKeyIDOff:], stateKeyID(keys))
	if _, err := rand.Read(prefix[stateSaltOff:]); err != nil {
		sink.abort()
		return nil, err
	}
	aead, err := stateAEAD(keys, prefix[stateSaltOff:])
	if err != nil {
		sink.abort()
		return nil, err
	}
	w := &stateWriter{sink: sink, bw: bufio.NewWriterSize(sink, 64<<10)}
	w.bw.Write(prefix)
	w.seal = &sealWriter{w: w.bw, aead: aead, prefix: prefix, buf: make([]byte, 0, stateChunk),
		out: make([]byte, 4, stateChunk+4+aead.Overhead()), nonce: make([]byte, aead.NonceSize())}
	w.z, _ = flate.NewWriter(w.seal, flate.BestSpeed) // 22 bytes a member at 1M, against 20.7 at best, for a third of the CPU
	w.enc = bufio.NewWriterSize(w.z, 32<<10)
	version := uint64(stateVersion)
	if !h.Owners {
		version = stateVersionV1 // a state without owners is 0.4.0's format (tests write one)
	}
	b := binary.AppendUvarint(nil, version)
	b = appendString(b, h.BaseURL)
	b = binary.AppendUvarint(b, uint64(h.ListID))
	b = binary.LittleEndian.AppendUint64(b, h.Mapping)
	b = binary.AppendVarint(b, h.LastFull.UnixNano())
	if version == stateVersion {
		b = appendString(b, h.Activity.From)
		b = binary.AppendUvarint(b, h.Activity.Subs)
		b = binary.AppendUvarint(b, h.Activity.Unsubs)
	}
	w.enc.Write(b)
	return w, nil
}

// add writes an entry.
func (w *stateWriter) add(e stateEntry) error {
	b := append(w.tmp[:0], stateTagEntry)
	code := byte(stateStatusOther)
	switch e.Status {
	case statusSubscribed:
		code = stateStatusSubscribed
		w.subs++
	case statusUnsubscribed:
		code = stateStatusUnsubscribed
	}
	if e.Unknown {
		code |= stateFlagUnknown
	}
	if e.Owned {
		code |= stateFlagOwned
	}
	b = append(b, code)
	if code&^(stateFlagUnknown|stateFlagOwned) == stateStatusOther {
		b = appendString(b, e.Status)
	}
	b = binary.AppendUvarint(b, uint64(e.ID))
	b = appendString(b, e.Email)
	b = binary.LittleEndian.AppendUint64(b, e.Values)
	w.tmp = b
	w.count++
	_, err := w.enc.Write(b)
	return err
}

// commit ends the state and makes it the store's.
func (w *stateWriter) commit() error {
	b := append(w.tmp[:0], stateTagEnd)
	b = binary.AppendUvarint(b, uint64(w.count))
	b = binary.AppendUvarint(b, uint64(w.subs))
	err := errors.Join(func() error { _, err := w.enc.Write(b); return err }(), w.enc.Flush(), w.z.Close())
	if err == nil {
		err = w.seal.flush(true)
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		w.sink.abort()
		return fmt.Errorf("writing the state: %w", err)
	}
	if err := w.sink.commit(); err != nil {
		return fmt.Errorf("writing the state: %w", err)
	}
	return nil
}

// abort forgets what was written.
func (w *stateWriter) abort() { w.sink.abort() }

// stateReader reads a state as a stream.
type stateReader struct {
	f      io.Closer
	open   *openReader
	in     *bufio.Reader
	header stateHeader
	inUse  bool
	count  int
	subs   int
	str    []byte
	done   bool
}

// readStateFile opens the state in the file at path under keys, and reads its header.
func readStateFile(path string, keys keyDeriver) (*stateReader, error) {
	return readStateIn(fileStore{path: path}, keys)
}

// readStateIn opens the state of store under keys, and reads its header; an error
// matching fs.ErrNotExist when the store holds none.
func readStateIn(store stateStore, keys keyDeriver) (*stateReader, error) {
	f, err := store.open()
	if err != nil {
		return nil, err
	}
	r, err := readState(f, keys)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// readState reads a state's prefix and header from src.
func readState(src io.Reader, keys keyDeriver) (*stateReader, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	prefix := make([]byte, statePrefixLen)
	if _, err := io.ReadFull(br, prefix); err != nil || string(prefix[:len(stateMagic)]) != stateMagic {
		return nil, errors.New("not a sync state")
	}
	if !hmac.Equal(prefix[stateKeyIDOff:stateSaltOff], stateKeyID(keys)) {
		return nil, errStateOtherAccount
	}
	aead, err := stateAEAD(keys, prefix[stateSaltOff:])
	if err != nil {
		return nil, err
	}
	open := &openReader{r: br, aead: aead, prefix: prefix, nonce: make([]byte, aead.NonceSize())}
	r := &stateReader{open: open, inUse: prefix[stateMarkOffset] != 0, in: bufio.NewReaderSize(flate.NewReader(open), 32<<10)}
	v, err := binary.ReadUvarint(r.in)
	if err != nil {
		return nil, r.damaged(err)
	}
	if v != stateVersion && v != stateVersionV1 {
		return nil, fmt.Errorf("written by another version of the format (%d)", v)
	}
	r.header.Owners = v == stateVersion
	if r.header.BaseURL, err = r.string(); err != nil {
		return nil, err
	}
	id, err := binary.ReadUvarint(r.in)
	if err != nil || id > math.MaxInt32 {
		return nil, r.damaged(err)
	}
	r.header.ListID = int(id)
	var m [8]byte
	if _, err := io.ReadFull(r.in, m[:]); err != nil {
		return nil, r.damaged(err)
	}
	r.header.Mapping = binary.LittleEndian.Uint64(m[:])
	t, err := binary.ReadVarint(r.in)
	if err != nil {
		return nil, r.damaged(err)
	}
	r.header.LastFull = time.Unix(0, t)
	if r.header.Owners {
		if r.header.Activity.From, err = r.string(); err != nil {
			return nil, err
		}
		s, err1 := binary.ReadUvarint(r.in)
		u, err2 := binary.ReadUvarint(r.in)
		if err := errors.Join(err1, err2); err != nil {
			return nil, r.damaged(err)
		}
		r.header.Activity.Subs, r.header.Activity.Unsubs = s, u
	}
	return r, nil
}

// damaged says what went wrong in a reading of a state.
func (r *stateReader) damaged(err error) error {
	if errors.Is(err, errStateDamaged) {
		return err
	}
	return errStateDamaged
}

// maxStateString bounds a string of a state: an address or a status.
const maxStateString = 4096

func (r *stateReader) string() (string, error) {
	n, err := binary.ReadUvarint(r.in)
	if err != nil || n > maxStateString {
		return "", r.damaged(err)
	}
	if uint64(cap(r.str)) < n {
		r.str = make([]byte, n, max(n, 64))
	}
	r.str = r.str[:n]
	if _, err := io.ReadFull(r.in, r.str); err != nil {
		return "", r.damaged(err)
	}
	return string(r.str), nil
}

// next returns the next entry; io.EOF after the last, once the end is checked whole.
func (r *stateReader) next() (stateEntry, error) {
	if r.done {
		return stateEntry{}, io.EOF
	}
	tag, err := r.in.ReadByte()
	if err != nil {
		return stateEntry{}, r.damaged(err)
	}
	switch tag {
	case stateTagEnd:
		count, err1 := binary.ReadUvarint(r.in)
		subs, err2 := binary.ReadUvarint(r.in)
		if err := errors.Join(err1, err2); err != nil || count != uint64(r.count) || subs != uint64(r.subs) {
			return stateEntry{}, r.damaged(err)
		}
		if _, err := r.in.ReadByte(); !errors.Is(err, io.EOF) {
			return stateEntry{}, r.damaged(err) // bytes after the end, or a seal that does not open
		}
		// The compressed stream ends before its last chunk may have been read: the rest
		// must be that chunk, empty, or a cut-off file would pass.
		if n, err := io.Copy(io.Discard, r.open); n > 0 || err != nil || !r.open.last {
			return stateEntry{}, errStateDamaged
		}
		r.done = true
		return stateEntry{}, io.EOF
	case stateTagEntry:
	default:
		return stateEntry{}, errStateDamaged
	}
	var e stateEntry
	code, err := r.in.ReadByte()
	if err != nil {
		return stateEntry{}, r.damaged(err)
	}
	e.Unknown = code&stateFlagUnknown != 0
	e.Owned = code&stateFlagOwned != 0 && r.header.Owners
	switch code &^ (stateFlagUnknown | stateFlagOwned) {
	case stateStatusSubscribed:
		e.Status = statusSubscribed
		r.subs++
	case stateStatusUnsubscribed:
		e.Status = statusUnsubscribed
	case stateStatusOther:
		if e.Status, err = r.string(); err != nil {
			return stateEntry{}, err
		}
	default:
		return stateEntry{}, errStateDamaged
	}
	id, err := binary.ReadUvarint(r.in)
	if err != nil || id > math.MaxInt32 {
		return stateEntry{}, r.damaged(err)
	}
	e.ID = int(id)
	if e.Email, err = r.string(); err != nil {
		return stateEntry{}, err
	}
	var v [8]byte
	if _, err := io.ReadFull(r.in, v[:]); err != nil {
		return stateEntry{}, r.damaged(err)
	}
	e.Values = binary.LittleEndian.Uint64(v[:])
	r.count++
	return e, nil
}

// close closes the file.
func (r *stateReader) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// markStateInUse sets the in-use mark of the state in the file at path, and syncs it.
func markStateInUse(path string, sync bool) error { return fileStore{path: path, sync: sync}.mark(1) }

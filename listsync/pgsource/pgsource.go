// Package pgsource reads a sync's rows from a PostgreSQL query, on github.com/jackc/pgx/v5:
// the rows of `sendloop sync --query`. It is a package of its own so that the PostgreSQL
// driver is in the build of those who use it only.
//
// The query's columns map as a CSV header does: the address column by any usual spelling
// of EmailAddress (email, "Email Address", …), the others by the name of the list's
// custom field (or its key CustomField<id>), a column named SubscriptionStatus counting
// only the rows whose status is Subscribed; Options.Header's Columns and Ignore rename and
// skip columns as --column and --ignore-column do. Values are PostgreSQL's text form of
// each column (what COPY and psql write: a boolean is t or f, a timestamp follows the
// session's DateStyle and TimeZone; cast in the query for another form), NULL is empty.
//
// # Same rows, same order
//
// A sync reads its source once to plan and again to apply, and a query without ORDER BY
// may return its rows in another order on each execution (PostgreSQL's synchronized scans
// start a table scan where another scan is), even inside one REPEATABLE READ snapshot.
// So the query runs once: the first reading streams its rows from the database and writes
// them, as it yields them, to a spill file (mode 0600, in Options.TempDir, unlinked at once
// where the OS allows, so that no personal data is left behind); every later
// reading replays that file. The plan and the apply therefore see the very same rows in
// the very same order, with or without ORDER BY, and memory stays flat whatever the row
// count (rows are streamed, never collected). A first reading that stops early (the sync
// was interrupted while planning) discards its partial file and closes the connection;
// the next reading runs the query again.
//
// The session is read-only (default_transaction_read_only): a sync's source query never
// writes.
//
// # Secrets
//
// The database's address is the caller's (the CLI reads it from SENDLOOP_SOURCE_URL, never
// a flag): errors never hold its password, in any spelling of the address.
package pgsource

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/internal/columns"
)

// Options tunes a Query.
type Options struct {
	// Header maps the query's columns as HeaderOptions maps a CSV header's: Columns and
	// Ignore; IgnoreUnknown and KeepSpaces are refused (select only the columns to sync).
	Header listsync.HeaderOptions
	// TempDir is the folder of the spill file the first reading writes; "" is os.TempDir().
	TempDir string
}

// Query is a PostgreSQL query whose rows are a sync's source. New makes one without any
// I/O; Source connects and learns the query's columns; Close releases the connection and
// removes the spill file.
type Query struct {
	url   string
	query string
	opts  Options

	mu        sync.Mutex
	conn      *pgconn.PgConn
	layout    *columns.Layout
	names     []string
	src       listsync.Source
	spill     *os.File // the spill file, once a first reading completed
	spillSize int64    // its bytes
	spillPath string   // its path while it has one (where an open file cannot be removed)
	rows      int      // rows in the spill file
	reading   bool     // a first reading holds the connection
	closed    bool
}

// New returns a Query of query on the database at databaseURL (a postgres:// URL or a
// key=value connection string, as pgx reads them). It does no I/O.
func New(databaseURL, query string, opts Options) (*Query, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("pgsource: the query is empty")
	}
	if strings.TrimSpace(databaseURL) == "" {
		return nil, errors.New("pgsource: no database address")
	}
	return &Query{url: databaseURL, query: query, opts: opts}, nil
}

// Source connects to the database, asks it for the query's columns (the query is prepared,
// not run), maps them (an error names what is wrong: no address column, a column given
// twice, a --column naming no column) and returns the rows as a listsync.Source. The
// query runs at the source's first reading. Calling Source again returns the same source.
func (q *Query) Source(ctx context.Context) (listsync.Source, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, errors.New("pgsource: the query is closed")
	}
	if q.src != nil {
		return q.src, nil
	}
	conn, err := q.connect(ctx)
	if err != nil {
		return nil, err
	}
	sd, err := conn.Prepare(ctx, "", q.query, nil)
	if err != nil {
		return nil, q.wrap("preparing the query", err)
	}
	names := make([]string, len(sd.Fields))
	for i, f := range sd.Fields {
		names[i] = f.Name
	}
	layout, err := columns.Map(names, q.opts.Header)
	if err != nil {
		return nil, &ColumnsError{Columns: names, msg: err.Error()}
	}
	q.names, q.layout = names, layout
	q.src = listsync.RowFunc(layout.Fields, q.read)
	return q.src, nil
}

// Columns returns the query's column names, once Source has learnt them.
func (q *Query) Columns() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.names...)
}

// Layout says which column holds the address and which the fields, once Source has mapped
// them: the address column's index, and for each field key its column's index.
func (q *Query) Layout() (email int, fields []string, cols []int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.layout.Parts()
}

// Rows returns how many rows the query returned, once a reading has gone through them all
// (0 before).
func (q *Query) Rows() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rows
}

// Close closes the connection and removes the spill file. The source reads no more.
func (q *Query) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	var errs []error
	if q.conn != nil {
		if err := q.conn.Close(context.Background()); err != nil {
			errs = append(errs, q.wrap("closing the connection", err))
		}
		q.conn = nil
	}
	if q.spill != nil {
		q.spill.Close()
		if q.spillPath != "" {
			if err := os.Remove(q.spillPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		q.spill, q.spillPath = nil, ""
	}
	return errors.Join(errs...)
}

// ColumnsError says why the query's columns do not map to a sync's rows: a usage error.
type ColumnsError struct {
	// Columns are the query's column names.
	Columns []string
	msg     string
}

// Error says what is wrong with the columns, and names them.
func (e *ColumnsError) Error() string {
	quoted := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("the query's columns (%s): %s", strings.Join(quoted, ", "), e.msg)
}

// connect opens the connection, read-only, if none is open. q.mu is held.
func (q *Query) connect(ctx context.Context) (*pgconn.PgConn, error) {
	if q.conn != nil {
		return q.conn, nil
	}
	cfg, err := pgconn.ParseConfig(q.url)
	if err != nil {
		return nil, q.wrap("reading the database address", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.RuntimeParams["application_name"] = "sendloop sync"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, q.wrap("connecting to the database", err)
	}
	q.conn = conn
	return conn, nil
}

// read yields the query's rows: from the database the first time, from the spill after.
func (q *Query) read(ctx context.Context) iter.Seq2[listsync.Row, error] {
	return func(yield func(listsync.Row, error) bool) {
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			yield(listsync.Row{}, errors.New("pgsource: the query is closed"))
			return
		case q.spill != nil:
			f, size := q.spill, q.spillSize
			q.mu.Unlock()
			q.replay(f, size, yield)
			return
		case q.reading:
			q.mu.Unlock()
			yield(listsync.Row{}, errors.New("pgsource: the query is being read already: a second reading waits for the first to end"))
			return
		}
		q.reading = true
		conn, err := q.connect(ctx)
		q.mu.Unlock()
		defer func() {
			q.mu.Lock()
			q.reading = false
			q.mu.Unlock()
		}()
		if err != nil {
			yield(listsync.Row{}, err)
			return
		}
		q.first(ctx, conn, yield)
	}
}

// first runs the query, writing each row to a new spill file as it yields it. When every
// row was read, the spill becomes the source of every later reading.
func (q *Query) first(ctx context.Context, conn *pgconn.PgConn, yield func(listsync.Row, error) bool) {
	f, err := os.CreateTemp(q.opts.TempDir, "sendloop-query-*.rows")
	if err != nil {
		yield(listsync.Row{}, fmt.Errorf("pgsource: the spill file: %w", err))
		return
	}
	// Unlinked at once where the OS allows (an open file keeps its data): the rows, personal
	// data, are never left behind, not even by a process killed.
	unlinked := os.Remove(f.Name()) == nil
	complete := false
	defer func() {
		if !complete {
			f.Close()
			if !unlinked {
				os.Remove(f.Name())
			}
		}
	}()
	w := bufio.NewWriterSize(f, 256<<10)
	var size int64
	rr := conn.ExecParams(ctx, q.query, nil, nil, nil, []int16{textFormat})
	if got := len(rr.FieldDescriptions()); got != len(q.names) && got != 0 {
		rr.Close()
		yield(listsync.Row{}, fmt.Errorf("pgsource: the query returned %d columns, %d when prepared", got, len(q.names)))
		return
	}
	l := q.layout
	var payload, head []byte
	n := 0
	fields := make(map[string]string, len(l.Fields))
	for rr.NextRow() {
		vals := rr.Values()
		payload = appendValue(payload[:0], vals[l.Email])
		for _, c := range l.Columns {
			payload = appendValue(payload, vals[c])
		}
		head = binary.AppendUvarint(head[:0], uint64(len(payload)))
		if _, err := w.Write(head); err != nil {
			q.abandon(rr)
			yield(listsync.Row{}, fmt.Errorf("pgsource: the spill file: %w", err))
			return
		}
		size += int64(len(head) + len(payload))
		if _, err := w.Write(payload); err != nil {
			q.abandon(rr)
			yield(listsync.Row{}, fmt.Errorf("pgsource: the spill file: %w", err))
			return
		}
		n++
		row, err := decodeRecord(string(payload), l.Fields, fields)
		if err != nil {
			q.abandon(rr)
			yield(listsync.Row{}, err)
			return
		}
		if !yield(row, nil) {
			q.abandon(rr)
			return
		}
	}
	if _, err := rr.Close(); err != nil {
		yield(listsync.Row{}, q.wrap("running the query", err))
		return
	}
	if err := w.Flush(); err != nil {
		yield(listsync.Row{}, fmt.Errorf("pgsource: the spill file: %w", err))
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return // the deferred clean-up removes the file
	}
	complete = true
	q.spill, q.spillSize, q.rows = f, size, n
	if !unlinked {
		q.spillPath = f.Name()
	}
}

// abandon ends a query stopped before its last row: closing the connection is quicker than
// reading the rows left (a million, say), and the next reading connects again.
func (q *Query) abandon(rr *pgconn.ResultReader) {
	q.mu.Lock()
	conn := q.conn
	q.conn = nil
	q.mu.Unlock()
	if conn != nil {
		conn.Close(context.Background())
	}
	_ = rr
}

// replay yields the rows of a complete spill file.
func (q *Query) replay(f *os.File, size int64, yield func(listsync.Row, error) bool) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)
	l := q.layout
	var scratch []byte
	fields := make(map[string]string, len(l.Fields))
	for {
		payload, err := readValue(r, &scratch)
		if errors.Is(err, io.EOF) {
			return
		}
		var row listsync.Row
		if err == nil {
			row, err = decodeRecord(payload, l.Fields, fields)
		}
		if err != nil {
			yield(listsync.Row{}, fmt.Errorf("pgsource: the spill file is damaged: %w", err))
			return
		}
		if !yield(row, nil) {
			return
		}
	}
}

// decodeRecord reads a record's values (the address, then the fields), each a substring
// of rec: one allocation per row. The map is the pass's own, emptied and filled again for
// each row: listsync reads a row's fields before it asks for the next row, and a million
// rows would otherwise make a million maps for the collector.
func decodeRecord(rec string, keys []string, fields map[string]string) (listsync.Row, error) {
	next := func() (string, bool) {
		n, k := uvarint(rec)
		if k <= 0 || uint64(len(rec)-k) < n {
			return "", false
		}
		v := rec[k : k+int(n)]
		rec = rec[k+int(n):]
		return v, true
	}
	email, ok := next()
	if !ok {
		return listsync.Row{}, errors.New("pgsource: a spill record is cut short")
	}
	clear(fields)
	for _, key := range keys {
		v, ok := next()
		if !ok {
			return listsync.Row{}, errors.New("pgsource: a spill record is cut short")
		}
		fields[key] = v
	}
	return listsync.Row{Email: email, Fields: fields}, nil
}

// uvarint is binary.Uvarint of a string, without converting it.
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// appendValue writes a value as its length and its bytes (NULL as empty).
func appendValue(buf, v []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	return append(buf, v...)
}

// readValue reads a value appendValue wrote.
func readValue(r *bufio.Reader, scratch *[]byte) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > 1<<30 {
		return "", fmt.Errorf("a value of %d bytes", n)
	}
	if cap(*scratch) < int(n) {
		*scratch = make([]byte, n)
	}
	b := (*scratch)[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return "", io.ErrUnexpectedEOF
	}
	return string(b), nil
}

// Error is an error of the database or the driver, its text with the address's password
// removed. Errors.As finds the server's *pgconn.PgError (whose text never holds the
// address) and the context's error through it.
type Error struct {
	msg   string
	cause error // a *pgconn.PgError, a context error, or nil
}

// Error returns the redacted text.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the server's error or the context's, never the driver's own (whose
// configuration holds the password).
func (e *Error) Unwrap() error { return e.cause }

// wrap redacts err's text for what was being done.
func (q *Query) wrap(doing string, err error) error {
	e := &Error{msg: "pgsource: " + doing + ": " + Redact(err.Error(), q.url)}
	var pg *pgconn.PgError
	switch {
	case errors.As(err, &pg):
		e.cause = pg
	case errors.Is(err, context.Canceled):
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		e.cause = context.DeadlineExceeded
	}
	return e
}

// Redact removes from text the password of the database address databaseURL, in each form
// it may take there (as written, URL-decoded, URL-encoded), and any password=… it holds.
func Redact(text, databaseURL string) string { return pgschema.RedactText(text, databaseURL) }

// textFormat asks the server for every column in its text form.
const textFormat int16 = 0

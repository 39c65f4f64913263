package pgstate

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/statetest"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func pool(t *testing.T, dbURL string) *pgxpool.Pool {
	t.Helper()
	p, err := Connect(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

func open(t *testing.T, db *pgxpool.Pool, name string) *Store {
	t.Helper()
	s, err := Open(testContext(t), db, name)
	require.NoError(t, err)
	return s
}

// TestConformance runs the state stores' suite against the database: each run opens the
// state through a pool of its own, as a run on another runner would, so that nothing but
// the database is shared.
func TestConformance(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	statetest.Run(t, statetest.Store{Options: func(t *testing.T, name string) listsync.StateOptions {
		name = t.Name() + "/" + name
		return listsync.StateOptions{Path: name, Store: open(t, pool(t, dbURL), name)}
	}})
}

// TestStoreReadWriteMark: what a run asks of the store, one call at a time.
func TestStoreReadWriteMark(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	db := pool(t, pgtest.URL(t))
	s := open(t, db, "list-12")
	assert.Equal(t, "list-12", s.Name())

	steps := []struct {
		name  string
		do    func() error
		state []byte // nil: none
		inUse bool
	}{
		{name: "no state yet"},
		{name: "a mark with no state does nothing", do: func() error { return s.Mark(ctx, true) }},
		{name: "written", do: func() error { return s.Write(ctx, []byte("SLSTATE1\x00one")) }, state: []byte("SLSTATE1\x00one")},
		{name: "marked in use", do: func() error { return s.Mark(ctx, true) }, state: []byte("SLSTATE1\x00one"), inUse: true},
		{name: "a write clears the mark", do: func() error { return s.Write(ctx, []byte("SLSTATE1\x00two")) }, state: []byte("SLSTATE1\x00two")},
		{name: "marked and cleared", do: func() error { return errors.Join(s.Mark(ctx, true), s.Mark(ctx, false)) }, state: []byte("SLSTATE1\x00two")},
		{name: "empty bytes are a state", do: func() error { return s.Write(ctx, []byte{}) }, state: []byte{}},
	}
	for _, st := range steps { // in order: each step reads what the ones before left
		if st.do != nil {
			require.NoError(t, st.do(), st.name)
		}
		got, inUse, err := s.Read(ctx)
		if st.state == nil {
			require.ErrorIs(t, err, fs.ErrNotExist, st.name)
			continue
		}
		require.NoError(t, err, st.name)
		assert.Equal(t, st.state, append([]byte{}, got...), st.name)
		assert.Equal(t, st.inUse, inUse, st.name)
	}
	other := open(t, db, "list-13")
	_, _, err := other.Read(ctx)
	require.ErrorIs(t, err, fs.ErrNotExist, "states are kept by name")

	require.NoError(t, Delete(ctx, db, "list-12"))
	_, _, err = s.Read(ctx)
	require.ErrorIs(t, err, fs.ErrNotExist, "deleted")
}

// TestLock: one run at a time holds a state, whichever pool (process, runner) it runs
// from; a lock ends with its holder's unlock or its connection.
func TestLock(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	dbURL := pgtest.URL(t)
	a, b := open(t, pool(t, dbURL), "nightly"), open(t, pool(t, dbURL), "nightly")

	held := map[string]func(){} // released before the pools close, which wait for them
	t.Cleanup(func() {
		for _, u := range held {
			u()
		}
	})
	unlock, err := a.Lock(ctx)
	require.NoError(t, err)
	held["a"] = unlock
	_, err = b.Lock(ctx)
	require.ErrorIs(t, err, listsync.ErrStateInUse, "another runner")
	_, err = a.Lock(ctx)
	require.ErrorIs(t, err, listsync.ErrStateInUse, "another run of the same process")
	unlockOther, err := open(t, b.db, "weekly").Lock(ctx)
	require.NoError(t, err, "another state")
	unlockOther()
	unlockOther, err = open(t, pool(t, pgtest.URL(t)), "nightly").Lock(ctx)
	require.NoError(t, err, "the same name in another schema (another application's search_path)")
	unlockOther()

	delete(held, "a")
	unlock()
	unlock, err = b.Lock(ctx)
	require.NoError(t, err, "released by unlock")
	held["b"] = unlock

	// A holder that dies releases it: its connection ends.
	var pid int
	conns := b.db.Stat().AcquiredConns()
	require.Equal(t, int32(1), conns, "the lock holds one connection")
	key := uint64(b.key)
	require.NoError(t, a.db.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
		AND classid = $1::bigint::oid AND objid = $2::bigint::oid`, int64(key>>32), int64(key&0xffffffff)).Scan(&pid))
	var killed bool
	require.NoError(t, a.db.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&killed))
	require.True(t, killed)
	require.Eventually(t, func() bool {
		u, err := a.Lock(ctx)
		if err != nil {
			return false
		}
		u()
		return true
	}, 10*time.Second, 10*time.Millisecond, "the lock of a connection that ended")
	delete(held, "b")
	unlock() // its connection is gone: closed, not returned to the pool
}

// TestMigrations: the table goes into the search_path's first schema, once; a schema
// newer than this release is refused, saying so.
func TestMigrations(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	db := pool(t, pgtest.URL(t))
	require.NoError(t, Migrate(ctx, db))
	require.NoError(t, Migrate(ctx, db), "again: nothing to do")
	var table *string
	require.NoError(t, db.QueryRow(ctx, `SELECT to_regclass(current_schema() || '.sendloop_sync_states')::text`).Scan(&table))
	require.NotNil(t, table, "in the search_path's first schema")
	var version int
	require.NoError(t, db.QueryRow(ctx, `SELECT version FROM sendloop_schema_versions WHERE component = 'sync state'`).Scan(&version))
	assert.Equal(t, schema.Latest(), version)

	_, err := db.Exec(ctx, `UPDATE sendloop_schema_versions SET version = 99 WHERE component = 'sync state'`)
	require.NoError(t, err)
	_, err = Open(ctx, db, "nightly")
	var tooNew *pgschema.TooNewError
	require.ErrorAs(t, err, &tooNew)
	assert.Equal(t, 99, tooNew.Found)
	assert.Contains(t, err.Error(), "sync state schema is version 99")
}

// TestPasswordNeverInErrors: a URL that cannot be read, and a database that cannot be
// reached, fail without the password.
func TestPasswordNeverInErrors(t *testing.T) {
	t.Parallel()
	const password = "pw-marker-7Hq2"
	tests := []struct {
		name string
		url  string
	}{
		{name: "unreachable", url: "postgres://sendloop:" + password + "@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"},
		{name: "unreadable", url: "postgres://sendloop:" + password + "@[::1"},
		{name: "keywords", url: "host=127.0.0.1 port=1 password=" + password + " connect_timeout=2"},
		{name: "escaped", url: "postgres://sendloop:" + url.QueryEscape(password+"/#") + "@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			db, err := Connect(ctx, tt.url)
			if err == nil {
				defer db.Close()
				_, err = Open(ctx, db, "nightly")
				if err == nil {
					_, err = (&Store{db: db, name: "nightly"}).Lock(ctx)
				}
			}
			require.Error(t, err)
			assert.NotContains(t, err.Error(), password)
			assert.NotContains(t, err.Error(), url.QueryEscape(password+"/#"))
		})
	}
}

// TestStateInTheDatabaseIsSealed: the row holds the state as the file would, encrypted (no
// address in clear), and a row damaged in the database makes the run a full one, as a
// damaged file does: the seal's checks are listsync's, on the bytes.
func TestStateInTheDatabaseIsSealed(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	db := pool(t, pgtest.URL(t))
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL),
		sendloop.WithHTTPClient(&http.Client{Transport: testkit.Transport()}))
	require.NoError(t, err)
	list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Nightly", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	rows := []listsync.Row{{Email: "ann@example.com"}, {Email: "bob@example.com"}}
	sync := func() listsync.StateUse {
		so := listsync.DefaultStateOptions("nightly")
		so.Store = open(t, db, "nightly")
		jb, err := listsync.New(ctx, c, list, listsync.Rows(rows), listsync.Options{State: &so, TempDir: t.TempDir()})
		require.NoError(t, err)
		defer jb.Close()
		pl, err := jb.Plan(ctx)
		require.NoError(t, err)
		defer pl.Close()
		_, err = pl.Apply(ctx, listsync.ApplyOptions{})
		require.NoError(t, err)
		return pl.State
	}

	tests := []struct {
		name   string
		before string // SQL run on the row first
		want   listsync.StateUse
	}{
		{name: "first run", want: listsync.StateUse{Reason: "no state yet"}},
		{name: "from the state", want: listsync.StateUse{Used: true}},
		{name: "a damaged row", before: `UPDATE sendloop_sync_states SET state = set_byte(state, length(state) - 3, get_byte(state, length(state) - 3) # 1)`,
			want: listsync.StateUse{Reason: "unreadable: damaged or cut off"}},
		{name: "a row cut off", before: `UPDATE sendloop_sync_states SET state = substr(state, 1, length(state) - 20)`,
			want: listsync.StateUse{Reason: "unreadable: damaged or cut off"}},
		{name: "rewritten whole by the full run", want: listsync.StateUse{Used: true}},
	}
	for _, tt := range tests { // in order: each run reads the row the one before left
		if tt.before != "" {
			_, err := db.Exec(ctx, tt.before)
			require.NoError(t, err)
		}
		got := sync()
		got.Drift = 0
		got.NoOwners = false // whether the state records owners is the mirror's concern, not the store's
		assert.Equal(t, tt.want, got, tt.name)
		var raw []byte
		require.NoError(t, db.QueryRow(ctx, `SELECT state FROM sendloop_sync_states WHERE name = 'nightly'`).Scan(&raw))
		for _, plain := range []string{"ann@example.com", "bob@", "example.com"} {
			assert.False(t, bytes.Contains(raw, []byte(plain)), "%s: %s in clear", tt.name, plain)
		}
	}
}

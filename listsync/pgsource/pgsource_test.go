package pgsource_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/pgsource"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// databaseURL is the test database's address, or skips the test.
func databaseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("SENDLOOP_TEST_DATABASE_URL")
	if u == "" {
		t.Skip("SENDLOOP_TEST_DATABASE_URL is unset: no PostgreSQL to test against (.ci/run starts one)")
	}
	return u
}

// testSchema creates a schema of the test's own, dropped at its end, and returns an admin
// connection and the schema's name.
func testSchema(t *testing.T, ctx context.Context, url string) (*pgconn.PgConn, string) {
	t.Helper()
	conn, err := pgconn.Connect(ctx, url)
	require.NoError(t, err)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "pgsource_" + hex.EncodeToString(b)
	exec(t, ctx, conn, "CREATE SCHEMA "+schema)
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE").ReadAll()
		conn.Close(context.Background())
	})
	return conn, schema
}

func exec(t *testing.T, ctx context.Context, conn *pgconn.PgConn, sql string) {
	t.Helper()
	_, err := conn.Exec(ctx, sql).ReadAll()
	require.NoError(t, err, sql)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// fakeList starts a fake holding an empty list with the fields First name and Plan.
func fakeList(t *testing.T, ctx context.Context) (*sendlooptest.Server, *sendloop.Client, int) {
	t.Helper()
	srv := sendlooptest.NewServer(t, sendlooptest.WithRequestLog(-1)) // every request: a run's calls are counted
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Users", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	for _, name := range []string{"First name", "Plan"} {
		_, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: name})
		require.NoError(t, err)
	}
	return srv, c, list
}

// sync plans and applies src into list, and returns the plan's counts and the result.
func sync(t *testing.T, ctx context.Context, c *sendloop.Client, list int, src listsync.Source, state ...string) (adds, updates, unsubscribes, rejected int, res *listsync.Result) {
	t.Helper()
	opts := listsync.Options{UnsubscribeMissing: true}
	if len(state) > 0 {
		so := listsync.DefaultStateOptions(state[0])
		opts.State = &so
	}
	sj, err := listsync.New(ctx, c, list, src, opts)
	require.NoError(t, err)
	plan, err := sj.Plan(ctx)
	require.NoError(t, err)
	defer plan.Close()
	res, err = plan.Apply(ctx, listsync.ApplyOptions{MaxUnsubscribe: job.Unlimited(), BatchSize: 1000})
	require.NoError(t, err)
	return plan.Adds, plan.Updates, plan.Unsubscribes, plan.Rejected, res
}

func newQuery(t *testing.T, url, query string, opts pgsource.Options) *pgsource.Query {
	t.Helper()
	opts.TempDir = t.TempDir()
	q, err := pgsource.New(url, query, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, q.Close()) })
	return q
}

// A 100,000-row table synced into a list, changed in the database, and synced again: the
// second sync changes exactly what the database changed.
func TestSyncsATableThenItsChanges(t *testing.T) {
	t.Parallel()
	url := databaseURL(t)
	ctx := testContext(t)
	conn, schema := testSchema(t, ctx, url)
	const n = 100_000
	exec(t, ctx, conn, fmt.Sprintf(`CREATE TABLE %[1]s.users AS
		SELECT 'user' || lpad(i::text, 6, '0') || '@example.com' AS email, 'Name ' || i AS first_name,
			CASE WHEN i %% 3 = 0 THEN 'pro' ELSE 'free' END AS plan
		FROM generate_series(1, %[2]d) AS i`, schema, n))
	query := fmt.Sprintf(`SELECT email, first_name AS "First name", plan FROM %s.users`, schema)
	srv, c, list := fakeList(t, ctx)
	state := filepath.Join(t.TempDir(), "users.state")

	adds, updates, unsubscribes, rejected, res := sync(t, ctx, c, list, source(t, ctx, newQuery(t, url, query, pgsource.Options{})), state)
	assert.Equal(t, []int{n, 0, 0, 0}, []int{adds, updates, unsubscribes, rejected})
	assert.Equal(t, n, res.Adds.Done)

	exec(t, ctx, conn, fmt.Sprintf(`UPDATE %s.users SET plan = 'team' WHERE email < 'user000101@'`, schema)) // 100 rows
	exec(t, ctx, conn, fmt.Sprintf(`DELETE FROM %s.users WHERE email >= 'user099951@'`, schema))             // 50 rows
	exec(t, ctx, conn, fmt.Sprintf(`INSERT INTO %s.users SELECT 'new' || i || '@example.com', 'New', 'free' FROM generate_series(1, 25) AS i`, schema))

	// The second night, from the state: calls for the changes, no walk of the members.
	calls, browses := len(srv.Requests()), srv.Executions("subscriber.browse")
	adds, updates, unsubscribes, rejected, res = sync(t, ctx, c, list, source(t, ctx, newQuery(t, url, query, pgsource.Options{})), state)
	assert.Equal(t, []int{25, 100, 50, 0}, []int{adds, updates, unsubscribes, rejected})
	assert.Equal(t, []int{25, 100, 50}, []int{res.Adds.Done, res.Updates.Done, res.Unsubscribes.Done})
	assert.Equal(t, browses, srv.Executions("subscriber.browse"), "the state run walks no members")
	assert.Less(t, len(srv.Requests())-calls, 2*(25+100+50)+20, "the state run's calls grow with the changes, not the list")

	adds, updates, unsubscribes, _, _ = sync(t, ctx, c, list, source(t, ctx, newQuery(t, url, query, pgsource.Options{})), state)
	assert.Equal(t, []int{0, 0, 0}, []int{adds, updates, unsubscribes}, "a third sync of unchanged data changes nothing")
}

func source(t *testing.T, ctx context.Context, q *pgsource.Query) listsync.Source {
	t.Helper()
	src, err := q.Source(ctx)
	require.NoError(t, err)
	return src
}

// A query without ORDER BY whose table changes (rows, and their physical order) between
// the plan and the apply: the apply reads the rows the plan read, in its order, so every
// planned change is made as planned and no row counts as changed.
func TestTheApplyReadsTheRowsThePlanRead(t *testing.T) {
	t.Parallel()
	url := databaseURL(t)
	ctx := testContext(t)
	conn, schema := testSchema(t, ctx, url)
	exec(t, ctx, conn, fmt.Sprintf(`CREATE TABLE %[1]s.users AS
		SELECT 'user' || i || '@example.com' AS email, 'free' AS plan FROM generate_series(1, 5000) AS i`, schema))
	srv, c, list := fakeList(t, ctx)
	q := newQuery(t, url, fmt.Sprintf(`SELECT email, plan FROM %s.users`, schema), pgsource.Options{})

	sj, err := listsync.New(ctx, c, list, source(t, ctx, q), listsync.Options{})
	require.NoError(t, err)
	plan, err := sj.Plan(ctx)
	require.NoError(t, err)
	defer plan.Close()
	require.Equal(t, 5000, plan.Adds)
	assert.Equal(t, 5000, q.Rows())

	// Every tuple moves (an UPDATE writes new ones), half the rows go, new ones come.
	exec(t, ctx, conn, fmt.Sprintf(`UPDATE %s.users SET plan = 'pro'`, schema))
	exec(t, ctx, conn, fmt.Sprintf(`DELETE FROM %s.users WHERE length(email) %% 2 = 0`, schema))
	exec(t, ctx, conn, fmt.Sprintf(`INSERT INTO %s.users SELECT 'late' || i || '@example.com', 'pro' FROM generate_series(1, 100) AS i`, schema))

	var rejects []listsync.RowResult
	res, err := plan.Apply(ctx, listsync.ApplyOptions{BatchSize: 500, MaxRejects: job.Unlimited(), OnRow: func(r listsync.RowResult) {
		if r.Fate != job.Done {
			rejects = append(rejects, r)
		}
	}})
	require.NoError(t, err)
	assert.Empty(t, rejects)
	assert.Equal(t, 5000, res.Adds.Done)
	_, late := srv.SubscriberStatus(list, "late1@example.com")
	assert.False(t, late, "a row the plan did not read is not applied")
}

// Columns map as a CSV header's do, values are text, NULL is empty.
func TestColumnsMapAsACSVHeader(t *testing.T) {
	t.Parallel()
	url := databaseURL(t)
	ctx := testContext(t)
	_, c, list := fakeList(t, ctx)
	for _, tc := range []struct {
		name    string
		query   string
		header  listsync.HeaderOptions
		adds    int
		rejects int
		err     string
	}{
		{name: "usual names", query: `SELECT 'a@example.com' AS "E-mail", 'Ann' AS "first name", NULL::text AS "Plan"`, adds: 1},
		{name: "field keys and a status", query: `SELECT 'b@example.com' AS email, 'x' AS "CustomField2", 'Unsubscribed' AS "SubscriptionStatus"`},
		{name: "--column and --ignore-column", query: `SELECT 'c@example.com' AS contact, true AS "Plan", 42 AS extra`,
			header: listsync.HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "contact", Target: "EmailAddress"}}, Ignore: []string{"extra"}}, adds: 1},
		{name: "a bad address is a reject", query: `SELECT 'not an address' AS email`, rejects: 1},
		{name: "no address column", query: `SELECT 'a@example.com' AS who`, err: `no address column`},
		{name: "two address columns", query: `SELECT 'a@example.com' AS email, 'b@example.com' AS "Email Address"`, err: `both hold`},
		{name: "--ignore-column naming nothing", query: `SELECT 'a@example.com' AS email`, header: listsync.HeaderOptions{Ignore: []string{"nope"}}, err: `--ignore-column "nope"`},
		{name: "--ignore-unknown-columns", query: `SELECT 'a@example.com' AS email`, header: listsync.HeaderOptions{IgnoreUnknown: true}, err: `for CSV files`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQuery(t, url, tc.query, pgsource.Options{Header: tc.header})
			src, err := q.Source(ctx)
			if tc.err != "" {
				var cerr *pgsource.ColumnsError
				require.ErrorAs(t, err, &cerr)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			sj, err := listsync.New(ctx, c, list, src, listsync.Options{})
			require.NoError(t, err)
			plan, err := sj.Plan(ctx)
			require.NoError(t, err)
			defer plan.Close()
			assert.Equal(t, tc.adds, plan.Adds)
			assert.Equal(t, tc.rejects, plan.Rejected)
		})
	}
}

// The password of the address never shows in an error: a refused connection, a wrong
// password, an address pgx cannot read.
func TestErrorsNeverHoldThePassword(t *testing.T) {
	t.Parallel()
	const marker = "Secr3t-Marker-pw"
	ctx := testContext(t)
	urls := []string{
		"postgres://sendloop:" + marker + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=sendloop password=" + marker + " sslmode=disable connect_timeout=5",
		"postgres://sendloop:" + marker + "@127.0.0.1:1/db?sslmode=bogus",
		"postgres://sendloop:" + marker + "@[::1/db", // not a URL pgx reads
	}
	if real := os.Getenv("SENDLOOP_TEST_DATABASE_URL"); real != "" {
		// The real server, with the marker as a wrong password.
		i, j := strings.Index(real, "://"), strings.LastIndex(real, "@")
		require.True(t, i >= 0 && j > i)
		user := strings.SplitN(real[i+3:j], ":", 2)[0]
		urls = append(urls, real[:i+3]+user+":"+marker+real[j:])
	}
	for _, u := range urls {
		q, err := pgsource.New(u, "SELECT 1 AS email", pgsource.Options{TempDir: t.TempDir()})
		require.NoError(t, err, "New does no I/O and reads nothing")
		_, err = q.Source(ctx)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), marker)
		assert.NotContains(t, fmt.Sprintf("%+v %#v", err, errors.Unwrap(err)), marker)
		assert.Contains(t, err.Error(), "pgsource:")
		require.NoError(t, q.Close())
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, text, want string }{
		{"postgres://u:p%40ss@h/db", "failed for p@ss and p%40ss", "failed for xxxxx and xxxxx"},
		{"host=h password='a b' user=u", "password='a b' then a b", "password=xxxxx then xxxxx"},
		{"postgres://u@h/db?password=qq1", "no qq1 here", "no xxxxx here"},
		{"postgres://u@h/db", "nothing to hide", "nothing to hide"},
	} {
		assert.Equal(t, tc.want, pgsource.Redact(tc.text, tc.url), tc.url)
	}
}

// A first reading stopped early leaves no spill file behind, and the next reading runs the
// query again; Close removes the complete spill.
func TestSpillFileLifetime(t *testing.T) {
	t.Parallel()
	url := databaseURL(t)
	ctx := testContext(t)
	dir := t.TempDir()
	q, err := pgsource.New(url, `SELECT 'u' || i || '@example.com' AS email FROM generate_series(1, 1000) AS i`, pgsource.Options{TempDir: dir})
	require.NoError(t, err)
	src, err := q.Source(ctx)
	require.NoError(t, err)
	_, c, list := fakeList(t, ctx)

	stopped, cancel := context.WithCancel(ctx)
	sj, err := listsync.New(ctx, c, list, src, listsync.Options{Progress: func(listsync.PlanProgress) { cancel() }})
	require.NoError(t, err)
	if plan, err := sj.Plan(stopped); err == nil {
		plan.Close()
	}
	cancel()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, files, "no spill file is left behind by a stopped reading")

	sj, err = listsync.New(ctx, c, list, src, listsync.Options{})
	require.NoError(t, err)
	plan, err := sj.Plan(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1000, plan.Adds)
	assert.Equal(t, 1000, q.Rows())
	plan.Close()
	files, _ = filepath.Glob(filepath.Join(dir, "*"))
	if runtime.GOOS != "windows" { // an open file cannot be removed there: Close does
		assert.Empty(t, files, "the spill is unlinked while open")
	}
	require.NoError(t, q.Close())
	files, _ = filepath.Glob(filepath.Join(dir, "*"))
	assert.Empty(t, files)
}

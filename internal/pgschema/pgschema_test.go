package pgschema_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/pgschema"
	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:s3cr%40t@db:5432/x?sslmode=require", "postgres://u:xxxxx@db:5432/x?sslmode=require"},
		{"postgresql://u@db/x?password=s3cret", "postgresql://u@db/x?password=xxxxx"},
		{"host=db user=u password=s3cret dbname=x", "host=db user=u password=xxxxx dbname=x"},
		{"postgres://u@db/x", "postgres://u@db/x"},
		{"s3cret", "(a database URL)"},
		{"postgres://u:s3cret@[::1", "(a database URL)"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got := pgschema.Redact(tc.in)
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "s3cr")
		})
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	base := errors.New("dial postgres://u:p%40ss@db: p@ss refused")
	err := pgschema.Scrub(fmt.Errorf("journal: %w", base), "p@ss")
	assert.NotContains(t, err.Error(), "p@ss")
	assert.NotContains(t, err.Error(), "p%40ss")
	assert.ErrorIs(t, err, base)
	assert.Nil(t, pgschema.Scrub(nil, "x"))
	assert.Same(t, base, pgschema.Scrub(base, ""))
	assert.Contains(t, pgschema.Secrets("postgres://u:p%40ss@db/x"), "p@ss")
	assert.Contains(t, pgschema.Secrets("host=db password='k k'"), "k k")
	assert.Contains(t, pgschema.Secrets("postgres://u:s3cret@[::1"), "s3cret", "an address url.Parse refuses")
	assert.Empty(t, pgschema.Secrets("postgres://u@db/x"))
	assert.Equal(t, "dial: xxxxx refused, password=xxxxx", pgschema.RedactText("dial: p@ss refused, password=p@ss", "postgres://u:p%40ss@db/x"))
}

func component(n int) pgschema.Component {
	c := pgschema.Component{Name: "things"}
	for v := 1; v <= n; v++ {
		c.Migrations = append(c.Migrations, pgschema.Migration{Version: v, SQL: fmt.Sprintf("CREATE TABLE things_v%d (id int)", v)})
	}
	return c
}

func TestEnsure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	before, err := pgschema.Ensure(ctx, pool, component(1))
	require.NoError(t, err)
	assert.Equal(t, 0, before)

	// Many runners at once: one applies version 2, the others find it done.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = pgschema.Ensure(ctx, pool, component(2)) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var tables int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name LIKE 'things_v%'`).Scan(&tables))
	assert.Equal(t, 2, tables, "the tables go into the search_path's schema")

	_, err = pgschema.Ensure(ctx, pool, component(1))
	var tooNew *pgschema.TooNewError
	require.ErrorAs(t, err, &tooNew)
	assert.Equal(t, 2, tooNew.Found)
	assert.Equal(t, 1, tooNew.Known)
	assert.Contains(t, err.Error(), "newer than this release knows")
}

func TestEnsureRefusesBadComponents(t *testing.T) {
	t.Parallel()
	for _, c := range []pgschema.Component{
		{},
		{Name: "gap", Migrations: []pgschema.Migration{{Version: 2, SQL: "SELECT 1"}}},
	} {
		_, err := pgschema.Ensure(context.Background(), nil, c)
		assert.Error(t, err)
	}
}

func TestEnsureRollsBackAFailedMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	bad := component(1)
	bad.Migrations = append(bad.Migrations, pgschema.Migration{Version: 2, SQL: "CREATE TABLE broken ("})
	_, err = pgschema.Ensure(ctx, conn, bad)
	require.ErrorContains(t, err, "migration 2")
	var tables int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema()`).Scan(&tables))
	assert.Zero(t, tables, "nothing of a failed upgrade stays, not even the versions table")
}

// Package pgtest gives tests a PostgreSQL database of their own: a fresh schema in the
// database SENDLOOP_TEST_DATABASE_URL names, first on the URL's search_path, dropped when
// the test ends. Without the variable the test is skipped with a one-line reason; .ci/run
// starts a private cluster and sets it, so that no database test skips there.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the variable that names the tests' database: distinct from every variable a
// user sets, so that a test never writes into a user's journal or state.
const EnvURL = "SENDLOOP_TEST_DATABASE_URL"

// URL returns a URL of the test database whose search_path is a new schema of the test's
// own. It skips the test when EnvURL is unset.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + EnvURL + " (.ci/run starts one)")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connecting to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	return WithSearchPath(t, base, schema)
}

// WithSearchPath returns the URL u with search_path set to schema.
func WithSearchPath(t testing.TB, u, schema string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil || !strings.HasPrefix(parsed.Scheme, "postgres") {
		t.Fatalf("pgtest: %s is not a postgres:// URL", EnvURL)
	}
	q := parsed.Query()
	q.Set("search_path", schema)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

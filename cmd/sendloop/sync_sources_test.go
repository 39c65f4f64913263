package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSyncSourceFlagsRefused(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	dir := t.TempDir()
	jsonl := writeFile(t, dir, "m.jsonl", `{"email":"ann@example.com"}`+"\n")
	csv := writeFile(t, dir, "m.csv", "email\nann@example.com\n")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no address variable", nil, []string{"--query", "SELECT 1"}, "SENDLOOP_SOURCE_URL"},
		{"an empty address variable", []string{"SENDLOOP_SOURCE_URL= "}, []string{"--query", "SELECT 1"}, "SENDLOOP_SOURCE_URL"},
		{"two sources", nil, []string{"--csv", csv, "--jsonl", jsonl}, "give one source"},
		{"no source", nil, nil, "--csv FILE is required (or --jsonl FILE, or --query SQL)"},
		{"jsonl from stdin", nil, []string{"--jsonl", "-"}, "cannot read stdin"},
		{"a CSV flag", nil, []string{"--jsonl", jsonl, "--delimiter", ";"}, "are for --csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := invocation{args: append([]string{"sync", "--list", "1"}, tc.args...), env: append(f.env, tc.env...)}.run(t)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
		})
	}
}

// A JSON Lines file syncs as its CSV twin does: the same plan, then nothing to do.
func TestSyncJSONL(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	dir := t.TempDir()
	jsonl := writeFile(t, dir, "members.jsonl", strings.Join([]string{
		`{"EmailAddress":"ann@example.com","First name":"Ann","Plan":"pro"}`,
		`{"EmailAddress":"Bob@Example.com","First name":"Bob","Plan":"pro"}`,
		`{"EmailAddress":"dan@example.com","First name":"Dan","Plan":null}`,
		`{"EmailAddress":"not-an-address","First name":"X","Plan":"y"}`,
		`{"EmailAddress":"eve@example.com","First name":"Eve"`,
	}, "\n")+"\n")
	csv := writeFile(t, dir, "members.csv", "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nBob@Example.com,Bob,pro\ndan@example.com,Dan,\nnot-an-address,X,y\n\"eve@example.com,Eve\n")
	g, _ := syncFake(t)
	fromCSV := invocation{args: []string{"sync", "--list", "1", "--csv", csv, "--dry-run"}, env: g.env}.run(t)
	fromJSONL := invocation{args: []string{"sync", "--list", "1", "--jsonl", jsonl, "--dry-run"}, env: f.env}.run(t)
	assert.Equal(t, fromCSV.code, fromJSONL.code)
	planned := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "Planned:") {
				return l
			}
		}
		return ""
	}
	require.NotEmpty(t, planned(fromCSV.stdout), fromCSV.stdout)
	assert.Equal(t, planned(fromCSV.stdout), planned(fromJSONL.stdout))
	assert.Contains(t, fromJSONL.stderr, "members.jsonl: address in \"EmailAddress\"")

	r := invocation{args: []string{"sync", "--list", "1", "--jsonl", jsonl}, env: f.env}.run(t)
	assert.Contains(t, r.stderr, "plan: 1 to add, 1 to update")
	assert.Contains(t, r.stderr, "line 5")
	r = invocation{args: []string{"sync", "--list", "1", "--jsonl", jsonl}, env: f.env}.run(t)
	assert.Contains(t, r.stderr, "plan: 0 to add, 0 to update")
}

// --query syncs a table from SENDLOOP_SOURCE_URL, and a wrong password never shows.
func TestSyncQuery(t *testing.T) {
	t.Parallel()
	url := os.Getenv("SENDLOOP_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("SENDLOOP_TEST_DATABASE_URL is unset: no PostgreSQL to test against (.ci/run starts one)")
	}
	ctx := testContext(t)
	conn, err := pgconn.Connect(ctx, url)
	require.NoError(t, err)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "cli_" + hex.EncodeToString(b)
	exec := func(sql string) {
		_, err := conn.Exec(ctx, sql).ReadAll()
		require.NoError(t, err, sql)
	}
	exec("CREATE SCHEMA " + schema)
	t.Cleanup(func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE").ReadAll()
		conn.Close(context.Background())
	})
	exec(`CREATE TABLE ` + schema + `.users AS SELECT 'user' || i || '@example.com' AS email, 'pro' AS plan FROM generate_series(1, 2000) AS i`)
	f, _ := syncFake(t)
	query := `SELECT email, first_name AS "First name", plan AS "Plan" FROM ` + schema + `.users`
	exec(`ALTER TABLE ` + schema + `.users ADD COLUMN first_name text`)

	r := invocation{args: []string{"sync", "--list", "1", "--query", query}, env: append(f.env, "SENDLOOP_SOURCE_URL="+url)}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "plan: 2000 to add")
	assert.Contains(t, r.stdout, "the query")

	exec(`UPDATE ` + schema + `.users SET plan = 'free' WHERE email LIKE 'user1%'`)
	r = invocation{args: []string{"sync", "--list", "1", "--query", query}, env: append(f.env, "SENDLOOP_SOURCE_URL="+url)}.run(t)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "plan: 0 to add, 1111 to update")

	const marker = "Wr0ng-Marker-pw"
	i, j := strings.Index(url, "://"), strings.LastIndex(url, "@")
	user := strings.SplitN(url[i+3:j], ":", 2)[0]
	wrong := url[:i+3] + user + ":" + marker + url[j:]
	r = invocation{args: []string{"sync", "--list", "1", "--query", query}, env: append(f.env, "SENDLOOP_SOURCE_URL="+wrong)}.run(t)
	assert.Equal(t, exitFailure, r.code)
	assert.NotContains(t, r.stdout+r.stderr, marker)
	assert.Contains(t, r.stderr, "--query: pgsource: connecting")
}

package main

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
)

func TestJournalMigrate(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	password, _ := u.User.Password()
	wrong := *u
	wrong.User = url.UserPassword(u.User.Username(), "not-"+password+"-at-all")
	tests := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "creates the tables", env: []string{envJournalURL + "=" + dbURL}, args: []string{"journal", "migrate"}, code: exitOK,
			stdout: []string{"The send journals' tables are ready"}},
		{name: "again: nothing to do", env: []string{envJournalURL + "=" + dbURL}, args: []string{"--json", "journal", "migrate"}, code: exitOK,
			stdout: []string{`"migrated": true`}},
		{name: "the states' table too", env: []string{envJournalURL + "=" + dbURL, envStateURL + "=" + dbURL}, args: []string{"journal", "migrate"}, code: exitOK,
			stdout: []string{"The send journals' tables are ready", "The sync states' table is ready in the database " + envStateURL + " names."}},
		{name: "the states' table alone", env: []string{envStateURL + "=" + dbURL}, args: []string{"--json", "journal", "migrate"}, code: exitOK,
			stdout: []string{`"journals": false`, `"states": true`}},
		{name: "no database", env: nil, args: []string{"journal", "migrate"}, code: exitUsage,
			stderr: []string{envJournalURL + " is not set (nor " + envStateURL + ")"}},
		{name: "a wrong password is not printed", env: []string{envJournalURL + "=" + wrong.String()}, args: []string{"journal", "migrate"}, code: exitUsage,
			stderr: []string{envJournalURL + ":"}},
		{name: "a wrong password of the states' database is not printed", env: []string{envStateURL + "=" + wrong.String()}, args: []string{"journal", "migrate"}, code: exitUsage,
			stderr: []string{envStateURL + ":"}},
		{name: "an unknown subcommand", env: nil, args: []string{"journal", "drop"}, code: exitUsage,
			stderr: []string{"use 'journal migrate'"}},
	}
	for _, tt := range tests { // in order: the second run finds the tables
		r := invocation{args: tt.args, env: tt.env}.run(t)
		expect(t, r, tt.code, tt.stdout, tt.stderr)
		assert.NotContains(t, r.stdout+r.stderr, "not-"+password+"-at-all", tt.name)
		if password != "" {
			assert.NotContains(t, r.stdout+r.stderr, password, tt.name)
		}
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM sendloop_journals`).Scan(&n))
	assert.Zero(t, n, "the tables exist, empty")
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM sendloop_sync_states`).Scan(&n))
	assert.Zero(t, n, "the states' table exists, empty")
}

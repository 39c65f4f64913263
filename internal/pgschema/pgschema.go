// Package pgschema creates and upgrades the PostgreSQL tables of sendloop-go's database
// stores (journals, states, queued sends), and keeps database passwords out of errors.
//
// Each store names a component and lists its migrations, numbered from 1. Ensure applies
// the ones a database lacks, in one transaction under an advisory lock, so that runners
// starting at the same moment do not race; it records the component's version in the
// table sendloop_schema_versions. A database whose version is newer than the binary knows
// is refused with a *TooNewError rather than written by code that cannot read it.
//
// Tables are created without a schema name, so they go into the first schema of the
// connection's search_path: a URL with ?search_path=sendloop (or options=-csearch_path=…)
// keeps them out of an application's own tables.
package pgschema

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Migration is one step of a component's schema.
type Migration struct {
	// Version numbers the step, from 1, without gaps.
	Version int
	// SQL is the step's statements, run in the migration's transaction.
	SQL string
}

// Component is a store's part of the schema: its name and its migrations in order.
type Component struct {
	Name       string
	Migrations []Migration
}

// Latest returns the version the component's last migration reaches.
func (c Component) Latest() int {
	if len(c.Migrations) == 0 {
		return 0
	}
	return c.Migrations[len(c.Migrations)-1].Version
}

// TooNewError refuses a database whose schema a newer release of sendloop-go wrote.
type TooNewError struct {
	Component string
	Found     int // the database's version
	Known     int // the newest version this binary knows
}

// Error says what to do: run a newer sendloop-go.
func (e *TooNewError) Error() string {
	return fmt.Sprintf("the database's %s schema is version %d, newer than this release knows (%d): use the sendloop-go release that wrote it or a newer one",
		e.Component, e.Found, e.Known)
}

// Execer is what Ensure needs of a connection: *pgx.Conn, *pgxpool.Pool and pgx.Tx all
// have it.
type Execer interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// lockKey is the advisory lock every migration of every component takes: one at a time.
const lockKey = 0x73656e646c6f6f70 // "sendloop"

// Ensure brings the component's tables to its latest version and returns the version the
// database was at before. It is safe to call from many processes at once.
func Ensure(ctx context.Context, db Execer, c Component) (before int, err error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s schema: %w", c.Name, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(lockKey)); err != nil {
		return 0, fmt.Errorf("%s schema: lock: %w", c.Name, err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS sendloop_schema_versions (
		component  text PRIMARY KEY,
		version    integer NOT NULL,
		updated_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("%s schema: %w", c.Name, err)
	}
	err = tx.QueryRow(ctx, `SELECT version FROM sendloop_schema_versions WHERE component = $1`, c.Name).Scan(&before)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%s schema: %w", c.Name, err)
	}
	if before > c.Latest() {
		return before, &TooNewError{Component: c.Name, Found: before, Known: c.Latest()}
	}
	for _, m := range c.Migrations {
		if m.Version <= before {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return before, fmt.Errorf("%s schema: migration %d: %w", c.Name, m.Version, err)
		}
	}
	if before < c.Latest() {
		if _, err := tx.Exec(ctx, `INSERT INTO sendloop_schema_versions (component, version) VALUES ($1, $2)
			ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version, updated_at = now()`, c.Name, c.Latest()); err != nil {
			return before, fmt.Errorf("%s schema: %w", c.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return before, fmt.Errorf("%s schema: %w", c.Name, err)
	}
	return before, nil
}

func (c Component) check() error {
	if c.Name == "" {
		return errors.New("pgschema: a component needs a name")
	}
	for i, m := range c.Migrations {
		if m.Version != i+1 {
			return fmt.Errorf("pgschema: %s: migration %d is numbered %d", c.Name, i+1, m.Version)
		}
	}
	return nil
}

// Redact returns the database URL (or key=value connection string) with its password
// replaced by "xxxxx", for messages; text it cannot read comes back as "(a database URL)".
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(a database URL)"
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if !strings.Contains(dsn, "=") {
		return "(a database URL)"
	}
	fields := strings.Fields(dsn)
	for i, f := range fields {
		if k, _, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") {
			fields[i] = k + "=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

// keywordPassword finds password=… in a key=value connection string.
var keywordPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// Secrets returns the spellings of the password a database URL or key=value connection
// string holds, as written, URL-decoded and URL-encoded; also for an address url.Parse
// refuses, which still shows user:password@ to a reader. It returns none for none.
func Secrets(dsn string) []string {
	var secrets []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			secrets = append(secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	if u, err := url.Parse(dsn); err == nil {
		if pw := u.Query().Get("password"); pw != "" {
			secrets = append(secrets, pw, url.QueryEscape(pw))
		}
	}
	for _, m := range keywordPassword.FindAllStringSubmatch(dsn, -1) {
		if pw := strings.Trim(m[1], "'"); pw != "" {
			secrets = append(secrets, pw, m[1])
		}
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if colon := strings.Index(rest[:at], ":"); colon >= 0 && colon+1 < at {
				secrets = append(secrets, rest[colon+1:at])
			}
		}
	}
	return secrets
}

// RedactText returns text without any spelling of dsn's password, nor any password=….
func RedactText(text, dsn string) string {
	for _, s := range Secrets(dsn) {
		text = strings.ReplaceAll(text, s, "xxxxx")
	}
	return keywordPassword.ReplaceAllString(text, "password=xxxxx")
}

// Scrub returns err with every spelling of the secrets (as given, URL-encoded) in its
// text replaced, keeping its chain for errors.Is and errors.As. A nil err, or no secret in
// its text, returns err as it is.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return err
	}
	text := err.Error()
	clean := text
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			clean = strings.ReplaceAll(clean, s, "xxxxx")
		}
	}
	if clean == text {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

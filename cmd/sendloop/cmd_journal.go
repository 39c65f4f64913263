package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
)

// journalCommand manages the tables of the database stores: the send journals of the
// database SENDLOOP_JOURNAL_URL names, and the sync states of SENDLOOP_STATE_URL's. One
// command for both, so that a deployment step has one thing to run.
func journalCommand() *command {
	return &command{
		name:    "journal",
		args:    "migrate",
		summary: "create or upgrade the journals' and the sync states' tables in their databases",
		help: `
'journal migrate' creates the tables of the send journals in the PostgreSQL database that
SENDLOOP_JOURNAL_URL names, and the table of the sync states (sync --state NAME) in the one
SENDLOOP_STATE_URL names, for each variable that is set (postgres://user:password@host/db,
from the environment only; its password is never printed), or upgrades them to this
release's schema. The two may name one database. A send or a sync creates its tables on
first use too: run it where their database user may not create tables, as a deployment
step with a user that may. The tables go into the first schema of the URL's search_path
(?search_path=sendloop keeps them apart from an application's own tables). A database
whose schema is newer than this release knows is refused (exit code 2): upgrade sendloop.
Running it again changes nothing. With --json: {"migrated": true, "journals": BOOL,
"states": BOOL}, saying which tables it made ready.`,
		examples: `SENDLOOP_JOURNAL_URL=postgres://deploy@db.example.com/app?search_path=sendloop sendloop journal migrate
SENDLOOP_STATE_URL=postgres://deploy@db.example.com/app?search_path=sendloop sendloop journal migrate`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) != 1 || args[0] != "migrate" {
					return usagef("journal", "use 'journal migrate'")
				}
				url, journals := a.lookupEnv(envJournalURL)
				journals = journals && strings.TrimSpace(url) != ""
				stateURL, states := a.lookupEnv(envStateURL)
				states = states && strings.TrimSpace(stateURL) != ""
				if !journals && !states {
					return configError("%s is not set (nor %s): export the address of the journals' PostgreSQL database (postgres://user:password@host/db), or the sync states' in %s",
						envJournalURL, envStateURL, envStateURL)
				}
				if journals {
					db, err := pgjournal.Connect(ctx, url)
					if err != nil {
						return configError("%s: %v", envJournalURL, err)
					}
					err = pgjournal.Migrate(ctx, db)
					db.Close()
					if err != nil {
						return configError("%s: %v", envJournalURL, err)
					}
				}
				if _, err := migrateStates(ctx, a); err != nil {
					return err
				}
				if a.json {
					return writeJSON(a.stdout, orderedObject{{"migrated", true}, {"journals", journals}, {"states", states}})
				}
				if journals {
					if _, err := fmt.Fprintf(a.stdout, "The send journals' tables are ready in the database %s names.\n", envJournalURL); err != nil {
						return err
					}
				}
				if states {
					if _, err := fmt.Fprintf(a.stdout, "The sync states' table is ready in the database %s names.\n", envStateURL); err != nil {
						return err
					}
				}
				return nil
			}
		},
	}
}

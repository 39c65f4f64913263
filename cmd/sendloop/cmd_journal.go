package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
)

// journalCommand manages the send journals of the database SENDLOOP_JOURNAL_URL names.
func journalCommand() *command {
	return &command{
		name:    "journal",
		args:    "migrate",
		summary: "create or upgrade the send journals' tables in SENDLOOP_JOURNAL_URL's database",
		help: `
'journal migrate' creates the tables of the send journals in the PostgreSQL database that
SENDLOOP_JOURNAL_URL names (postgres://user:password@host/db, from the environment only;
its password is never printed), or upgrades them to this release's schema. A send creates
them on first use too: run it where the send's database user may not create tables, as a
deployment step with a user that may. The tables go into the first schema of the URL's
search_path (?search_path=sendloop keeps them apart from an application's own tables). A
database whose schema is newer than this release knows is refused (exit code 2): upgrade
sendloop. Running it again changes nothing.`,
		examples: `SENDLOOP_JOURNAL_URL=postgres://deploy@db.example.com/app?search_path=sendloop sendloop journal migrate`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) != 1 || args[0] != "migrate" {
					return usagef("journal", "use 'journal migrate'")
				}
				url, ok := a.lookupEnv(envJournalURL)
				if !ok || strings.TrimSpace(url) == "" {
					return configError("%s is not set: export the address of the journals' PostgreSQL database (postgres://user:password@host/db)", envJournalURL)
				}
				db, err := pgjournal.Connect(ctx, url)
				if err != nil {
					return configError("%s: %v", envJournalURL, err)
				}
				defer db.Close()
				if err := pgjournal.Migrate(ctx, db); err != nil {
					return configError("%s: %v", envJournalURL, err)
				}
				if a.json {
					return writeJSON(a.stdout, orderedObject{{"migrated", true}})
				}
				_, err = fmt.Fprintf(a.stdout, "The send journals' tables are ready in the database %s names.\n", envJournalURL)
				return err
			}
		},
	}
}

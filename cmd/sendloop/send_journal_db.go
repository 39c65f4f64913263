package main

import (
	"context"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/pgjournal"
)

// openJournalStore opens the send's journal in the database SENDLOOP_JOURNAL_URL names,
// under the name --journal gives, or returns nil when the variable is unset (the journal is
// then the file --journal names). The address comes from the environment only, and its
// password never shows in what the command prints.
func openJournalStore(ctx context.Context, a *app, job *mailmerge.Job, l *listOptions) (mailmerge.JournalStore, func(), error) {
	url, ok := a.lookupEnv(envJournalURL)
	if !ok || strings.TrimSpace(url) == "" || l.journal == "" {
		return nil, func() {}, nil
	}
	db, err := pgjournal.Connect(ctx, url)
	if err != nil {
		return nil, nil, configError("%s: %v", envJournalURL, err)
	}
	j, err := pgjournal.Open(ctx, db, l.journal, job.Binding(), pgjournal.Options{ResendUnknown: l.resendUnknown, ResendRefused: l.resendRefused})
	if err != nil {
		db.Close()
		return nil, nil, configError("journal %q in %s: %v", l.journal, envJournalURL, err)
	}
	return j, func() { _ = j.Close(); db.Close() }, nil
}

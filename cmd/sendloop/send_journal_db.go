package main

import (
	"context"
	"errors"
	"iter"
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
	var mismatch *mailmerge.JournalMismatchError
	switch {
	case errors.As(err, &mismatch):
		db.Close()
		return nil, nil, journalChanged(l)
	case err != nil:
		db.Close()
		return nil, nil, configError("journal %q in %s: %v", l.journal, envJournalURL, err)
	}
	return j, func() { _ = j.Close(); db.Close() }, nil
}

// continueFrom is --continue-from as the send reads it: with SENDLOOP_JOURNAL_URL set, the
// name of a journal in that database, unless it starts with "file:" (a file journal, such
// as one a send started on a laptop wrote, continues into the database); else a file.
// It returns the path or name, and the records of a database journal (nil for a file).
func continueFrom(ctx context.Context, a *app, l *listOptions) (string, iter.Seq2[mailmerge.JournalRecord, error], func(), error) {
	old := l.continueFrom
	if path, ok := strings.CutPrefix(old, "file:"); ok {
		return path, nil, func() {}, nil
	}
	url, ok := a.lookupEnv(envJournalURL)
	if old == "" || !ok || strings.TrimSpace(url) == "" {
		return old, nil, func() {}, nil
	}
	db, err := pgjournal.Connect(ctx, url)
	if err != nil {
		return "", nil, nil, configError("%s: %v", envJournalURL, err)
	}
	return old, pgjournal.Records(ctx, db, old), db.Close, nil
}

// readJournalStore reads, without writing, the journal in the database that --journal
// names when SENDLOOP_JOURNAL_URL is set, for a dry run: it refuses a journal of another
// message as the send would, and returns nil records when there is no such journal or
// the journal is a file. Opening the journal would bind its name to this message, which
// the real run may yet correct.
func readJournalStore(ctx context.Context, a *app, job *mailmerge.Job, l *listOptions) (iter.Seq2[mailmerge.JournalRecord, error], func(), error) {
	url, ok := a.lookupEnv(envJournalURL)
	if !ok || strings.TrimSpace(url) == "" || l.journal == "" {
		return nil, func() {}, nil
	}
	db, err := pgjournal.Connect(ctx, url)
	if err != nil {
		return nil, nil, configError("%s: %v", envJournalURL, err)
	}
	fp, err := pgjournal.Fingerprint(ctx, db, l.journal)
	switch {
	case errors.Is(err, pgjournal.ErrNoJournal):
		db.Close()
		return func(func(mailmerge.JournalRecord, error) bool) {}, func() {}, nil
	case err != nil:
		db.Close()
		return nil, nil, configError("journal %q in %s: %v", l.journal, envJournalURL, err)
	case fp != job.Binding().Fingerprint:
		db.Close()
		return nil, nil, journalChanged(l)
	}
	return pgjournal.Records(ctx, db, l.journal), db.Close, nil
}

// journalChanged is the refusal of a database journal written for another message.
func journalChanged(l *listOptions) error {
	return inputf("journal %q in %s's database was written for another message: the subject, a body, a header, --var, --default, --merge-vars or --custom-args changed since. "+
		"If you fixed a mistake after a partial send, keep it and send the corrected message to the rows it does not record: --continue-from %s --journal NEW",
		l.journal, envJournalURL, l.journal)
}

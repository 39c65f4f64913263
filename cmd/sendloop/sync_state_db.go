package main

import (
	"context"
	"strings"

	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/pgstate"
)

// openStateStore puts the state --state names in the database SENDLOOP_STATE_URL names,
// under that name, and returns what closes the database; with the variable unset it does
// nothing (the state is the file --state names). The address comes from the environment
// only, and its password never shows in what the command prints.
func openStateStore(ctx context.Context, a *app, so *listsync.StateOptions) (func(), error) {
	url, ok := a.lookupEnv(envStateURL)
	if !ok || strings.TrimSpace(url) == "" {
		return func() {}, nil
	}
	db, err := pgstate.Connect(ctx, url)
	if err != nil {
		return nil, configError("%s: %v", envStateURL, err)
	}
	st, err := pgstate.Open(ctx, db, so.Path)
	if err != nil {
		db.Close()
		return nil, configError("state %q in %s: %v", so.Path, envStateURL, err)
	}
	so.Store = st
	return db.Close, nil
}

// migrateStates creates or upgrades the sync states' table in the database
// SENDLOOP_STATE_URL names; it reports false when the variable is unset.
func migrateStates(ctx context.Context, a *app) (bool, error) {
	url, ok := a.lookupEnv(envStateURL)
	if !ok || strings.TrimSpace(url) == "" {
		return false, nil
	}
	db, err := pgstate.Connect(ctx, url)
	if err != nil {
		return false, configError("%s: %v", envStateURL, err)
	}
	defer db.Close()
	if err := pgstate.Migrate(ctx, db); err != nil {
		return false, configError("%s: %v", envStateURL, err)
	}
	return true, nil
}

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// TestRun runs the job against the embedded fake: the guard lets one member of ten go.
func TestRun(t *testing.T) {
	t.Setenv(sendloop.EnvAPIKey, "")
	var out strings.Builder
	if err := run(context.Background(), &out, nil); err != nil {
		t.Fatal(err)
	}
	want := `plan: 1 to add, 9 to update, 1 to unsubscribe, 0 unchanged
rejected row 11 "not an address": invalid email address
done: 1 added, 9 updated, 1 unsubscribed; rows: 10 done, 1 rejected or refused, 0 unknown, 0 not attempted; changes not attempted: 0
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

// TestRunNeedsAFileWithAKey: with a key in the environment (a real account's, say) and no
// file given, the job refuses to run instead of syncing that account's list 1 with the demo
// export.
func TestRunNeedsAFileWithAKey(t *testing.T) {
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lists.Create(context.Background(), sendloop.ListCreateParams{Name: "Real", OptInMode: sendloop.OptInSingle}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(sendloop.EnvAPIKey, srv.APIKey)
	t.Setenv(sendloop.EnvBaseURL, srv.URL)
	var out strings.Builder
	if err := run(context.Background(), &out, nil); err == nil {
		t.Errorf("no error; output\n%s", out.String())
	}
	if n := srv.Executions("subscriber.import") + srv.Executions("list.get"); n != 0 {
		t.Errorf("%d calls to the account given by the environment", n)
	}
}

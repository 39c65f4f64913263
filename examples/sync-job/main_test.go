package main

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
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
done: 1 added, 9 updated, 1 unsubscribed; rows: 10 done, 1 failed, 0 not attempted
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

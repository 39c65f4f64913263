package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/listsync"
)

// TestDryRunInterrupted: a dry run stopped by a signal still closes its output: with --json
// a whole document that says it was interrupted and how many changes it listed.
func TestDryRunInterrupted(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "text"}[asJSON], func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, t.TempDir(), "m.csv", "EmailAddress,Plan\nnew1@example.com,a\nbad,b\nnew2@example.com,c\n")
			src, err := listsync.OpenCSV(path, listsync.CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			job, err := listsync.New(testContext(t), apiClient(t, newFake(t)), demoListID, src, listsync.Options{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := job.Plan(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			defer plan.Close()
			m := job.Mapping()
			var stdout bytes.Buffer
			a := &app{env: &env{stdout: &stdout, stderr: io.Discard}, json: asJSON}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			rejects, err := newRejectSink(a, "", info)
			if err != nil {
				t.Fatal(err)
			}
			defer rejects.abort()
			out := &syncOutput{a: a, list: &sendloop.List{ListID: 1}, csvPath: path, dryRun: true, plan: plan, mapping: m, rejects: rejects}
			if err := out.begin(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(&interruptedError{syscall.SIGINT})
			if err := runDryRun(ctx, out, plan, rejects); err == nil || !strings.Contains(err.Error(), "interrupted (SIGINT)") {
				t.Errorf("error %v, want the interruption", err)
			}
			if !asJSON {
				if !strings.Contains(stdout.String(), "Interrupted: 0 of the 2 planned changes listed") {
					t.Errorf("stdout does not say the dry run was interrupted:\n%s", stdout.String())
				}
				return
			}
			var doc struct {
				Interrupted    bool `json:"interrupted"`
				ChangesListed  *int `json:"changes_listed"`
				ChangesPlanned int  `json:"changes_planned"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout.String())
			}
			if !doc.Interrupted || doc.ChangesListed == nil || *doc.ChangesListed != 0 || doc.ChangesPlanned != 2 {
				t.Errorf("document %+v, want interrupted, 0 of 2 changes listed:\n%s", doc, stdout.String())
			}
		})
	}
}

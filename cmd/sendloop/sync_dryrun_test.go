package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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

// TestDryRunQuiet: a dry run of 5,000 additions prints its counts and the first 20 changes,
// about 25 lines; --plan FILE holds every change, and --json too.
func TestDryRunQuiet(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	dir := t.TempDir()
	path := writeFile(t, dir, "big.csv", manyNewRows(5000, 0))
	plan := filepath.Join(dir, "plan.csv")
	r := f.sendloop(t, "sync", "--list", "1", "--csv", path, "--dry-run")
	expect(t, r, exitOK, []string{"Planned: 5000 add, ", "  … and 4980 more additions (--plan FILE lists every change)\n"}, nil)
	if lines := strings.Count(r.stdout, "\n"); lines > 25 {
		t.Errorf("a dry run of 5,000 additions prints %d lines:\n%s", lines, r.stdout)
	}
	if lines := strings.Count(r.stderr, "\n"); lines > 1 {
		t.Errorf("stderr has %d lines:\n%s", lines, r.stderr)
	}

	r = f.sendloop(t, "sync", "--list", "1", "--csv", path, "--dry-run", "--plan", plan)
	expect(t, r, exitOK, []string{"  … and 4980 more additions (all in " + plan + ")\n"}, nil)
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5001 || strings.Join(rows[0], ",") != "action,line,email,subscriber_id,field,field_id,from,to,reason" ||
		strings.Join(rows[5000], ",") != "add,5001,new4999@example.com,,Plan,2,,p4999," {
		t.Errorf("--plan holds %d rows, from %q to %q", len(rows), rows[0], rows[len(rows)-1])
	}

	r = f.sendloop(t, "--json", "sync", "--list", "1", "--csv", path, "--dry-run")
	var doc struct {
		Changes []json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Changes) != 5000 {
		t.Errorf("--json lists %d changes (%v), want 5000", len(doc.Changes), err)
	}
}

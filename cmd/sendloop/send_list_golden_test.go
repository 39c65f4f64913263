package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// The golden corpus of send --recipients in CI: the reject budget, GitHub annotations and
// the step summary. Each case sends a file to the relay of a fake in the test process; what
// the run writes (exit code, stdout, stderr, the step summary) is kept in
// testdata/golden/send_<case>.golden. Run with -update to rewrite them.

// sendListCSV has four good rows (cat is refused by the relay), an invalid address, a
// duplicate and a malformed record.
const sendListCSV = "email,FIRST\n" +
	"ann@example.net,Ann\n" +
	"not-an-address,X\n" +
	"bob@example.net,Bob\n" +
	"cat@example.net,Cat\n" +
	"ANN@example.net,Ann again\n" +
	"dan@example.net,\"Dan\n" +
	"eve@example.net,Eve\n"

// messageIDs are the generated Message-IDs, which differ from run to run.
var messageIDs = regexp.MustCompile(`<[0-9a-f.]+@[^>\s]+>`)

type goldenSendCase struct {
	name    string
	content string
	args    []string
	global  []string
	ciEnv   []string
	faults  []sendlooptest.RelayFault
	reruns  int // runs of the same command before the one recorded
}

var refuseCat = sendlooptest.RelayFault{Command: "RCPT", Recipient: "cat@example.net", Code: 550, Message: "5.1.1 no such user", Times: 10}

var goldenSendCases = []goldenSendCase{
	{name: "budget_default", content: sendListCSV, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_count_holds", content: sendListCSV, args: []string{"--max-rejects", "4"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_count_exceeded_json", content: sendListCSV, args: []string{"--max-rejects", "3"}, global: []string{"--json"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_percent_holds_json", content: sendListCSV, args: []string{"--max-rejects", "50%"}, global: []string{"--json"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_percent_exceeded", content: sendListCSV, args: []string{"--max-rejects", "40%"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_counts_unknown", content: "email\nann@example.net\nbad\n", args: []string{"--max-rejects", "1"},
		faults: []sendlooptest.RelayFault{{Command: "DATA", Drop: true}}},
	{name: "budget_rerun_counts_earlier_failures_json", content: sendListCSV, args: []string{"--max-rejects", "3"}, global: []string{"--json"},
		faults: []sendlooptest.RelayFault{refuseCat}, reruns: 1},
	{name: "budget_bad_value", content: sendListCSV, args: []string{"--max-rejects", "lots"}},
	{name: "github", content: sendListCSV, args: []string{"--max-rejects", "4"}, ciEnv: gitHubEnv, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_json_over_budget", content: sendListCSV, global: []string{"--json"}, ciEnv: gitHubEnv, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_many", content: "email\n" + strings.Repeat("bad\n", 12) + "ann@example.net\n", args: []string{"--max-rejects", "100%"}, ciEnv: gitHubEnv},
	{name: "github_flag_without_actions", content: sendListCSV, args: []string{"--annotations", "github", "--max-rejects", "4"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_annotations_none", content: sendListCSV, args: []string{"--annotations", "none"}, ciEnv: gitHubEnv, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_bad_flag", content: sendListCSV, args: []string{"--annotations", "gitlab"}},
}

// TestSendListGolden runs the corpus.
func TestSendListGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range goldenSendCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			relay, env := relayEnv(t, f)
			for _, fault := range tt.faults {
				relay.InjectFault(fault)
			}
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "list.csv", tt.content)
			text := writeFile(t, dir, "body.txt", "Hi {{FIRST}}")
			args := append(slices.Clone(tt.global), "send", "--from", "news@example.com", "--subject", "News", "--text", text,
				"--recipients", csvPath, "--journal", filepath.Join(dir, "journal"), "--concurrency", "1")
			args = append(args, tt.args...)
			var ciEnv []string
			for _, kv := range tt.ciEnv {
				ciEnv = append(ciEnv, strings.ReplaceAll(kv, "DIR", dir))
			}
			for range tt.reruns {
				invocation{args: args, env: env, dir: dir}.run(t)
			}
			r := invocation{args: args, env: env, ciEnv: ciEnv, dir: dir}.run(t)
			var b strings.Builder
			fmt.Fprintf(&b, "$ sendloop %s\nexit code %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			if content, err := os.ReadFile(filepath.Join(dir, "summary.md")); err == nil {
				fmt.Fprintf(&b, "-- step summary --\n%s", content)
			}
			fmt.Fprintf(&b, "-- relay --\n%s\n", plural(len(relay.Messages()), "message"))
			golden(t, filepath.Join("golden", "send_"+tt.name), messageIDs.ReplaceAllString(b.String(), "<MESSAGE-ID>"), dir, "DIR")
		})
	}
}

// TestSendListExitCode checks the outcome of a run against the budget: rows deferred or not
// attempted fail the run whatever the budget, rejects within it do not.
func TestSendListExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rep     listReport
		budget  string
		wantErr string // "" for success
		note    string
	}{
		{"nothing failed", listReport{Rows: 2, Sent: 2}, "0", "", ""},
		{"a reject over the default", listReport{Rows: 2, Sent: 1, Rejected: 1}, "0", "1 row not sent (refused, unknown or rejected", ""},
		{"rejects within the budget", listReport{Rows: 4, Sent: 1, Rejected: 1, Refused: 1, Unknown: 1}, "3", "", "within --max-rejects 3"},
		{"earlier failures count", listReport{Rows: 4, Sent: 2, Skipped: map[string]int{"refused": 1, "unknown": 1}}, "1", "2 rows not sent (refused, unknown or rejected, in this run or an earlier one), over --max-rejects 1", ""},
		{"deferred fails within the budget", listReport{Rows: 3, Sent: 1, Rejected: 1, Deferred: 1}, "100%", "1 row not sent (deferred or not attempted)", "within --max-rejects 100%"},
		{"not attempted fails", listReport{Rows: 2, Sent: 1, NotAttempted: 1}, "5", "1 row not sent (deferred or not attempted)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			a := &app{env: &env{stderr: &stderr}}
			if tt.rep.Skipped == nil {
				tt.rep.Skipped = map[string]int{}
			}
			budget, err := parseRejectBudget("send", tt.budget)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.rep.err(context.Background(), a, budget.check(tt.rep.rejects(), tt.rep.Rows))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(stderr.String(), tt.note) || (tt.note == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.note)
			}
		})
	}
}

// TestRowListSpills checks that the rows a report lists beyond those kept in memory come
// back from the temporary file, in order.
func TestRowListSpills(t *testing.T) {
	t.Parallel()
	var l rowList
	defer l.close()
	const n = 2*maxRowsInMemory + 5
	for i := range n {
		l.add(listRow{Line: i + 2, Email: fmt.Sprintf("u%d@example.net", i), Reason: "x\ny \"z\""})
	}
	for pass := range 2 { // each can be called again: the file is read from its start
		i := 0
		err := l.each(func(r listRow) error {
			if r.Line != i+2 || r.Email != fmt.Sprintf("u%d@example.net", i) || r.Reason != "x\ny \"z\"" {
				t.Fatalf("pass %d, row %d: %+v", pass, i, r)
			}
			i++
			return nil
		})
		if err != nil || i != n || l.n != n || len(l.mem) != maxRowsInMemory {
			t.Fatalf("pass %d: %d rows, err %v", pass, i, err)
		}
	}
}

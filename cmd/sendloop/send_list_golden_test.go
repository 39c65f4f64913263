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

	sljob "github.com/go-sendloop/sendloop/job"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	reruns  int    // runs of the same command before the one recorded
	body    string // the --text body; "Hi {{FIRST}}" when empty
}

var refuseCat = sendlooptest.RelayFault{Command: "RCPT", Recipient: "cat@example.net", Code: 550, Message: "5.1.1 no such user", Times: 10}

var goldenSendCases = []goldenSendCase{
	{name: "budget_default", content: sendListCSV, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_count_holds", content: sendListCSV, args: []string{"--max-rejects", "4"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_count_exceeded_json", content: sendListCSV, args: []string{"--max-rejects", "3"}, global: []string{"--json"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_percent_holds_json", content: sendListCSV, args: []string{"--max-rejects", "50%"}, global: []string{"--json"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_percent_exceeded", content: sendListCSV, args: []string{"--max-rejects", "40%"}, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "budget_counts_unknown", content: "email\nann@example.net\nbad\n", args: []string{"--max-rejects", "1"}, body: "Hi",
		faults: []sendlooptest.RelayFault{{Command: "DATA", Drop: true}}},
	{name: "unknown_within_max_unknown_json", content: "email\nann@example.net\nbad\n", args: []string{"--max-rejects", "1", "--max-unknown", "1"},
		global: []string{"--json"}, body: "Hi", faults: []sendlooptest.RelayFault{{Command: "DATA", Drop: true}}},
	{name: "tag_typo", content: sendListCSV, body: "Hi {{FRIST}},\nyour code: %CODE%", args: []string{"--var", "PROMO=x"}},
	{name: "tag_unparseable", content: sendListCSV, body: "Hi {{#FIRST}}"},
	{name: "empty_value_rejects", content: "email,FIRST\nann@example.net,Ann\nbob@example.net,\n"},
	{name: "empty_value_allowed", content: "email,FIRST\nann@example.net,Ann\nbob@example.net,\n", args: []string{"--allow-empty", "FIRST"}},
	{name: "empty_value_default", content: "email,FIRST\nann@example.net,Ann\nbob@example.net,\n", args: []string{"--default", "FIRST=friend"}},
	{name: "budget_rerun_counts_earlier_failures_json", content: sendListCSV, args: []string{"--max-rejects", "3"}, global: []string{"--json"},
		faults: []sendlooptest.RelayFault{refuseCat}, reruns: 1},
	{name: "budget_bad_value", content: sendListCSV, args: []string{"--max-rejects", "lots"}},
	{name: "github", content: sendListCSV, args: []string{"--max-rejects", "4"}, ciEnv: gitHubEnv, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_json_over_budget", content: sendListCSV, global: []string{"--json"}, ciEnv: gitHubEnv, faults: []sendlooptest.RelayFault{refuseCat}},
	{name: "github_many", content: "email\n" + strings.Repeat("bad\n", 12) + "ann@example.net\n", args: []string{"--max-rejects", "100%"}, ciEnv: gitHubEnv, body: "Hi"},
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
			body := tt.body
			if body == "" {
				body = "Hi {{FIRST}}"
			}
			text := writeFile(t, dir, "body.txt", body)
			args := append(slices.Clone(tt.global), "send", "--from", "news@example.com", "--subject", "News", "--text", text,
				"--no-unsubscribe", "--recipients", csvPath, "--journal", filepath.Join(dir, "journal"), "--concurrency", "1")
			args = append(args, tt.args...)
			var ciEnv []string
			for _, kv := range tt.ciEnv {
				ciEnv = append(ciEnv, strings.ReplaceAll(kv, "DIR", dir))
			}
			for range tt.reruns {
				invocation{args: args, env: env}.run(t)
			}
			r := invocation{args: args, env: env, ciEnv: ciEnv}.run(t)
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

// TestSendListExitCode checks the outcome of a run against the budgets: rows deferred or not
// attempted fail the run whatever the budget, rejects within it do not, and rows of unknown
// outcome count against --max-unknown only.
func TestSendListExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		res             mailmerge.Result
		budget, unknown string
		wantErr         string // "" for success
		note            string
	}{
		{"nothing failed", mailmerge.Result{Rows: 2, Tally: sljob.Tally{Done: 2}}, "0", "0", "", ""},
		{"a reject over the default", mailmerge.Result{Rows: 2, Tally: sljob.Tally{Done: 1, Rejected: 1}}, "0", "0", "1 row not sent (refused or rejected", ""},
		{"rejects within the budget", mailmerge.Result{Rows: 4, Tally: sljob.Tally{Done: 1, Rejected: 1, Refused: 1, Unknown: 1}}, "2", "1", "", "within --max-rejects 2"},
		{"unknown is not a reject", mailmerge.Result{Rows: 2, Tally: sljob.Tally{Done: 1, Unknown: 1}}, "5", "0", "1 row of unknown outcome", ""},
		{"earlier failures count", mailmerge.Result{Rows: 4, SkippedRefused: 1, SkippedUnknown: 1, Tally: sljob.Tally{Done: 2}}, "0", "0",
			"1 row not sent (refused or rejected, in this run or an earlier one); 1 row of unknown outcome (in this run or an earlier one)", ""},
		{"deferred fails within the budget", mailmerge.Result{Rows: 3, Tally: sljob.Tally{Done: 1, Rejected: 1, Deferred: 1}}, "100%", "0", "1 row not sent (deferred or not attempted)", "within --max-rejects 100%"},
		{"not attempted fails", mailmerge.Result{Rows: 2, Tally: sljob.Tally{Done: 1, NotAttempted: 1}}, "5", "0", "1 row not sent (deferred or not attempted)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr strings.Builder
			a := &app{env: &env{stderr: &stderr}}
			budget, err := parseRejectBudget("send", tt.budget)
			require.NoError(t, err)
			unknown, err := parseUnknownBudget("send", tt.unknown)
			require.NoError(t, err)
			rep := &listReport{Result: &tt.res}
			err = rep.err(context.Background(), a, budget.check(tt.res.Rejects(), tt.res.Rows), unknown.check(tt.res.Unknowns(), tt.res.Rows))
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			}
			if tt.note == "" {
				assert.Empty(t, stderr.String())
			} else {
				assert.Contains(t, stderr.String(), tt.note)
			}
		})
	}
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// The golden corpus of sync: files in every form sync reads, run through the CLI against the
// fake of syncFake; what each run writes (exit code, stdout, stderr, the --rejects file and
// the list afterwards) is kept in testdata/golden/<case>.golden. Run with -update to rewrite
// them. The corpus pins the CLI's behaviour byte for byte.

// utf16Bytes encodes s as UTF-16 (little- or big-endian), with a byte-order mark when bom.
func utf16Bytes(s string, bigEndian, bom bool) string {
	var b bytes.Buffer
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b.WriteByte(byte(u >> 8))
			b.WriteByte(byte(u))
		} else {
			b.WriteByte(byte(u))
			b.WriteByte(byte(u >> 8))
		}
	}
	return b.String()
}

// manyBadRows is a file of n rows with invalid addresses.
func manyBadRows(n int) string {
	var b strings.Builder
	b.WriteString("EmailAddress\n")
	for i := range n {
		fmt.Fprintf(&b, "bad%d\n", i)
	}
	return b.String()
}

// manyNewRows is a file of n new addresses, with a custom field, and bad rows with invalid
// addresses after every tenth.
func manyNewRows(n, bad int) string {
	var b strings.Builder
	b.WriteString("EmailAddress,Plan\n")
	for i := range n {
		fmt.Fprintf(&b, "new%d@example.com,p%d\n", i, i)
		if i%10 == 9 && bad > 0 {
			fmt.Fprintf(&b, "bad%d\n", i)
			bad--
		}
	}
	return b.String()
}

// gitHubEnv is what GitHub Actions sets, with the file inside the workspace.
var gitHubEnv = []string{"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=DIR", "GITHUB_STEP_SUMMARY=DIR/summary.md"}

type goldenSyncCase struct {
	name    string
	content string
	args    []string // after the file's --csv; "REJECTS" and "PLAN" are replaced by paths in the case's directory
	global  []string
	// ciEnv is added to the environment, "DIR" replaced by the case's directory: GitHub
	// Actions' variables.
	ciEnv []string
	// csvName is the file's name in the case's directory (members.csv when empty).
	csvName string
	setup   func(f *fake)
	// interruptAt, when positive, runs sync in-process and ends its context at the request
	// of that command (the first one).
	interruptAt string
	// interruptAfter, when set, holds that request until stderr shows this text: New sends
	// the members' first page beside list.get, and an interruption meant for the plan
	// waits until New has answered (the mapping's note).
	interruptAfter string
}

// shownBuffer is a syncBuffer that closes shown once it holds want.
type shownBuffer struct {
	syncBuffer
	want  string
	shown chan struct{}
	once  sync.Once
}

func (b *shownBuffer) Write(p []byte) (int, error) {
	n, err := b.syncBuffer.Write(p)
	if strings.Contains(b.String(), b.want) {
		b.once.Do(func() { close(b.shown) })
	}
	return n, err
}

var goldenSyncCases = []goldenSyncCase{
	// The header: aliases, keys, names in any case, mappings.
	{name: "aliases_dry_run", content: "E-mail;FIRST NAME;customfield2\nann@example.com;Ann;team\nnew@example.com;New;free\n", args: []string{"--dry-run"}},
	{name: "aliases_dry_run_json", content: "E-mail;FIRST NAME;customfield2\nann@example.com;Ann;team\nnew@example.com;New;free\n", args: []string{"--dry-run"}, global: []string{"--json"}},
	{name: "alias_mail_address", content: " Email Address ,Plan\nANN@example.com, team \n", args: []string{"--dry-run"}},
	{name: "column_mapping", content: "Work e-mail,Tier,Notes\nann@example.com,team,x\nnew@example.com,free,y\n",
		args: []string{"--dry-run", "--column", "Work e-mail=EmailAddress", "--column", "Tier=Plan", "--ignore-column", "Notes"}},
	{name: "ignore_unknown_columns", content: "EmailAddress,Colour,,Plan\nann@example.com,red,,team\n", args: []string{"--dry-run", "--ignore-unknown-columns"}},
	{name: "header_unknown_columns", content: "EmailAddress,Fist name,Colour\nann@example.com,a,b\n"},
	{name: "header_no_address", content: "First name\nAnn\n"},
	{name: "header_twice", content: "EmailAddress,First name,customfield1\n"},
	{name: "header_unnamed", content: "EmailAddress,,Plan\n"},
	{name: "header_empty_file", content: ""},
	{name: "header_malformed", content: "EmailAddress,\"First name\n"},
	{name: "header_bad_column_flag", content: "EmailAddress\nann@example.com\n", args: []string{"--column", "Nope=Plan", "--ignore-column", "Gone"}},
	{name: "header_column_to_unknown", content: "Mail,Tier\nann@example.com,x\n", args: []string{"--column", "Tier=Colour"}},
	{name: "exported_columns", content: "EmailAddress,First name,Plan,SubscriberID,SubscriptionStatus,BounceType\n" +
		"ann@example.com,Ann,team,1,Subscribed,Not Bounced\nnew@example.com,New,free,,Subscribed,\n" +
		"bob@example.com,Bob,vip,2,Unsubscribed,Not Bounced\n", args: []string{"--dry-run", "--unsubscribe-missing", "--max-unsubscribe", "100%"}},

	// Encodings and delimiters.
	{name: "utf8_bom_crlf", content: "\ufeffEmailAddress,Plan\r\nann@example.com,team\r\nzoë@example.com,free\r\n", args: []string{"--dry-run"}},
	{name: "utf16le_bom_tab", content: utf16Bytes("EmailAddress\tFirst name\tPlan\r\nann@example.com\tAnnë\tteam\r\nnew@example.com\tNew\tfree\r\n", false, true), args: []string{"--dry-run"}},
	{name: "utf16be_bom", content: utf16Bytes("EmailAddress,Plan\nnew@example.com,free\n", true, true), args: []string{"--dry-run"}, global: []string{"--json"}},
	{name: "utf16le_no_bom_refused", content: utf16Bytes("EmailAddress,Plan\nnew@example.com,free\n", false, false)},
	{name: "utf16be_no_bom_flag", content: utf16Bytes("EmailAddress,Plan\nnew@example.com,free\n", true, false), args: []string{"--dry-run", "--encoding", "UTF-16BE"}},
	{name: "bom_disagrees", content: utf16Bytes("EmailAddress\nnew@example.com\n", false, true), args: []string{"--encoding", "latin1"}},
	{name: "latin1_refused", content: "EmailAddress,Pr\xe9nom\nann@example.com,Ann\n"},
	{name: "windows1252_refused", content: "EmailAddress,Pr\x80nom\nann@example.com,Ann\n"},
	{name: "latin1_flag", content: "EmailAddress,First name\nann@example.com,Ann\nzoe@example.com,Zo\xeb\n", args: []string{"--dry-run", "--encoding", "iso-8859-1"}},
	{name: "windows1252_flag", content: "EmailAddress,First name\nnew@example.com,\x80uro\n", args: []string{"--dry-run", "--encoding", "cp1252"}},
	{name: "invalid_utf8_row", content: "EmailAddress,First name\nann@example.com,Ann\nzoe@example.com,Zo\xeb\n", args: []string{"--dry-run"}},
	{name: "sep_line_pipe", content: "sep=|\nEmailAddress|Plan\nann@example.com|team\nx|y\n", args: []string{"--dry-run"}},
	{name: "sep_line_quoted_semicolon", content: "\"sep=;\"\r\nEmailAddress;Plan\r\nnew@example.com;free\r\n", args: []string{"--dry-run"}, global: []string{"--json"}},
	{name: "delimiter_flag_tab", content: "EmailAddress\tPlan,x\nnew@example.com\tfree,y\n", args: []string{"--dry-run", "--delimiter", "tab"}},
	{name: "delimiter_detected_semicolon_quoted", content: "\"Email,Address\";Plan\nnew@example.com;free\n", args: []string{"--dry-run", "--column", "Email,Address=EmailAddress"}},

	// Rows: malformed lines, stray commas, rejects.
	{name: "malformed_dry_run", content: "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nb\"ob@example.com,Bob,free\nerin@example.com,Erin\n\nfred@example.com,\"Fred\",x,y\n   \n,Nobody,free\nnew@example.com,\"New\nline\",free\n",
		args: []string{"--dry-run", "--rejects", "REJECTS"}},
	{name: "malformed_json", content: "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nb\"ob@example.com,Bob,free\nerin@example.com,Erin\n", args: []string{"--dry-run"}, global: []string{"--json"}},
	{name: "unterminated_quote_refused", content: "EmailAddress,First name\nann@example.com,Ann\nzed@example.com,\"Zed\nbob@example.com,Bob\n", args: []string{"--unsubscribe-missing"}},
	{name: "unterminated_quote_refused_json", content: "EmailAddress,First name\nann@example.com,Ann\nzed@example.com,\"Zed\nbob@example.com,Bob\n", args: []string{"--unsubscribe-missing"}, global: []string{"--json"}},
	{name: "unterminated_quote_refused_rejects", content: "EmailAddress,First name\nann@example.com,Ann\nzed@example.com,\"Zed\nbob@example.com,Bob\n", args: []string{"--unsubscribe-missing", "--rejects", "REJECTS"}},
	{name: "stray_comma_keeps_member", content: "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nSmith, Bob,bob@example.com,free\ngone@example.com,Gone,\n",
		args: []string{"--unsubscribe-missing", "--concurrency", "1"}},
	{name: "rejects_apply", content: membersCSV, args: []string{"--unsubscribe-missing", "--rejects", "REJECTS", "--concurrency", "1"}},
	{name: "rejects_apply_json", content: membersCSV, args: []string{"--unsubscribe-missing", "--concurrency", "1"}, global: []string{"--json"}},
	{name: "rejects_dry_run_unsubscribe_json", content: membersCSV, args: []string{"--unsubscribe-missing", "--dry-run"}, global: []string{"--json"}},
	{name: "many_rejects_stderr", content: manyBadRows(25)},
	{name: "many_rejects_json", content: manyBadRows(22), global: []string{"--json"}},
	{name: "no_trim", content: "EmailAddress,First name\n  ann@example.com  ,  Ann  \nnew@example.com, New\n", args: []string{"--no-trim", "--concurrency", "1"}},
	{name: "skips", content: "EmailAddress,Plan\ncarol@example.com,vip\nspam@example.com,free\nSPAM@example.com,free\n", global: []string{"--json"}},

	// Applying, and the guards.
	{name: "apply_text", content: "EmailAddress,Plan\nann@example.com,team\nnew@example.com,free\nbob@example.com,free\n", args: []string{"--unsubscribe-missing", "--max-unsubscribe", "1", "--concurrency", "1"}},
	{name: "apply_nothing_to_do", content: "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nbob@example.com,Bob,free\n"},
	{name: "dry_run_no_changes", content: "EmailAddress,First name,Plan\nann@example.com,Ann,pro\nbob@example.com,Bob,free\n", args: []string{"--dry-run"}},
	{name: "guard_default_trips", content: "EmailAddress\nann@example.com\n", args: []string{"--unsubscribe-missing"}},
	{name: "guard_count_trips", content: "EmailAddress\nann@example.com\n", args: []string{"--unsubscribe-missing", "--max-unsubscribe", "1"}, global: []string{"--json"}},
	{name: "guard_percent_holds", content: "EmailAddress\nann@example.com\n", args: []string{"--unsubscribe-missing", "--max-unsubscribe", "67%", "--concurrency", "1"}},
	{name: "guard_bad_value", content: "EmailAddress\nann@example.com\n", args: []string{"--unsubscribe-missing", "--max-unsubscribe", "lots"}},
	{name: "refuses_to_empty_the_list", content: "EmailAddress,Plan\nnot-an-address,x\n", args: []string{"--unsubscribe-missing"}},
	{name: "service_failures_json", content: "EmailAddress,Plan\nann@example.com,team\nx@example.net,free\nnew@example.com,free\nbob@example.com,free\ncarol@example.com,free\n",
		args: []string{"--rejects", "REJECTS", "--unsubscribe-missing", "--max-unsubscribe", "100%", "--batch-size", "1", "--concurrency", "1"}, global: []string{"--json"},
		setup: func(f *fake) {
			f.srv.InjectFault("subscriber.update", sendlooptest.Fault{ErrorCode: 135})
			f.srv.InjectFault("Subscriber.Unsubscribe", sendlooptest.Fault{Status: 500})
			f.srv.InjectFault("subscriber.import", sendlooptest.Fault{ErrorCode: 111})
		}},
	{name: "service_failures_text", content: "EmailAddress,Plan\nann@example.com,team\nx@example.net,free\nnew@example.com,free\n",
		args: []string{"--batch-size", "1", "--concurrency", "1"},
		setup: func(f *fake) {
			f.srv.InjectFault("subscriber.update", sendlooptest.Fault{ErrorCode: 135})
			f.srv.InjectFault("subscriber.import", sendlooptest.Fault{ErrorCode: 111})
		}},

	// Quiet dry runs: the first 20 changes of each kind; --plan writes them all.
	{name: "dry_run_many_changes", content: manyNewRows(45, 3) + "ann@example.com,team\nbob@example.com,team\n", args: []string{"--dry-run", "--unsubscribe-missing", "--max-unsubscribe", "100%"}},
	{name: "dry_run_plan_file", content: membersCSV, args: []string{"--dry-run", "--unsubscribe-missing", "--max-unsubscribe", "100%", "--plan", "PLAN"}},
	{name: "dry_run_plan_stdout", content: "EmailAddress,First name,Plan\nann@example.com,Ann,team\nnew@example.com,,\n", args: []string{"--dry-run", "--plan", "-"}},
	{name: "dry_run_plan_file_json", content: "EmailAddress,Plan\nnew@example.com,free\n", args: []string{"--dry-run", "--plan", "PLAN"}, global: []string{"--json"}},
	{name: "plan_needs_dry_run", content: membersCSV, args: []string{"--plan", "PLAN"}},
	{name: "plan_stdout_json_refused", content: membersCSV, args: []string{"--dry-run", "--plan", "-"}, global: []string{"--json"}},

	// The reject budget: rejected and refused rows, N or N% of the file's rows.
	{name: "budget_count_holds", content: membersCSV, args: []string{"--max-rejects", "5", "--concurrency", "1"}},
	{name: "budget_count_exceeded", content: membersCSV, args: []string{"--max-rejects", "4", "--rejects", "REJECTS", "--concurrency", "1"}},
	{name: "budget_percent_holds_dry_run_json", content: membersCSV, args: []string{"--dry-run", "--max-rejects", "42%"}, global: []string{"--json"}},
	{name: "budget_percent_exceeded_dry_run", content: membersCSV, args: []string{"--dry-run", "--max-rejects", "33%"}},
	{name: "budget_guard_takes_precedence", content: membersCSV, args: []string{"--unsubscribe-missing", "--max-unsubscribe", "0", "--max-rejects", "100%"}},
	{name: "budget_bad_value", content: membersCSV, args: []string{"--max-rejects", "-1"}},
	{name: "budget_counts_refused_rows_json", content: "EmailAddress,Plan\nann@example.com,team\nx@example.net,free\nnew@example.com,free\n",
		args: []string{"--max-rejects", "2", "--batch-size", "1", "--concurrency", "1"}, global: []string{"--json"},
		setup: func(f *fake) {
			f.srv.InjectFault("subscriber.update", sendlooptest.Fault{ErrorCode: 135})
			f.srv.InjectFault("subscriber.import", sendlooptest.Fault{ErrorCode: 111})
		}},

	// GitHub Actions: annotations (10, then a notice) on stderr and a step summary.
	{name: "github_apply", content: membersCSV + manyBadRows(8)[len("EmailAddress\n"):], args: []string{"--max-rejects", "65%", "--concurrency", "1"}, ciEnv: gitHubEnv},
	{name: "github_dry_run_json", content: membersCSV, args: []string{"--dry-run"}, global: []string{"--json"}, ciEnv: gitHubEnv},
	{name: "github_flag_without_actions", content: membersCSV, args: []string{"--dry-run", "--annotations", "github"}},
	{name: "github_annotations_none", content: membersCSV, args: []string{"--dry-run", "--annotations", "none"}, ciEnv: gitHubEnv},
	{name: "github_outside_workspace", content: "EmailAddress\nbad\n", args: []string{"--dry-run"},
		ciEnv: []string{"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=DIR/workspace"}},
	{name: "github_escaped", csvName: "list, v2: 100%.csv", content: "EmailAddress,First name\nb\"ad,x\nzoe@example.com,Zo\xeb\n",
		args: []string{"--dry-run"}, ciEnv: gitHubEnv},
	{name: "github_guard_trips", content: "EmailAddress\nann@example.com\nbad\n", args: []string{"--unsubscribe-missing"}, ciEnv: gitHubEnv},
	{name: "github_bad_flag", content: membersCSV, args: []string{"--annotations", "gitlab"}},

	// Interruption: deterministic points only.
	{name: "interrupted_while_planning", content: membersCSV, interruptAt: "subscriber.browse", interruptAfter: "address in column 1"},
	{name: "interrupted_while_planning_json", content: membersCSV, global: []string{"--json"}, interruptAt: "subscriber.browse", interruptAfter: "address in column 1"},
	{name: "interrupted_at_unsubscribe_json", content: "EmailAddress,Plan\nann@example.com,team\nnew@example.com,free\n",
		args: []string{"--unsubscribe-missing", "--max-unsubscribe", "100%", "--concurrency", "1", "--grace", "10s"}, global: []string{"--json"}, interruptAt: "Subscriber.Unsubscribe"},
}

// TestSyncGolden runs the corpus.
func TestSyncGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range goldenSyncCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f *fake
			var hooked *hookedFake
			if tt.interruptAt != "" {
				hooked = newHookedFake(t)
				f = hooked.fake
				prepareSyncFake(t, f)
			} else {
				f, _ = syncFake(t)
			}
			if tt.setup != nil {
				tt.setup(f)
			}
			dir := t.TempDir()
			csvName := cmp.Or(tt.csvName, "members.csv")
			csvPath := writeFile(t, dir, csvName, tt.content)
			rejects := filepath.Join(dir, "rejects.csv")
			planPath := filepath.Join(dir, "plan.csv")
			args := append(slices.Clone(tt.global), "sync", "--list", "1", "--csv", csvPath)
			for _, a := range tt.args {
				args = append(args, strings.NewReplacer("REJECTS", rejects, "PLAN", planPath).Replace(a))
			}
			var ciEnv []string
			for _, kv := range tt.ciEnv {
				ciEnv = append(ciEnv, strings.ReplaceAll(kv, "DIR", dir))
			}
			var r result
			if hooked != nil {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var stdout bytes.Buffer
				stderr := &shownBuffer{want: tt.interruptAfter, shown: make(chan struct{})}
				if tt.interruptAfter == "" {
					stderr.once.Do(func() { close(stderr.shown) })
				}
				hooked.hook(func(req sendlooptest.Request) {
					if req.Command == tt.interruptAt {
						<-stderr.shown
						cancel()
					}
				})
				vars := map[string]string{envAPIKey: f.srv.APIKey, envBaseURL: f.srv.URL}
				for _, kv := range ciEnv {
					k, v, _ := strings.Cut(kv, "=")
					vars[k] = v
				}
				getenv := func(k string) string { return vars[k] }
				r.code = run(ctx, args, &env{stdout: &stdout, stderr: stderr, getenv: getenv})
				hooked.hook(nil)
				r.stdout, r.stderr = stdout.String(), stderr.String()
			} else {
				r = invocation{args: args, env: f.env, ciEnv: ciEnv}.run(t)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "$ sendloop %s\nexit code %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			if content, err := os.ReadFile(rejects); err == nil {
				fmt.Fprintf(&b, "-- rejects --\n%s", content)
			}
			if content, err := os.ReadFile(planPath); err == nil {
				fmt.Fprintf(&b, "-- plan --\n%s", content)
			}
			if content, err := os.ReadFile(filepath.Join(dir, "summary.md")); err == nil {
				fmt.Fprintf(&b, "-- step summary --\n%s", content)
			}
			fmt.Fprintf(&b, "-- list 1 --\n%s\n", listState(t, f))
			golden(t, filepath.Join("golden", tt.name), b.String(), dir, "DIR")
		})
	}
}

// prepareSyncFake adds to a demo fake what syncFake adds.
func prepareSyncFake(t *testing.T, f *fake) {
	t.Helper()
	c := apiClient(t, f)
	ctx := testContext(t)
	if _, err := c.Subscribers.Import(ctx, demoListID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "gone@example.com"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.Suppress(0, "spam@example.com", "Manual"); err != nil {
		t.Fatal(err)
	}
}

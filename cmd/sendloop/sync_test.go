package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// membersCSV exercises every kind of row against the demo list; the comments say what each
// line is for (line numbers count the header as 1).
const membersCSV = "EmailAddress,First name,Plan\n" +
	"ann@example.com,Ann,pro\n" + // 2: unchanged
	"Bob@Example.com,Bob,pro\n" + // 3: update (free → pro), matched case-insensitively
	"carol@example.com,Carol,pro\n" + // 4: skipped: Carol unsubscribed before
	"dan@example.com,Dan,\n" + // 5: add, without a plan
	"not-an-address,X,y\n" + // 6: rejected: invalid address
	"ann@example.com,Ann,pro\n" + // 7: rejected: duplicate of line 2
	"erin@example.com,Erin\n" + // 8: rejected: two fields
	"eve@example.com,Eve,free\n" + // 9: add
	"EVE@example.com,Eve,free\n" + // 10: rejected: duplicate of line 9
	"spam@example.com,Spam,free\n" + // 11: skipped: suppressed
	",Nobody,free\n" + // 12: rejected: no address
	"zoe@example.com,\"Zoë, the \"\"best\"\"\",pro\n" // 13: add, quoted
// A record the CSV reader cannot parse (a bare quote) is rejected too, but it stops any
// unsubscription: see TestSyncUnreadableRowsBlockUnsubscriptions.

// syncFake is the demo fake plus gone@example.com, a member of list 1 (and of list 2) that
// membersCSV does not name, and spam@example.com on the global suppression list.
func syncFake(t *testing.T) (*fake, *sendloop.Client) {
	t.Helper()
	f := newFake(t)
	c := apiClient(t, f)
	ctx := testContext(t)
	if _, err := c.Subscribers.Import(ctx, demoListID, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "gone@example.com"}}}); err != nil {
		t.Fatal(err)
	}
	other, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Other", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribers.Import(ctx, other, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{{EmailAddress: "gone@example.com"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.Suppress(0, "spam@example.com", "Manual"); err != nil {
		t.Fatal(err)
	}
	return f, c
}

func apiClient(t testing.TB, f *fake) *sendloop.Client {
	t.Helper()
	c, err := sendloop.NewClient(f.srv.APIKey, sendloop.WithBaseURL(f.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writes counts the requests of the commands that change subscribers, v3 and legacy apart
// (Executions does not tell subscriber.unsubscribe from Subscriber.Unsubscribe).
func writes(srv *sendlooptest.Server) string {
	counts := map[string]int{}
	for _, r := range srv.Requests() {
		switch {
		case strings.HasPrefix(r.Path, "/api/v3/subscriber.") && r.Command != "subscriber.browse" && r.Command != "subscriber.get":
			counts["v3 "+r.Command]++
		case r.Path == "/api/index.php":
			counts["legacy "+r.Command]++
		}
	}
	return fmt.Sprint(counts)
}

// v3Requests counts the v3 requests of a command.
func v3Requests(srv *sendlooptest.Server, command string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/api/v3/"+command+"/json" {
			n++
		}
	}
	return n
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSyncDryRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		global []string
		flags  []string
	}{
		{"sync_dry_run", nil, nil},
		{"sync_dry_run_json", []string{"--json"}, nil},
		{"sync_dry_run_unsubscribe", nil, []string{"--unsubscribe-missing"}},
		{"sync_dry_run_unsubscribe_json", []string{"--json"}, []string{"--unsubscribe-missing"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _ := syncFake(t)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "members.csv", membersCSV)
			rejects := filepath.Join(dir, "rejects.csv")
			before := writes(f.srv)
			args := append(tt.global, "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects, "--dry-run")
			r := invocation{args: append(args, tt.flags...), env: f.env}.run(t)
			expect(t, r, exitFailure, nil, []string{"5 rows were rejected (listed in " + rejects + ")"})
			golden(t, tt.name, r.stdout, dir, "DIR")
			golden(t, "sync_rejects", readFile(t, rejects))
			if after := writes(f.srv); after != before {
				t.Errorf("a dry run changed the list: %s, then %s", before, after)
			}
		})
	}
}

func TestSyncApply(t *testing.T) {
	t.Parallel()
	for _, json := range []bool{false, true} {
		name := "sync_apply"
		var global []string
		if json {
			name, global = "sync_apply_json", []string{"--json"}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, c := syncFake(t)
			dir := t.TempDir()
			csvPath := writeFile(t, dir, "members.csv", membersCSV)
			rejects := filepath.Join(dir, "rejects.csv")
			v3Before := v3Requests(f.srv, "subscriber.unsubscribe")
			args := append(global, "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects, "--unsubscribe-missing")
			r := invocation{args: args, env: f.env}.run(t)
			expect(t, r, exitFailure, nil, []string{"5 rows were rejected", "plan: 3 to add, 1 to update, 1 to unsubscribe"})
			golden(t, name, r.stdout, dir, "DIR")
			golden(t, "sync_rejects", readFile(t, rejects))

			want := map[string]string{
				"ann@example.com": "Subscribed", "bob@example.com": "Subscribed", "carol@example.com": "Unsubscribed",
				"dan@example.com": "Subscribed", "eve@example.com": "Subscribed", "zoe@example.com": "Subscribed",
				"gone@example.com": "Unsubscribed",
			}
			for email, status := range want {
				if got, _ := f.srv.SubscriberStatus(1, email); got != status {
					t.Errorf("%s is %q in list 1, want %q", email, got, status)
				}
			}
			for _, email := range []string{"spam@example.com", "not-an-address", "erin@example.com"} {
				if _, ok := f.srv.SubscriberStatus(1, email); ok {
					t.Errorf("%s was added", email)
				}
			}
			if got, _ := f.srv.SubscriberStatus(2, "gone@example.com"); got != "Subscribed" {
				t.Errorf("gone@example.com is %q in list 2: the unsubscription reached another list", got)
			}
			if n := v3Requests(f.srv, "subscriber.unsubscribe"); n != v3Before {
				t.Errorf("subscriber.unsubscribe (every list) was sent %d times", n-v3Before)
			}
			bob, err := c.Subscribers.Get(testContext(t), 1, sendloop.SubscriberGetParams{EmailAddress: "bob@example.com"})
			if err != nil || bob.CustomFields[2] != "pro" {
				t.Errorf("bob: %+v, %v", bob, err)
			}
			zoe, err := c.Subscribers.Get(testContext(t), 1, sendloop.SubscriberGetParams{EmailAddress: "zoe@example.com"})
			if err != nil || zoe.CustomFields[1] != `Zoë, the "best"` || zoe.CustomFields[2] != "pro" {
				t.Errorf("zoe: %+v, %v", zoe, err)
			}

			// The second run plans nothing; the same rows are rejected again.
			before := writes(f.srv)
			r = invocation{args: []string{"--json", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--rejects", rejects}, env: f.env}.run(t)
			expect(t, r, exitFailure, nil, []string{"5 rows were rejected"})
			checkPlan(t, r.stdout, map[string]int{"add": 0, "update": 0, "unsubscribe": 0, "unchanged": 5, "rejected": 5})
			if after := writes(f.srv); after != before {
				t.Errorf("the second run changed the list: %s, then %s", before, after)
			}
		})
	}
}

// checkPlan checks counts of the plan in a --json sync output.
func checkPlan(t *testing.T, out string, want map[string]int) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	plan, _ := doc["plan"].(map[string]any)
	for k, v := range want {
		if got, _ := plan[k].(float64); int(got) != v {
			t.Errorf("plan %s = %v, want %d\n%s", k, plan[k], v, out)
		}
	}
	return doc
}

// TestSyncIdempotent applies a clean file twice: the second run plans nothing and exits 0.
func TestSyncIdempotent(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "clean.csv", "EmailAddress,Plan\nann@example.com,team\nnew@example.com,free\n")
	r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--max-unsubscribe", "2")
	expect(t, r, exitOK, nil, nil)
	checkPlan(t, r.stdout, map[string]int{"add": 1, "update": 1, "unsubscribe": 2, "rejected": 0})
	before := writes(f.srv)
	r = f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--max-unsubscribe", "0")
	expect(t, r, exitOK, nil, nil)
	checkPlan(t, r.stdout, map[string]int{"add": 0, "update": 0, "unsubscribe": 0, "unchanged": 2, "rejected": 0})
	if after := writes(f.srv); after != before {
		t.Errorf("the second run changed the list: %s, then %s", before, after)
	}
	r = f.sendloop(t, "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--dry-run")
	expect(t, r, exitOK, []string{"No changes."}, nil)
}

// TestSyncFormats reads the same rows in the file formats sync accepts.
func TestSyncFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
	}{
		{"comma", "EmailAddress,First name,Plan\nann@example.com,Ann,team\nnew@example.com,New,free\n"},
		{"semicolon with a byte-order mark", "\ufeffEmailAddress;First name;Plan\r\nann@example.com;Ann;team\r\nnew@example.com;New;free\r\n"},
		{"tab", "EmailAddress\tFirst name\tPlan\nann@example.com\tAnn\tteam\nnew@example.com\tNew\tfree\n"},
		{"field keys", "emailaddress,customfield1,CUSTOMFIELD2\nann@example.com,Ann,team\nnew@example.com,New,free\n"},
		{"names in any case, spaced", " Email Address , FIRST NAME ,plan\nann@example.com,Ann,team\nnew@example.com,New,free\n"},
		{"quoted header with delimiters", "\"EmailAddress\";\"First name\";\"Plan\"\n\"ann@example.com\";\"Ann\";\"team\"\n\"new@example.com\";\"New\";\"free\"\n"},
		{"columns in another order", "Plan,Email,First name\nteam,ann@example.com,Ann\nfree,new@example.com,New\n"},
		{"exported columns", "EmailAddress,First name,Plan,SubscriberID,SubscriptionStatus,BounceType\n" +
			"ann@example.com,Ann,team,1,Subscribed,Not Bounced\nnew@example.com,New,free,,Subscribed,\n" +
			"bob@example.com,Bob,vip,2,Unsubscribed,Not Bounced\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			csvPath := writeFile(t, t.TempDir(), "f.csv", tt.content)
			r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--dry-run", "--unsubscribe-missing")
			expect(t, r, exitOK, nil, nil)
			doc := checkPlan(t, r.stdout, map[string]int{"add": 1, "update": 1, "unchanged": 0, "rejected": 0})
			changes := doc["changes"].([]any)
			add, update := changes[0].(map[string]any), changes[1].(map[string]any)
			if add["email"] != "new@example.com" || fmt.Sprint(add["fields"]) != "map[First name:New Plan:free]" &&
				fmt.Sprint(add["fields"]) != "map[FIRST NAME:New plan:free]" && fmt.Sprint(add["fields"]) != "map[CUSTOMFIELD2:free customfield1:New]" {
				t.Errorf("add: %v", add)
			}
			ch := update["changes"].([]any)[0].(map[string]any)
			if update["email"] != "ann@example.com" || ch["field_id"] != 2.0 || ch["from"] != "pro" || ch["to"] != "team" {
				t.Errorf("update: %v", update)
			}
		})
	}
}

// TestSyncExportRoundTrip syncs a list with its own export (nothing to do), then a new
// list with it: only the Subscribed rows are added.
func TestSyncExportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	r := f.sendloop(t, "export", "--list", "1")
	expect(t, r, exitOK, nil, nil)
	csvPath := writeFile(t, dir, "export.csv", r.stdout)

	r = f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing")
	expect(t, r, exitOK, nil, []string{"ignored: SubscriberID, SubscriptionStatus"})
	checkPlan(t, r.stdout, map[string]int{"add": 0, "update": 0, "unsubscribe": 0, "unchanged": 2, "skipped_status": 1})

	c := apiClient(t, f)
	copyID, err := c.Lists.Create(testContext(t), sendloop.ListCreateParams{Name: "Copy", OptInMode: sendloop.OptInSingle})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"First name", "Plan"} {
		if _, err := f.srv.DefineCustomField(copyID, sendlooptest.CustomField{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	r = f.sendloop(t, "sync", "--list", strconv.Itoa(copyID), "--csv", csvPath)
	expect(t, r, exitOK, nil, nil)
	r = f.sendloop(t, "export", "--list", strconv.Itoa(copyID))
	if got := strings.Count(r.stdout, "\n"); got != 3 || !strings.Contains(r.stdout, "ann@example.com,Ann,pro") ||
		!strings.Contains(r.stdout, "bob@example.com,Bob,free") || strings.Contains(r.stdout, "carol") {
		t.Errorf("the copy holds:\n%s", r.stdout)
	}
}

func TestSyncHeaderErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	if _, err := f.srv.DefineCustomField(1, sendlooptest.CustomField{Name: "plan"}); err != nil { // a second "Plan"
		t.Fatal(err)
	}
	tests := []struct {
		name, content string
		stderr        []string
	}{
		{"unknown columns", "EmailAddress,Fist name,Colour\n", []string{`unknown columns "Fist name", "Colour"`, `"First name" (CustomField1)`}},
		{"no address column", "First name\nAnn\n", []string{"no address column"}},
		{"a column twice", "EmailAddress,First name,customfield1\n", []string{`both hold CustomField1`}},
		{"two address columns", "Email,EmailAddress\n", []string{"both hold EmailAddress"}},
		{"ambiguous name", "EmailAddress,Plan\n", []string{`column "Plan" names 2 custom fields (CustomField2, CustomField3)`}},
		{"unnamed column", "EmailAddress,,Plan\n", []string{"column 2 has no name"}},
		{"unknown field key", "EmailAddress,CustomField99\n", []string{`unknown column "CustomField99"`}},
		{"empty file", "", []string{"the CSV file is empty"}},
		{"malformed header", "EmailAddress,\"First name\n", []string{"the header row is malformed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			csvPath := writeFile(t, t.TempDir(), "h.csv", tt.content)
			r := f.sendloop(t, "sync", "--list", "1", "--csv", csvPath)
			expect(t, r, exitUsage, nil, tt.stderr)
			if strings.Contains(r.stderr, "for usage") {
				t.Errorf("a header that does not fit is no usage mistake:\n%s", r.stderr)
			}
		})
	}
}

// TestSyncSkips checks that a sync never subscribes again an address that unsubscribed or
// is suppressed, even when told to add it.
func TestSyncSkips(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	if _, err := f.srv.Suppress(1, "blocked@example.com", "Manual"); err != nil {
		t.Fatal(err)
	}
	csvPath := writeFile(t, t.TempDir(), "s.csv", "EmailAddress,Plan\ncarol@example.com,vip\nblocked@example.com,free\nBLOCKED@example.com,free\n")
	r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath)
	expect(t, r, exitFailure, nil, []string{`rejected line 4 "BLOCKED@example.com": duplicate of line 3`})
	checkPlan(t, r.stdout, map[string]int{"add": 0, "update": 0, "skipped_unsubscribed": 1, "skipped_suppressed": 1, "rejected": 1, "absent": 2})
	if st, _ := f.srv.SubscriberStatus(1, "carol@example.com"); st != "Unsubscribed" {
		t.Errorf("carol is %s", st)
	}
	if _, ok := f.srv.SubscriberStatus(1, "blocked@example.com"); ok {
		t.Error("a suppressed address was added")
	}
}

// TestSyncServiceFailures makes the service refuse a row, an update and an unsubscription.
func TestSyncServiceFailures(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	f.srv.InjectFault("subscriber.update", sendlooptest.Fault{ErrorCode: 135})
	f.srv.InjectFault("Subscriber.Unsubscribe", sendlooptest.Fault{Status: 500})
	dir := t.TempDir()
	// The service refuses the first row it is asked to add (batches of one row, one at a time).
	f.srv.InjectFault("subscriber.import", sendlooptest.Fault{ErrorCode: 111})
	csvPath := writeFile(t, dir, "f.csv", "EmailAddress,Plan\nann@example.com,team\nx@example.net,free\nnew@example.com,free\nbob@example.com,free\ncarol@example.com,free\n")
	rejects := filepath.Join(dir, "rejects.csv")
	r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects, "--unsubscribe-missing", "--batch-size", "1", "--concurrency", "1")
	expect(t, r, exitFailure, nil, []string{"2 rows were rejected", "1 unsubscription failed", "unsubscribing gone@example.com"})
	var doc struct {
		Result syncResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	want := syncResult{Added: 1, AddFailed: 1, UpdateFailed: 1, UnsubscribeFailed: 1, Rejected: 2, RowsDone: 3, RowsFailed: 2}
	if doc.Result != want {
		t.Errorf("result %+v, want %+v", doc.Result, want)
	}
	golden(t, "sync_service_failures_rejects", readFile(t, rejects))
}

// TestSyncRefusesToEmptyTheList: a file naming no subscriber must not unsubscribe everyone.
func TestSyncRefusesToEmptyTheList(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	csvPath := writeFile(t, t.TempDir(), "e.csv", "EmailAddress,Plan\nnot-an-address,x\n")
	before := writes(f.srv)
	r := f.sendloop(t, "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing")
	expect(t, r, exitFailure, nil, []string{"refusing to unsubscribe all 2 members of list 1"})
	if after := writes(f.srv); after != before {
		t.Errorf("changed: %s, then %s", before, after)
	}
}

// TestSyncManyRejectsOnStderr: without --rejects the first rejects are printed.
func TestSyncManyRejectsOnStderr(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	var b strings.Builder
	b.WriteString("EmailAddress\n")
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&b, "bad%d\n", i)
	}
	csvPath := writeFile(t, t.TempDir(), "r.csv", b.String())
	r := f.sendloop(t, "sync", "--list", "1", "--csv", csvPath)
	expect(t, r, exitFailure, nil, []string{`rejected line 21 "bad19": invalid email address`,
		"25 rows were rejected (the first 20 listed above; --rejects FILE keeps them all)"})
	if strings.Contains(r.stderr, "bad20") {
		t.Errorf("more than 20 rejects printed:\n%s", r.stderr)
	}
}

// TestSyncLarge syncs a few thousand rows, a tenth of them repeated, in small batches.
func TestSyncLarge(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("EmailAddress,Plan\n")
	const n = 3000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s,p%d\n", emailN(i), i%7)
		if i%10 == 0 {
			fmt.Fprintf(&b, "%s,p%d\n", strings.ToUpper(emailN(i)), i%7)
		}
	}
	csvPath := writeFile(t, dir, "large.csv", b.String())
	rejects := filepath.Join(dir, "rejects.csv")
	r := f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects,
		"--batch-size", "97", "--concurrency", "3", "--unsubscribe-missing", "--max-unsubscribe", "100%")
	expect(t, r, exitFailure, nil, []string{"300 rows were rejected"})
	checkPlan(t, r.stdout, map[string]int{"rows": n + n/10, "add": n, "unsubscribe": 2, "rejected": n / 10})
	if got := f.srv.SubscriberCount(1); got != n+3 {
		t.Errorf("%d members, want %d", got, n+3)
	}
	if got := strings.Count(readFile(t, rejects), "duplicate of line"); got != n/10 {
		t.Errorf("%d duplicates in the rejects file, want %d", got, n/10)
	}
	r = f.sendloop(t, "--json", "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects, "--unsubscribe-missing")
	checkPlan(t, r.stdout, map[string]int{"add": 0, "update": 0, "unsubscribe": 0, "unchanged": n})
}

// TestSyncUnreadableRowsBlockUnsubscriptions: an unterminated quote swallows the lines after
// it, so the members they name would look absent; nobody may be unsubscribed then.
func TestSyncUnreadableRowsBlockUnsubscriptions(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	before := writes(f.srv)
	for _, tt := range []struct{ content, line string }{
		{"EmailAddress,First name\nann@example.com,Ann\nzed@example.com,\"Zed\nbob@example.com,Bob\n", `line 3 "zed@example.com"`}, // swallows bob's line
		{"EmailAddress,First name\nann@example.com,Ann\nb\"ob@example.com,Bob\n", `line 3 "b\"ob@example.com"`},                    // bob's own line
	} {
		csvPath := writeFile(t, dir, "q.csv", tt.content)
		rejects := filepath.Join(dir, "rejects.csv")
		for _, args := range [][]string{
			{"sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--dry-run"},
			{"sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing"},
			{"--json", "sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing"},
			{"sync", "--list", "1", "--csv", csvPath, "--unsubscribe-missing", "--rejects", rejects},
		} {
			r := f.sendloop(t, args...)
			// The error names the malformed line, so that the file can be fixed.
			expect(t, r, exitFailure, nil, []string{"refusing to unsubscribe anyone", "cannot be read", "nothing was changed"})
			want := tt.line
			if args[0] == "--json" {
				b, _ := json.Marshal(want)
				want = strings.Trim(string(b), `"`)
			}
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%q: stderr does not name %s:\n%s", args, want, r.stderr)
			}
		}
		// --rejects lists the malformed line too.
		if got := readFile(t, rejects); !strings.Contains(got, "\n3,") || !strings.Contains(got, "malformed line") {
			t.Errorf("--rejects holds\n%s\nwant line 3, malformed", got)
		}
	}
	if after := writes(f.srv); after != before {
		t.Errorf("changed: %s, then %s", before, after)
	}
}

// TestFailuresCountsUntracedRows: rows the service refused without a line to show still
// make the run fail, unless the reject budget (which counts them) held.
func TestFailuresCountsUntracedRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		res  syncResult
		held bool
		want string
	}{
		{syncResult{}, false, ""},
		{syncResult{AddUntraced: 2}, false, "the service refused 2 rows that could not be traced to a line"},
		{syncResult{AddUntraced: 2}, true, ""},
		{syncResult{UnsubscribeFailed: 1, AddUntraced: 1}, false, "1 unsubscription failed\nthe service refused 1 row that could not be traced to a line"},
		{syncResult{UnsubscribeFailed: 1, AddUntraced: 1}, true, "1 unsubscription failed"},
	}
	for _, tt := range tests {
		err := failures(&tt.res, tt.held)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("failures(%+v) = %q, want %q", tt.res, got, tt.want)
		}
	}
}

// TestSyncStoppedByAFailureShowsNotAttempted: a failure that stops applying the plan (the
// service refuses every import: an unknown list) leaves changes not attempted; the table
// says so, and does not call the list synced.
func TestSyncStoppedByAFailureShowsNotAttempted(t *testing.T) {
	t.Parallel()
	f, _ := syncFake(t)
	f.srv.InjectFault("subscriber.import", sendlooptest.Fault{ErrorCode: 118, Times: 100})
	csvPath := writeFile(t, t.TempDir(), "f.csv", "EmailAddress,Plan\nann@example.com,team\nnew@example.com,free\n")
	summary := filepath.Join(t.TempDir(), "summary.md")
	r := invocation{args: []string{"sync", "--list", "1", "--csv", csvPath, "--annotations", "github"}, env: f.env,
		ciEnv: []string{"GITHUB_STEP_SUMMARY=" + summary}}.run(t)
	expect(t, r, exitFailure, []string{"NOT ATTEMPTED", "1 not attempted"}, nil)
	if strings.Contains(r.stdout, "Synced") {
		t.Errorf("stdout calls the list synced:\n%s", r.stdout)
	}
	if md := readFile(t, summary); strings.Contains(md, "Synced") || !strings.Contains(md, "1 change not attempted") {
		t.Errorf("the step summary:\n%s", md)
	}
}

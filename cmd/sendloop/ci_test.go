package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRejectBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		max           string
		rejects, rows int
		want          budgetOutcome
	}{
		{"0", 0, 10, budgetOutcome{Max: "0", Allowed: 0, Rejects: 0, Held: true}},
		{"0", 1, 10, budgetOutcome{Max: "0", Allowed: 0, Rejects: 1, Held: false}},
		{"6", 6, 10, budgetOutcome{Max: "6", Allowed: 6, Rejects: 6, Held: true}},
		{"6", 7, 10, budgetOutcome{Max: "6", Allowed: 6, Rejects: 7, Held: false}},
		{"5%", 1, 10, budgetOutcome{Max: "5%", Allowed: 1, Rejects: 1, Held: true}},  // rounded up
		{"5%", 2, 10, budgetOutcome{Max: "5%", Allowed: 1, Rejects: 2, Held: false}}, // 0.5 → 1
		{"5%", 50, 1000, budgetOutcome{Max: "5%", Allowed: 50, Rejects: 50, Held: true}},
		{" 2.5% ", 26, 1000, budgetOutcome{Max: "2.5%", Allowed: 25, Rejects: 26, Held: false}},
		{"0%", 1, 1000, budgetOutcome{Max: "0%", Allowed: 0, Rejects: 1, Held: false}},
		{"100%", 1000, 1000, budgetOutcome{Max: "100%", Allowed: -1, Rejects: 1000, Held: true}},
		{"10%", 0, 0, budgetOutcome{Max: "10%", Allowed: 0, Rejects: 0, Held: true}}, // an empty file
	}
	for _, tt := range tests {
		b, err := parseRejectBudget("sync", tt.max)
		if err != nil {
			t.Fatalf("parseRejectBudget(%q): %v", tt.max, err)
		}
		if got := b.check(tt.rejects, tt.rows); got != tt.want {
			t.Errorf("--max-rejects %s, %d of %d rows: %+v, want %+v", tt.max, tt.rejects, tt.rows, got, tt.want)
		}
	}
	// The zero budget (a syncOutput built without one) is 0, not listsync's default limit.
	if got := (rejectBudget{}).check(1, 100); got.Held || got.Allowed != 0 {
		t.Errorf("zero budget: %+v, want 0 allowed", got)
	}
	for _, bad := range []string{"", "-1", "5%%", "101%", "x", "1.5", "-5%"} {
		if _, err := parseRejectBudget("sync", bad); err == nil {
			t.Errorf("parseRejectBudget(%q): no error", bad)
		} else if code, _ := exitCode(err); code != exitUsage {
			t.Errorf("parseRejectBudget(%q): exit code %d, want %d", bad, code, exitUsage)
		}
	}
}

func TestBudgetDescribe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		o    budgetOutcome
		want string
	}{
		{budgetOutcome{Max: "5", Allowed: 5, Rejects: 3, Held: true}, "within --max-rejects 5"},
		{budgetOutcome{Max: "5", Allowed: 5, Rejects: 6}, "over --max-rejects 5"},
		{budgetOutcome{Max: "5%", Allowed: 2, Rejects: 3}, "over --max-rejects 5%, which allows 2"},
	}
	for _, tt := range tests {
		if got := tt.o.describe(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestWorkflowCommandEscaping(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"dir/a,b: c.csv", "dir/a,b: c.csv", "dir/a%2Cb%3A c.csv"},
		{"%0A", "%250A", "%250A"}, // an escape in the text stays text
		{"::warning::x", "::warning::x", "%3A%3Awarning%3A%3Ax"},
	}
	for _, tt := range tests {
		if got := escapeData(tt.in); got != tt.data {
			t.Errorf("escapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := escapeProperty(tt.in); got != tt.property {
			t.Errorf("escapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
	}
}

// FuzzEscapeProperty: an escaped property holds no character that ends a property or the
// command, and unescapes to the value.
func FuzzEscapeProperty(f *testing.F) {
	for _, s := range []string{"", "a,b:c", "100%", "x\r\ny", "%2C"} {
		f.Add(s)
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	f.Fuzz(func(t *testing.T, s string) {
		p := escapeProperty(s)
		if strings.ContainsAny(p, ",:\r\n") {
			t.Fatalf("escapeProperty(%q) = %q", s, p)
		}
		if got := unescape.Replace(p); got != s {
			t.Fatalf("escapeProperty(%q) = %q, which unescapes to %q", s, p, got)
		}
		if d := escapeData(s); strings.ContainsAny(d, "\r\n") || unescape.Replace(d) != s {
			t.Fatalf("escapeData(%q) = %q", s, d)
		}
	})
}

func TestWorkspacePath(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	tests := []struct{ path, workspace, want string }{
		{filepath.Join(ws, "data", "members.csv"), ws, "data/members.csv"},
		{filepath.Join(ws, "members.csv"), ws + string(filepath.Separator), "members.csv"},
		{filepath.Join(ws, "..", "elsewhere.csv"), ws, filepath.Join(ws, "..", "elsewhere.csv")},
		{filepath.Join(ws+"-other", "m.csv"), ws, filepath.Join(ws+"-other", "m.csv")}, // a sibling sharing the prefix
		{"members.csv", "", "members.csv"},
		{filepath.Join(ws, "..data", "m.csv"), ws, "..data/m.csv"}, // a directory named ..data is inside
	}
	// Symbolic links: a directory linked from outside the workspace to inside it, and a
	// workspace named through a link; the annotations name the file in the repository.
	if err := os.MkdirAll(filepath.Join(ws, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "data", "members.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	if err := os.Symlink(filepath.Join(ws, "data"), filepath.Join(links, "data")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(ws, filepath.Join(links, "ws")); err != nil {
		t.Skip(err)
	}
	tests = append(tests,
		struct{ path, workspace, want string }{filepath.Join(links, "data", "members.csv"), ws, "data/members.csv"},
		struct{ path, workspace, want string }{filepath.Join(ws, "data", "members.csv"), filepath.Join(links, "ws"), "data/members.csv"},
	)
	for _, tt := range tests {
		if got := workspacePath(tt.path, tt.workspace); got != tt.want {
			t.Errorf("workspacePath(%q, %q) = %q, want %q", tt.path, tt.workspace, got, tt.want)
		}
	}
}

func TestReasonKind(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"duplicate of line 9":                        "duplicate of line N",
		"malformed line: 2 fields, the header has 3": "malformed line: 2 fields, the header has 3",
		"not imported: subscriber.import: error 111": "not imported: subscriber.import: error 111",
		"record on lines 4-7":                        "record on lines N",
		// The reader's own wording for a record that spans lines: one reason for all of them.
		`malformed line: extraneous or missing " in quoted-field (lines 8 to 9)`:   `malformed line: extraneous or missing " in quoted-field (lines N)`,
		`malformed line: extraneous or missing " in quoted-field (lines 12 to 40)`: `malformed line: extraneous or missing " in quoted-field (lines N)`,
		strings.Repeat("é", 150): strings.Repeat("é", 100) + "…",
	}
	for in, want := range tests {
		if got := reasonKind(in); got != want {
			t.Errorf("reasonKind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGitHubReport(t *testing.T) {
	t.Parallel()
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			mode    string
			actions string
		}{{annotationsAuto, ""}, {annotationsAuto, "false"}, {annotationsNone, "true"}} {
			e := &env{getenv: func(k string) string { return map[string]string{"GITHUB_ACTIONS": tt.actions}[k] }}
			g, err := newGitHubReport("sync", e, tt.mode, "m.csv")
			if err != nil || g != nil {
				t.Errorf("mode %s, GITHUB_ACTIONS=%q: %v, %v; want no report", tt.mode, tt.actions, g, err)
			}
			g.reject(2, "x", "y") // a nil report does nothing
			if err := g.finish(githubSummary{}); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		summary := filepath.Join(dir, "summary.md")
		if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		vars := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": dir, "GITHUB_STEP_SUMMARY": summary}
		e := &env{stderr: &stderr, getenv: func(k string) string { return vars[k] }}
		g, err := newGitHubReport("sync", e, annotationsAuto, filepath.Join(dir, "m.csv"))
		if err != nil || g == nil {
			t.Fatalf("%v, %v", g, err)
		}
		// 6,000 rejects, with 3,000 reasons of up to 400 bytes, each twice: the summary stays
		// small. A reason counts under its first 200 bytes, and more rows only make larger
		// counts, so 20,000 rows with reasons of up to 3 KB made the same summary and
		// workflow commands but for the counts, only slower: 20 s under -race.
		long := strings.Repeat("|x*", 1000)
		for i := range 6_000 {
			g.reject(i+2, "a@b", fmt.Sprintf("%d%s", i%3000, long[:min(i%3000, 400)]))
		}
		if err := g.finish(githubSummary{title: "t", table: [][]string{{"action", "planned"}, {"add", "1"}}, result: "Done."}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if len(lines) != maxAnnotations+1 || !strings.HasPrefix(lines[0], "::warning file=m.csv,line=2::") ||
			lines[maxAnnotations] != "::notice::5990 more rejected rows not annotated (GitHub shows 10 per step); the step summary counts them by reason" {
			t.Errorf("workflow commands:\n%s", stderr.String())
		}
		b, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		if !strings.HasPrefix(md, "earlier step\n### t\n") || len(md) > 16<<10 || !strings.Contains(md, "| 996 other reasons | ") {
			t.Errorf("summary (%d bytes):\n%.3000s", len(md), md)
		}
		if strings.Contains(md, "|x*") {
			t.Error("the summary does not escape the reasons' pipes and asterisks")
		}
	})
}

package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestQuickstart runs the quickstart against its embedded fake and checks what a new user
// sees first: the webhooks name the tour's list, nothing is dated after now, and counts
// agree with their nouns.
func TestQuickstart(t *testing.T) {
	t.Setenv("SENDLOOP_API_KEY", "") // the embedded fake, even where a key is set
	out := captureStdout(t, run)
	end := time.Now().UTC()

	list := regexp.MustCompile(`(?m)^list: +#(\d+) `).FindStringSubmatch(out)
	if list == nil {
		t.Fatalf("no list line in:\n%s", out)
	}
	hooks := regexp.MustCompile(`(?m)^webhook: .*\(list #(\d+),`).FindAllStringSubmatch(out, -1)
	if len(hooks) != 4 {
		t.Errorf("%d webhook lines, want 4 (three subscriptions, one unsubscription):\n%s", len(hooks), out)
	}
	for _, h := range hooks {
		if h[1] != list[1] {
			t.Errorf("a webhook names list #%s, the tour's list is #%s:\n%s", h[1], list[1], out)
		}
	}

	// No date after now: dates by calendar day, date-times to the second.
	for _, m := range regexp.MustCompile(`\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?`).FindAllString(out, -1) {
		layout := time.DateOnly
		if len(m) > len(layout) {
			layout = time.DateTime
		}
		at, err := time.Parse(layout, m)
		if err != nil {
			t.Errorf("%q: %v", m, err)
			continue
		}
		limit := end
		if layout == time.DateOnly {
			limit = end.Truncate(24 * time.Hour)
		}
		if at.After(limit) {
			t.Errorf("%s is in the future (now %s):\n%s", m, end.Format(time.DateTime), out)
		}
	}
	if !strings.Contains(out, "opens:") || !strings.Contains(out, "report:      2 of 2 delivered") {
		t.Errorf("the campaign's reports are missing or empty:\n%s", out)
	}

	if m := regexp.MustCompile(`\b1 (recipients|emails|unique opens|unique clicks)\b`).FindString(out); m != "" {
		t.Errorf("%q: a count of one takes the singular:\n%s", m, out)
	}
}

// captureStdout returns what fn writes on os.Stdout, and fails the test if fn fails.
func captureStdout(t *testing.T, fn func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	runErr := fn()
	os.Stdout = stdout
	w.Close()
	out := <-done
	r.Close()
	if runErr != nil {
		t.Fatalf("%v; output so far:\n%s", runErr, out)
	}
	return string(bytes.TrimSpace(out))
}

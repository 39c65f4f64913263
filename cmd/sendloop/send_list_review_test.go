package main

import (
	"path/filepath"
	"testing"
)

// TestSendRecipientsJournalBoundToMergeVarsAndCustomArgs: --merge-vars and --custom-args
// are the same for every row, so they are part of the message a journal is for: a rerun
// that changes them is another message, and its journal is refused before anything is sent.
func TestSendRecipientsJournalBoundToMergeVarsAndCustomArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		text        string // a tag naming no column nor merge variable is refused before sending
		first, next []string
	}{
		{"merge vars", "Hi, use {{PROMO}}", []string{"--merge-vars", `{"PROMO":"SPRING"}`}, []string{"--merge-vars", `{"PROMO":"AUTUMN"}`}},
		{"custom args", "Hi", []string{"--custom-args", `{"campaign":"spring"}`}, []string{"--custom-args", `{"campaign":"autumn"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			relay, env := relayEnv(t, f)
			dir := t.TempDir()
			csv := writeFile(t, dir, "list.csv", "email\nann@example.net\n")
			text := writeFile(t, dir, "body.txt", tt.text)
			args := []string{"--json", "send", "--from", "news@example.com", "--subject", "News", "--text", text,
				"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "journal")}
			r := invocation{args: append(append([]string(nil), args...), tt.first...), env: env}.run(t)
			expect(t, r, exitOK, nil, nil)
			r = invocation{args: append(append([]string(nil), args...), tt.next...), env: env}.run(t)
			expect(t, r, exitUsage, nil, []string{"another message"})
			if n := len(relay.Messages()); n != 1 {
				t.Errorf("the relay got %d messages, want 1", n)
			}
		})
	}
}

// TestSendRecipientsRateNotANumber: --rate NaN parses as a float that is neither below nor
// above 0, and so sent without any limit; it is refused like a negative rate.
func TestSendRecipientsRateNotANumber(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv := writeFile(t, dir, "list.csv", "email\nann@example.net\n")
	text := writeFile(t, dir, "body.txt", "Hi")
	for _, rate := range []string{"NaN", "-Inf", "+Inf"} {
		r := invocation{args: []string{"--fake", "send", "--from", "news@example.com", "--subject", "S", "--text", text,
			"--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "j"+rate), "--rate", rate}, env: []string{}}.run(t)
		expect(t, r, exitUsage, nil, []string{"--rate"})
	}
}

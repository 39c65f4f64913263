package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/listsync"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUsageHintOnlyForUsage: the error printer points at the help for a usage mistake
// alone; other errors of exit code 2 end at their own sentence, and carry no "help" member.
func TestUsageHintOnlyForUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		help string // "" for no hint
	}{
		{"usage mistake", usagef("sync", "--list ID is required and must be positive"), "sendloop help sync"},
		{"usage mistake of no command", usagef("", "unknown command %q", "snyc"), "sendloop help"},
		{"wrapped usage mistake", fmt.Errorf("x: %w", usagef("send", "--from is required")), "sendloop help send"},
		{"unreadable file", inputf("--csv: open members.csv: no such file or directory"), ""},
		{"environment", configError("SENDLOOP_API_KEY is not set"), ""},
		{"guard", inputf("refusing to unsubscribe 2 of the 3 members of list 1: nothing was changed"), ""},
		{"wrapped guard error", fmt.Errorf("x: %w", &listsync.GuardError{}), ""},
		{"failure", errors.New("list.get: error 118"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var text bytes.Buffer
			(&app{env: &env{stderr: &text}, ctx: context.Background()}).fail(tt.err)
			hint := fmt.Sprintf("Run '%s' for usage.\n", tt.help)
			if tt.help == "" {
				assert.NotContains(t, text.String(), "for usage")
				assert.Equal(t, "sendloop: "+cliMessage(tt.err)+"\n", text.String())
			} else {
				assert.True(t, strings.HasSuffix(text.String(), hint), "stderr %q lacks %q", text.String(), hint)
			}

			var js bytes.Buffer
			(&app{env: &env{stderr: &js}, json: true, ctx: context.Background()}).fail(tt.err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(js.Bytes(), &got), js.String())
			if tt.help == "" {
				assert.NotContains(t, got, "help")
			} else {
				assert.Equal(t, tt.help, got["help"])
			}
		})
	}
}

// TestUsageHintWording runs the tool: a guard refusal, an unreadable file and a journal of
// another message exit 2 without the usage hint; an unknown flag still prints it.
func TestUsageHintWording(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	dir := t.TempDir()
	// The demo list has 2 members; a file naming one leaves the other to unsubscribe, which
	// --max-unsubscribe 0 refuses (and so changes nothing for the next case).
	oneMember := writeFile(t, dir, "one.csv", "EmailAddress\nann@example.com\n")
	guard := "refusing to unsubscribe 1 of the 2 members of list 1: --max-unsubscribe 0 allows 0 (is " +
		oneMember + " complete? raise the limit, or 100% for none); nothing was changed"
	missing := filepath.Join(dir, "missing.csv")
	tests := []struct {
		name string
		args []string
		last string // stderr's last line
		help string // the --json error's help member, "" for none
	}{
		{"guard refusal", []string{"sync", "--list", "1", "--csv", oneMember, "--unsubscribe-missing", "--max-unsubscribe", "0"}, "sendloop: " + guard, ""},
		{"unreadable file", []string{"sync", "--list", "1", "--csv", missing}, "", ""},
		{"unknown flag", []string{"sync", "--list", "1", "--csv", oneMember, "--bogus"}, "Run 'sendloop help sync' for usage.", "sendloop help sync"},
		{"unknown command", []string{"snyc"}, "Run 'sendloop help' for usage.", "sendloop help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.sendloop(t, tt.args...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if tt.last != "" {
				assert.Equal(t, tt.last, last)
			}
			if tt.help == "" {
				assert.NotContains(t, r.stderr, "for usage")
			}

			r = f.sendloop(t, append([]string{"--json"}, tt.args...)...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			var got map[string]any
			lines = strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") // notes come first
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &got), r.stderr)
			assert.Equal(t, "usage", got["kind"])
			if tt.help == "" {
				assert.NotContains(t, got, "help")
			} else {
				assert.Equal(t, tt.help, got["help"])
			}
		})
	}
}

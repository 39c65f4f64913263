package sendlooptest

import (
	"maps"
	"slices"
	"testing"
)

// TestCommandTableAndHandlersAgree is what keeps the fake's handler maps and the SDK's
// command table in step: every command of the table has a handler and every handler a
// command.
func TestCommandTableAndHandlersAgree(t *testing.T) {
	t.Parallel()
	if len(commandMismatches) > 0 {
		t.Fatalf("the fake's handlers and the command table disagree:\n%q", commandMismatches)
	}
	if len(commands) == 0 {
		t.Fatal("no commands dispatched")
	}
}

// TestDispatchReportsMismatches checks that dispatch reports, rather than hides, a command
// without a handler and a handler without a command.
func TestDispatchReportsMismatches(t *testing.T) {
	t.Parallel()
	all := func() map[string]handler {
		m := map[string]handler{}
		for _, set := range []map[string]handler{accountHandlers, listsHandlers, subscribersHandlers,
			suppressionHandlers, campaignsHandlers, reportsHandlers, exportsHandlers, systemHandlers} {
			maps.Copy(m, set)
		}
		return m
	}
	missing := all()
	delete(missing, "list.getlist")
	extra := all()
	extra["no.such.command"] = nil
	tests := []struct {
		name     string
		handlers map[string]handler
		want     []string
	}{
		{name: "agree", handlers: all(), want: nil},
		{name: "a command without a handler", handlers: missing, want: []string{"no handler for list.getlist"}},
		{name: "a handler without a command", handlers: extra, want: []string{"a handler for no.such.command, which the command table lacks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, mismatches := dispatch(tt.handlers)
			if !slices.Equal(mismatches, tt.want) {
				t.Fatalf("mismatches = %q, want %q", mismatches, tt.want)
			}
			if len(tt.want) == 0 && len(got) != len(commands) {
				t.Fatalf("dispatched %d commands, want %d", len(got), len(commands))
			}
		})
	}
}

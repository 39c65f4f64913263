package sendlooptest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// TestCommandTableAndHandlersAgree is what keeps the fake's handler maps and the SDK's
// command table in step: every command of the table has a handler and every handler a
// command.
func TestCommandTableAndHandlersAgree(t *testing.T) {
	t.Parallel()
	require.Empty(t, commandMismatches, "the fake's handlers and the command table disagree")
	require.NotEmpty(t, commands, "no commands dispatched")
	handlers := 0
	for _, set := range handlerSets {
		handlers += len(set)
	}
	assert.Len(t, commands, handlers, "every handler of handlerSets is dispatched")
}

// TestDispatchReportsMismatches checks, on a made-up table and made-up handler maps, that
// dispatch pairs them whatever the case of their names, and reports, rather than hides, a
// command without a handler, a handler without a command and a command handled twice. It
// does not depend on the real table, so a command being added does not fail it.
func TestDispatchReportsMismatches(t *testing.T) {
	t.Parallel()
	run := func(*call) (object, *apiError) { return nil, nil }
	specs := []cmdtable.Spec{
		{Name: "Thing.Get", API: cmdtable.V3, Required: []string{"ThingID"}},
		{Name: "Thing.Create", API: cmdtable.V3},
		{Name: "Other.List", API: cmdtable.V3},
		{Name: "Person.Track", API: cmdtable.Person}, // not v3: needs no handler here
		{Name: "Legacy.Add", API: cmdtable.Legacy},
	}
	tests := []struct {
		name  string
		sets  []map[string]handler
		want  []string // the mismatches
		found []string // the commands dispatched, by lower-case name
	}{
		{
			name:  "agree, over several sets and in any case",
			sets:  []map[string]handler{{"thing.get": run, "THING.create": run}, {"Other.List": run}},
			found: []string{"thing.get", "thing.create", "other.list"},
		},
		{
			name:  "a command without a handler",
			sets:  []map[string]handler{{"thing.get": run, "thing.create": run}},
			want:  []string{"no handler for Other.List"},
			found: []string{"thing.get", "thing.create"},
		},
		{
			name:  "a handler without a command",
			sets:  []map[string]handler{{"thing.get": run, "thing.create": run, "other.list": run, "no.such.command": run}},
			want:  []string{"a handler for no.such.command, which the command table lacks"},
			found: []string{"thing.get", "thing.create", "other.list"},
		},
		{
			name:  "a handler for a command that is not v3",
			sets:  []map[string]handler{{"thing.get": run, "thing.create": run, "other.list": run, "person.track": run}},
			want:  []string{"a handler for person.track, which the command table lacks"},
			found: []string{"thing.get", "thing.create", "other.list"},
		},
		{
			name:  "a command in two sets",
			sets:  []map[string]handler{{"thing.get": run, "thing.create": run}, {"other.list": run, "Thing.Get": run}},
			want:  []string{"more than one handler for Thing.Get"},
			found: []string{"thing.get", "thing.create", "other.list"},
		},
		{
			name: "no handlers",
			want: []string{"no handler for Other.List", "no handler for Thing.Create", "no handler for Thing.Get"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, mismatches := dispatch(specs, tt.sets...)
			assert.Equal(t, tt.want, mismatches)
			var found []string
			for key, cmd := range got {
				found = append(found, key)
				assert.NotNil(t, cmd.run, key)
			}
			assert.ElementsMatch(t, tt.found, found)
			if cmd, ok := got["thing.get"]; ok {
				assert.Equal(t, "Thing.Get", cmd.name, "the table's spelling")
				assert.Equal(t, []string{"ThingID"}, cmd.required)
			}
		})
	}
}

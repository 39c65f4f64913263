package sendlooptest

import (
	"strings"
	"testing"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// TestHandlersMatchTheRegistry holds the fake's handler maps to the command registry: every
// v3 command has a handler, every person operation a route, every legacy command the
// specification details a handler, and no handler serves a name the registry lacks.
func TestHandlersMatchTheRegistry(t *testing.T) {
	t.Parallel()
	v3 := v3Handlers()
	for _, spec := range cmdtable.All() {
		switch spec.API {
		case cmdtable.V3:
			if v3[strings.ToLower(spec.Name)] == nil {
				t.Errorf("no handler for the v3 command %s", spec.Name)
			}
		case cmdtable.Person:
			if _, ok := routes[spec.Path]; !ok {
				t.Errorf("no route for the person operation %s", spec.Name)
			}
		case cmdtable.Legacy:
			if legacyHandlers[spec.Name] == nil && !spec.Listed {
				t.Errorf("no handler for the legacy command %s", spec.Name)
			}
		}
	}
	for name := range v3 {
		if spec, ok := cmdtable.Lookup(name); !ok || spec.API != cmdtable.V3 {
			t.Errorf("a handler for %s, which the registry lacks", name)
		}
	}
	for name := range legacyHandlers {
		if spec, ok := cmdtable.LookupLegacy(name); !ok || spec.Name != name {
			t.Errorf("a legacy handler for %s, which the registry does not spell so", name)
		}
	}
	if len(commands) != len(v3) {
		t.Errorf("%d v3 commands dispatched for %d handlers", len(commands), len(v3))
	}
}

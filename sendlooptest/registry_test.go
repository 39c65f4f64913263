package sendlooptest

import (
	"testing"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// TestPersonAndLegacyHandlersMatchTheRegistry holds the fake's person routes and legacy
// handlers to the command registry (TestCommandTableAndHandlersAgree does the v3 handlers):
// every person operation has a route, every legacy command the specification details a
// handler, and no legacy handler serves a name the registry lacks.
func TestPersonAndLegacyHandlersMatchTheRegistry(t *testing.T) {
	t.Parallel()
	for _, spec := range cmdtable.All() {
		switch spec.API {
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
	for name := range legacyHandlers {
		if spec, ok := cmdtable.LookupLegacy(name); !ok || spec.Name != name {
			t.Errorf("a legacy handler for %s, which the registry does not spell so", name)
		}
	}
}

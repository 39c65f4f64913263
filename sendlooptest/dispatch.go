package sendlooptest

import (
	"slices"
	"strings"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

type handler func(c *call) (object, *apiError)

type command struct {
	name     string   // canonical spelling
	required []string // parameters whose absence is error 105
	run      handler
}

// handlerSets are the handler maps that each file of the fake declares, the one list of
// them.
var handlerSets = []map[string]handler{accountHandlers, listsHandlers, subscribersHandlers,
	suppressionHandlers, campaignsHandlers, reportsHandlers, exportsHandlers, systemHandlers}

// commands holds every v3 command, keyed by lower-case name: the SDK's command table
// (internal/commands: spelling and required parameters) paired with the handlers each file
// declares. A command of the table without a handler is absent here (the fake answers it as
// an unknown command), and a handler without a command is dropped: commandMismatches lists
// both, and a test fails on any, so the two cannot drift apart without the package panicking
// at load.
var commands, commandMismatches = dispatch(cmdtable.All(), handlerSets...)

// dispatch pairs the v3 commands of specs with the handlers of sets. It returns the commands
// that have a handler and a sentence for each command without a handler, handler without a
// command or command with a handler in more than one set, sorted.
func dispatch(specs []cmdtable.Spec, sets ...map[string]handler) (map[string]command, []string) {
	handlers := map[string]handler{}
	var mismatches []string
	for _, set := range sets {
		for name, run := range set {
			key := strings.ToLower(name)
			if _, dup := handlers[key]; dup {
				mismatches = append(mismatches, "more than one handler for "+name)
			}
			handlers[key] = run
		}
	}
	out := map[string]command{}
	for _, spec := range specs {
		if spec.API != cmdtable.V3 {
			continue // the person operations have routes of their own, legacy its endpoint
		}
		key := strings.ToLower(spec.Name)
		run, ok := handlers[key]
		if !ok {
			mismatches = append(mismatches, "no handler for "+spec.Name)
			continue
		}
		delete(handlers, key)
		out[key] = command{name: spec.Name, required: spec.Required, run: run}
	}
	for name := range handlers {
		mismatches = append(mismatches, "a handler for "+name+", which the command table lacks")
	}
	slices.Sort(mismatches)
	return out, mismatches
}

// Package commands is the command registry: one entry for every command the sendloop
// packages send, to the v3 API, the person operations and the legacy endpoint, with an
// exported constant for its name and what the code and the tests need to know of it: its
// retry class, the IDs it takes and the rule each follows, whether it reads or writes, and
// for a write how its outcome is settled when an attempt that may have run lost its answer.
//
// The root package's typed methods and Call, the legacy client and sendlooptest's handler
// maps all read it; no other non-test file spells a command name. The registry imports
// neither the fake nor the services: their tests walk it and fail on a command that lacks
// a typed method, a fake handler, a row of the ID or outcome tables or a fuzz target.
package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// API is where a command is sent.
type API int

// The APIs a command belongs to.
const (
	// V3 commands go to POST {base}/api/v3/<command>/<format>.
	V3 API = iota + 1
	// Person operations (the engagement API) have addresses of their own, under /api/v4
	// and /api/v3: Spec.Method and Spec.Path.
	Person
	// Legacy commands go to the single endpoint {base}/api/index.php.
	Legacy
)

func (a API) String() string {
	switch a {
	case V3:
		return "v3"
	case Person:
		return "person"
	case Legacy:
		return "legacy"
	}
	return fmt.Sprintf("api(%d)", int(a))
}

// IDRule is how an ID parameter is checked before anything is sent. Every ID follows the one
// range rule, 1..2147483647; the rule says what 0 means.
type IDRule int

// The ID rules.
const (
	// Required: 0 is a missing parameter (105 in the v3 API).
	Required IDRule = iota + 1
	// Optional: 0 means "not sent", or is a documented value (suppression ListID 0: global).
	Optional
	// Each: every element of a list of IDs, or every key of a map by ID (custom fields); 0
	// is a bad value like any other out of range.
	Each
)

// ID is an ID parameter of a command.
type ID struct {
	// Name is the parameter, e.g. "ListID", or the kind of key for Each ("CustomFieldID").
	Name string
	// Rule says what 0 means.
	Rule IDRule
}

// Outcome is how a write ends when an attempt that may have run lost its answer.
type Outcome int

// The outcome rules of writes.
const (
	// Retried: the write is idempotent and the retry's answer stands.
	Retried Outcome = iota + 1
	// ReadBack: a repeat is answered "already done" (already exists, not found), which the
	// typed method settles by reading the end state with Spec.ReadBack; a read-back that
	// does not prove the write leaves the outcome unknown.
	ReadBack
	// Unknown: a one-shot write is not sent again after an attempt that may have run; the
	// error matches ErrOutcomeUnknown.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case Retried:
		return "retried"
	case ReadBack:
		return "read-back"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Spec is the registry's entry for one command.
type Spec struct {
	// Name is the command as the specification spells it, e.g. "System.SystemDate.Get".
	Name string
	// API is where the command is sent.
	API API
	// Class is the retry class, decided from the command's effect in the specification.
	Class transport.Class
	// Method and Path give a person operation's address (API Person).
	Method, Path string
	// Required are the parameters the specification marks required (their absence is 105).
	Required []string
	// IDs are the ID parameters the typed method checks, with their rules.
	IDs []ID
	// Outcome is a write's outcome rule; reads have none.
	Outcome Outcome
	// ReadBack is the command that settles a write whose Outcome is ReadBack.
	ReadBack string
	// CallOnly marks a command with no typed method, reached through Call: the legacy
	// functions the specification lists without parameters or answer.
	CallOnly bool
	// Listed marks a command the specification names without detail: the fake may leave it
	// unsimulated.
	Listed bool
}

// Write reports whether the command changes anything.
func (s Spec) Write() bool { return s.Class != transport.Read }

// rootTable holds the commands of the root package's client (API V3 and Person), keyed by
// lower-case name; legacyTable the legacy endpoint's. The two share lower-case names
// (subscriber.get, Subscriber.Get), so each client looks in its own.
var (
	rootTable   = index(v3Specs, personSpecs)
	legacyTable = index(legacySpecs)
)

func index(sets ...[]Spec) map[string]Spec {
	out := map[string]Spec{}
	for _, set := range sets {
		for _, spec := range set {
			out[strings.ToLower(spec.Name)] = spec
		}
	}
	return out
}

// Lookup returns the v3 or person command named name, in any case.
func Lookup(name string) (Spec, bool) {
	spec, ok := rootTable[strings.ToLower(name)]
	return spec, ok
}

// LookupLegacy returns the legacy command named name, in any case.
func LookupLegacy(name string) (Spec, bool) {
	spec, ok := legacyTable[strings.ToLower(name)]
	return spec, ok
}

// All returns every command of the registry, v3, person and legacy, in the registry's order.
func All() []Spec {
	return slices.Concat(v3Specs, personSpecs, legacySpecs)
}

// ClassOf gives the retry class of a command for the root package's Call: the registry's
// for a known command; read for names that say so (report.*, data.*, export.*, system.*,
// *.get, *.getlist, *.browse, *.search); one-shot for anything else, so that an unknown
// command that creates something is never sent twice.
func ClassOf(name string) transport.Class {
	if spec, ok := Lookup(name); ok {
		return spec.Class
	}
	lower := strings.ToLower(name)
	for _, prefix := range []string{"report.", "data.", "export.", "system."} {
		if strings.HasPrefix(lower, prefix) {
			return transport.Read
		}
	}
	switch lower[strings.LastIndexByte(lower, '.')+1:] {
	case "get", "getlist", "browse", "search":
		return transport.Read
	}
	return transport.OneShot
}

// LegacyClassOf gives the retry class of a legacy command for the legacy Call: the
// registry's for a known command; read for names ending in .Get or .Browse or starting
// Report. or Chart.; one-shot for anything else.
func LegacyClassOf(name string) transport.Class {
	if spec, ok := LookupLegacy(name); ok {
		return spec.Class
	}
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, "report.") || strings.HasPrefix(lower, "chart.") {
		return transport.Read
	}
	switch lower[strings.LastIndexByte(lower, '.')+1:] {
	case "get", "browse":
		return transport.Read
	}
	return transport.OneShot
}

// Check refuses a command name that cannot be sent: empty, or holding a character other
// than letters, digits, '.' and '_'. The reason says which.
func Check(name string) error {
	if name == "" {
		return fmt.Errorf("empty command")
	}
	for _, r := range name {
		if !(r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Errorf("command %q holds a character other than letters, digits, '.' and '_'", name)
		}
	}
	return nil
}

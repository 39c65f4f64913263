// Package legacylink lets the root package build its legacy client on its own transport.
// The root package imports legacy and legacy must not import root, and legacy exports no
// constructor that takes internal types: package legacy sets New when it is initialised,
// which happens before any code of a package importing it runs.
package legacylink

import "github.com/go-sendloop/sendloop/internal/transport"

// New builds a legacy client sharing root (its base URL, key and transport). opts is a
// []legacy.Option and the result a *legacy.Client: this package cannot name legacy's types.
var New func(root *transport.Chassis, opts any) (any, error)

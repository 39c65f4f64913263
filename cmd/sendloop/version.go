package main

import (
	"fmt"
	"runtime/debug"

	"github.com/go-sendloop/sendloop"
)

// buildVersion is what `sendloop version` reports.
type buildVersion struct {
	version  string // the module's version, or the SDK's constant for a development build
	revision string // the VCS revision of a development build, when the build recorded it
	modified bool   // the working tree had changes
}

// readVersion reads the build info: the module version of a `go install …@v1.2.3` build;
// for a build from a checkout, "(devel)", the SDK's Version constant and the revision.
func readVersion(info *debug.BuildInfo, ok bool) buildVersion {
	v := buildVersion{version: sendloop.Version}
	if !ok {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v.version = mv
		return v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

// String is the version line's text: "0.2.0 (revision 0123456789ab, modified)".
func (v buildVersion) String() string {
	if v.revision == "" {
		return v.version
	}
	rev := v.revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	s := v.version + " (revision " + rev
	if v.modified {
		s += ", modified"
	}
	return s + ")"
}

// printVersion runs `sendloop version` and `sendloop --version`.
func (a *app) printVersion() int {
	v := readVersion(debug.ReadBuildInfo())
	if a.json {
		obj := orderedObject{{"version", v.version}}
		if v.revision != "" {
			obj = append(obj, member{"revision", v.revision}, member{"modified", v.modified})
		}
		return a.fail(writeJSON(a.stdout, obj))
	}
	_, err := fmt.Fprintf(a.stdout, "sendloop %s\n", v)
	return a.fail(err)
}

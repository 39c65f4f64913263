package main

import (
	"fmt"
	"runtime/debug"

	"github.com/go-sendloop/sendloop"
)

// releaseVersion and releaseCommit are set by the release build (.goreleaser.yaml):
// -ldflags "-X main.releaseVersion=0.2.0 -X main.releaseCommit=<full commit>". A build
// without them reads the build info alone.
var releaseVersion, releaseCommit string

// stamp is what a release build's linker flags set.
type stamp struct{ version, commit string }

// buildVersion is what `sendloop version` reports.
type buildVersion struct {
	version  string // the release's or module's version, or the SDK's constant for a development build
	revision string // the VCS revision of a release or of a build from a checkout, when recorded
	modified bool   // the working tree had changes
}

// readVersion reads the version: a release build's stamp (its version and commit); else the
// build info: the module version of a `go install …@v1.2.3` build; for a build from a
// checkout, the version the go command took from a tag (Go 1.24 and later) or else
// "(devel)" and then the SDK's Version constant, with the revision.
func readVersion(st stamp, info *debug.BuildInfo, ok bool) buildVersion {
	if st.version != "" {
		return buildVersion{version: st.version, revision: st.commit}
	}
	v := buildVersion{version: sendloop.Version}
	if !ok {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v.version = mv
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
	info, ok := debug.ReadBuildInfo()
	v := readVersion(stamp{releaseVersion, releaseCommit}, info, ok)
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

package sendloop_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modulePath is the module's import path, which the graph's names are relative to.
const modulePath = "github.com/go-sendloop/sendloop"

// graphEdge matches a line of the graph in ARCHITECTURE.md: "a -> b".
var graphEdge = regexp.MustCompile(`^(\S+) -> (\S+)$`)

// TestArchitectureGraphIsCurrent compares the import graph drawn in ARCHITECTURE.md (the
// fenced block after "The import graph") with the one `go list` reports for the module's
// packages, so that the drawing cannot go stale.
func TestArchitectureGraphIsCurrent(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("ARCHITECTURE.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "## The import graph")
	require.True(t, ok, "ARCHITECTURE.md has no section \"The import graph\"")
	_, block, ok := strings.Cut(after, "```text\n")
	require.True(t, ok, "the section has no ```text block")
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok, "the block is not closed")
	var drawn []string
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		require.Regexp(t, graphEdge, line, "a line of the graph is not \"a -> b\"")
		drawn = append(drawn, line)
	}

	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	require.NoError(t, err)
	var actual []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp == modulePath || strings.HasPrefix(imp, modulePath+"/") {
				actual = append(actual, shortName(fields[0])+" -> "+shortName(imp))
			}
		}
	}
	slices.Sort(drawn)
	slices.Sort(actual)
	assert.Equal(t, strings.Join(actual, "\n"), strings.Join(drawn, "\n"),
		"ARCHITECTURE.md's import graph differs from go list's (the expected side is go list's)")
}

// shortName is a package's path in the module, "sendloop" for the root.
func shortName(path string) string {
	if path == modulePath {
		return "sendloop"
	}
	return strings.TrimPrefix(path, modulePath+"/")
}

package listsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// maxExported bounds the package's exported top-level names (types, functions, constants
// and variables; not methods or fields): the sync's API stays small enough to read in one
// sitting. Raising it is a decision, not a side effect of a change.
const maxExported = 45

// TestExportedNamesBounded counts the exported top-level names of the package's non-test
// files and fails beyond maxExported.
func TestExportedNamesBounded(t *testing.T) {
	t.Parallel()
	names, err := testkit.ExportedNames(".")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	assert.LessOrEqual(t, len(names), maxExported, "listsync exports %d top-level names: %v", len(names), names)
}

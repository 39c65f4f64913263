package mailmerge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// maxExported bounds the send job's public surface: its exported top-level identifiers
// (functions, types, variables and constants; not methods or fields), the journal, keys and
// shards it took from smtp included. The shared words (budgets, fates, tallies, stop) are
// package job's.
const maxExported = 70

// TestExportedIdentifiers fails when package mailmerge exports more than maxExported
// top-level identifiers: a new one replaces an old one, or the bound is raised on purpose.
func TestExportedIdentifiers(t *testing.T) {
	t.Parallel()
	names, err := testkit.ExportedNames(".")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	assert.LessOrEqual(t, len(names), maxExported, "mailmerge exports %d top-level identifiers: %v", len(names), names)
	t.Logf("%d exported: %s", len(names), strings.Join(names, " "))
}

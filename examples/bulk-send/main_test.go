package main

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun sends the demo list through the embedded fake: two rows sent, one suppressed,
// three rejected (an empty FIRST, no address, a duplicate), the counts adding up to the
// rows.
func TestRun(t *testing.T) {
	t.Setenv(smtp.EnvHost, "")
	var out strings.Builder
	require.NoError(t, run(context.Background(), &out, nil))
	assert.Equal(t, `line 4 carol@example.com: rejected empty value for {{{FIRST}}} (subject)
line 5 not an address: rejected invalid email address
line 6 ANN@example.com: rejected duplicate of line 2
line 7 erin@example.com: suppressed on the account's global suppression list (FBL Report)
6 rows: 2 sent, 1 suppressed, 0 skipped, 0 refused, 0 unknown, 0 deferred, 3 rejected, 0 not attempted
the fake relay received 2 messages
`, out.String())
}

// TestRunNeedsAFileWithARelay: with a relay in the environment and no file given, the demo
// list is never sent.
func TestRunNeedsAFileWithARelay(t *testing.T) {
	t.Setenv(smtp.EnvHost, "relay.invalid")
	var out strings.Builder
	require.ErrorContains(t, run(context.Background(), &out, nil), "usage: bulk-send LIST.csv")
}

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendRecipientsOnlyFlagsGivenAtTheirDefaults: a --recipients-only flag given without
// --recipients is refused whatever its value, its default included (the flag set says what
// was given), and a plain send that gives none of them still sends.
func TestSendRecipientsOnlyFlagsGivenAtTheirDefaults(t *testing.T) {
	t.Parallel()
	text := writeFile(t, t.TempDir(), "body.txt", "Hi")
	base := []string{"--fake", "send", "--from", "a@example.com", "--to", "b@example.net", "--subject", "S", "--text", text}
	tests := []struct {
		name  string
		flags []string
		code  int
	}{
		{"none", nil, exitOK},
		{"preview rows at its default", []string{"--preview-rows", "5"}, exitUsage},
		{"preview rows", []string{"--preview-rows", "6"}, exitUsage},
		{"test rows at its default", []string{"--test-rows", "3"}, exitUsage},
		{"max rejects at its default", []string{"--max-rejects", "0"}, exitUsage},
		{"max unknown at its default", []string{"--max-unknown", "0"}, exitUsage},
		{"rate at its default", []string{"--rate", "0"}, exitUsage},
		{"annotations at its default", []string{"--annotations", "auto"}, exitUsage},
		{"test as is off", []string{"--test-as-is=false"}, exitUsage},
		{"concurrency goes with a plain send too", []string{"--concurrency", "2"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := invocation{args: append(append([]string(nil), base...), tt.flags...), env: []string{}}.run(t)
			require.Equal(t, tt.code, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			if tt.code == exitUsage {
				assert.Contains(t, r.stderr, "go with --recipients")
			}
		})
	}
}

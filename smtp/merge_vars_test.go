package smtp_test

import (
	"testing"

	"github.com/go-sendloop/sendloop/smtp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergeVars(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   map[string]string
		want map[string]any
	}{
		{"none", nil, map[string]any{}},
		{"one", map[string]string{"NAME": "Ann"}, map[string]any{"%NAME%": "Ann", "NAME": "Ann"}},
		{"several, an empty value kept", map[string]string{"NAME": "Zoë", "PLAN": ""},
			map[string]any{"%NAME%": "Zoë", "NAME": "Zoë", "%PLAN%": "", "PLAN": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := smtp.MergeVars(tt.in)
			assert.Equal(t, tt.want, got)

			// The header is the one the two-key map written by hand gives.
			fromFunc, err := smtp.Headers{MergeVars: got}.Fields()
			require.NoError(t, err)
			byHand, err := smtp.Headers{MergeVars: tt.want}.Fields()
			require.NoError(t, err)
			assert.Equal(t, byHand, fromFunc)
		})
	}
}

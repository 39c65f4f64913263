package mailmerge

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sendloop/sendloop/job"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRowListSpillsWholeRows: the rows a RowList keeps beyond memory come back from its
// temporary file as they were added, but for Err and Previous, which it never keeps.
func TestRowListSpillsWholeRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		row  func(i int) RowResult
	}{
		{"rejected", func(i int) RowResult {
			return RowResult{Line: i + 2, Index: i, Address: fmt.Sprintf("u%d@example.net", i), Fate: job.Rejected, Reason: "empty value"}
		}},
		{"skipped, continued", func(i int) RowResult {
			return RowResult{Line: i + 2, Index: i, Address: fmt.Sprintf("u%d@example.net", i), Fate: job.Skipped,
				Skip: SkipUnknown, Continued: true, MessageID: fmt.Sprintf("<%d@example.com>", i)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l RowList
			defer func() { require.NoError(t, l.close()) }()
			const n = maxRowsInMemory + 3
			for i := range n {
				r := tt.row(i)
				r.Err, r.Previous = errors.New("not kept"), &JournalRecord{}
				l.add(r)
			}
			var got []RowResult
			require.NoError(t, l.Each(func(r RowResult) error { got = append(got, r); return nil }))
			require.Len(t, got, n)
			for _, i := range []int{0, maxRowsInMemory - 1, maxRowsInMemory, n - 1} {
				assert.Equal(t, tt.row(i), got[i], "row %d", i)
			}
		})
	}
}

package listsync

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// importRow fills one map for every row: a field empty in a row is absent from its map,
// whatever the rows before it held.
func TestImportRowSharesOneMap(t *testing.T) {
	t.Parallel()
	m, err := mapHeader([]string{"EmailAddress", "First name", "Plan"}, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}})
	require.NoError(t, err)
	tests := []struct {
		values []string
		want   sendloop.CustomFields
	}{
		{[]string{"", ""}, nil},
		{[]string{"Ann", "pro"}, sendloop.CustomFields{1: "Ann", 2: "pro"}},
		{[]string{"", "free"}, sendloop.CustomFields{2: "free"}},
		{[]string{"", ""}, nil},
		{[]string{"Bob", ""}, sendloop.CustomFields{1: "Bob"}},
	}
	var fields sendloop.CustomFields
	for i, tt := range tests {
		sub := importRow(m, MappedRow{Email: "a@example.com", Values: tt.values}, &fields)
		assert.Equal(t, "a@example.com", sub.EmailAddress)
		assert.Equal(t, tt.want, sub.Fields, "row %d", i)
	}
}

// Apply keeps Options.Concurrency imports in flight, the additions read from the source as
// scratch rows: the service holds each import until that many have arrived, which they do
// only if they are sent at once.
func TestApplyKeepsImportsInFlight(t *testing.T) {
	t.Parallel()
	const concurrency, batch = 4, 5
	ctx := testContext(t)
	var armed atomic.Bool // demoList's own import goes by
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	hook := func(r sendlooptest.Request) {
		if r.Command != commands.SubscriberImport || !armed.Load() {
			return
		}
		mu.Lock()
		if arrived++; arrived == concurrency {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
	_, c := demoList(t, sendlooptest.WithRequestHook(hook))
	armed.Store(true)
	var rows []Row
	for i := range concurrency * batch * 3 {
		rows = append(rows, Row{Email: fmt.Sprintf("new%03d@example.com", i), Fields: map[string]string{"Plan": "pro"}})
	}
	pl := planRows(t, c, Rows(rows), Options{Concurrency: concurrency})
	require.Equal(t, len(rows), pl.Adds)
	res, err := pl.Apply(ctx, ApplyOptions{BatchSize: batch})
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "the imports waited for each other until the test's deadline")
	assert.Equal(t, len(rows), res.Adds.Done)
}

package listsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// csvSource writes content to a file and opens it.
func csvSource(t *testing.T, content string, opts CSVOptions) *CSVFile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rows.csv")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	f, err := OpenCSV(path, opts)
	require.NoError(t, err)
	return f
}

// commandCounts counts the server's requests by command.
func commandCounts(srv *sendlooptest.Server) map[string]int {
	by := map[string]int{}
	for _, r := range srv.Requests() {
		by[strings.ToLower(r.Command)]++
	}
	return by
}

// Plan starts the members' first page, the suppression lists and the reading of a CSV file
// beside list.get, and uses them: a plan makes the calls it made before, no more (the walk
// of a longer list goes on from the second page), and plans the same.
func TestPlanStartsWhatItNeedsBesideListGet(t *testing.T) {
	t.Parallel()
	const concurrency = 4
	tests := []struct {
		members, pages, pastTheEnd int // pastTheEnd: the pages the walk may ask for past the last
	}{
		{members: 0, pages: 1},
		{members: sendloop.BrowsePageSize, pages: 2}, // a full first page, then an empty one, asked for alone
		{members: sendloop.BrowsePageSize + 50, pages: 2},
		{members: 3*sendloop.BrowsePageSize + 1, pages: 4, pastTheEnd: concurrency - 1}, // the second page alone, then four at once
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d members", tt.members), func(t *testing.T) {
			t.Parallel()
			srv := sendlooptest.NewServer(t)
			c := apiClient(t, srv)
			ctx := testContext(t)
			list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "L", OptInMode: sendloop.OptInSingle})
			require.NoError(t, err)
			plan, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: "Plan"})
			require.NoError(t, err)
			var members []sendloop.ImportSubscriber
			for i := range tt.members {
				members = append(members, sendloop.ImportSubscriber{EmailAddress: emailN(i), Fields: sendloop.CustomFields{plan: "free"}})
			}
			if len(members) > 0 {
				_, err = c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: members})
				require.NoError(t, err)
			}
			// The first member unchanged, the second moved to pro, and one new address.
			content := "EmailAddress,Plan\n" + emailN(0) + ",free\n" + emailN(1) + ",pro\nnew@example.com,team\n"
			before := commandCounts(srv)
			job, err := New(ctx, c, list, csvSource(t, content, CSVOptions{}), Options{Concurrency: concurrency, TempDir: t.TempDir()})
			require.NoError(t, err)
			pl, err := job.Plan(ctx)
			require.NoError(t, err)
			defer pl.Close()
			assert.True(t, pl.early, "the header maps as the list does, yet the early reading was dropped")
			after := commandCounts(srv)
			assert.Equal(t, 1, after["list.get"]-before["list.get"])
			assert.Equal(t, 2, after["suppression.list.getlist"]-before["suppression.list.getlist"])
			browsed := after["subscriber.browse"] - before["subscriber.browse"]
			assert.GreaterOrEqual(t, browsed, tt.pages)
			assert.LessOrEqual(t, browsed, tt.pages+tt.pastTheEnd)
			assert.Equal(t, tt.members, pl.Members)
			switch tt.members {
			case 0:
				assert.Equal(t, 3, pl.Adds)
			default:
				assert.Equal(t, []int{1, 1, 1}, []int{pl.Adds, pl.Updates, pl.Unchanged}, "adds, updates, unchanged")
			}
		})
	}
}

// The early reading is kept only when the list's mapping reads the rows as the header's
// guess does; otherwise Plan reads the file again, through the list's mapping, and plans
// as it always did.
func TestEarlyReadingKeptOnlyWhenTheMappingReadsAlike(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		opts    CSVOptions
		kept    bool
	}{
		{"names", "EmailAddress,First name,Plan\nann@example.com,,pro\nbob@example.com,,team\n", CSVOptions{}, true},
		{"columns in another order", "Plan,EmailAddress\npro,ann@example.com\nteam,bob@example.com\n", CSVOptions{}, true},
		{"a key", "EmailAddress,CustomField2\nann@example.com,pro\nbob@example.com,team\n", CSVOptions{}, true},
		{"an unknown column ignored", "EmailAddress,Colour,Plan\nann@example.com,red,pro\nbob@example.com,blue,team\n",
			CSVOptions{Header: HeaderOptions{IgnoreUnknown: true}}, false},
		{"a column mapped by flag", "Mail,Tier\nann@example.com,pro\nbob@example.com,team\n",
			CSVOptions{Header: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "Mail", Target: "EmailAddress"}, {Source: "Tier", Target: "Plan"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t)
			job, err := New(testContext(t), c, 1, csvSource(t, tt.content, tt.opts), Options{TempDir: t.TempDir()})
			require.NoError(t, err)
			pl, err := job.Plan(testContext(t))
			require.NoError(t, err)
			defer pl.Close()
			assert.Equal(t, tt.kept, pl.early)
			// ann is on pro already; bob moves from free to team.
			assert.Equal(t, []int{3, 1, 1, 0}, []int{pl.Members, pl.Unchanged, pl.Updates, pl.Adds}, "members, unchanged, updates, adds")
		})
	}
}

// New keeps nothing of its context: a Plan after it has ended plans as any other.
func TestPlanAfterNewsContextHasEnded(t *testing.T) {
	t.Parallel()
	content := "EmailAddress,Plan\nann@example.com,pro\nbob@example.com,team\nnew@example.com,free\n"
	newCtx, cancel := context.WithCancel(testContext(t))
	_, c := demoList(t)
	job, err := New(newCtx, c, 1, csvSource(t, content, CSVOptions{}), Options{TempDir: t.TempDir()})
	require.NoError(t, err)
	cancel()
	assert.Equal(t, []int{3, 1, 1, 1}, planCounts(t, job), "members, unchanged, updates, adds")
}

// planCounts plans job and returns its members, unchanged rows, updates and additions.
func planCounts(t *testing.T, job *Job) []int {
	t.Helper()
	pl, err := job.Plan(testContext(t))
	require.NoError(t, err)
	defer pl.Close()
	return []int{pl.Members, pl.Unchanged, pl.Updates, pl.Adds}
}

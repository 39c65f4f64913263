package jsonlsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/jsonlsource"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// fakeList starts a fake holding a list with the fields First name and Plan, and members
// ann and bob.
func fakeList(t *testing.T, ctx context.Context) (*sendloop.Client, int) {
	t.Helper()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	list, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Users", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	first, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: "First name"})
	require.NoError(t, err)
	plan, err := srv.DefineCustomField(list, sendlooptest.CustomField{Name: "Plan"})
	require.NoError(t, err)
	_, err = c.Subscribers.Import(ctx, list, sendloop.SubscriberImportParams{Subscribers: []sendloop.ImportSubscriber{
		{EmailAddress: "ann@example.com", Fields: sendloop.CustomFields{first: "Ann", plan: "free"}},
		{EmailAddress: "bob@example.com", Fields: sendloop.CustomFields{first: "Bob", plan: "free"}},
		{EmailAddress: "dan@example.com", Fields: sendloop.CustomFields{first: "Dan", plan: "free"}},
	}})
	require.NoError(t, err)
	return c, list
}

// planned is what a plan does with each row, by row number (a CSV file's data lines are
// one after its header).
type planned struct {
	Kind   string
	Row    int
	Email  string
	Values []string
	Reason string
}

func planOf(t *testing.T, ctx context.Context, src listsync.Source, lineOffset int) (counts []int, events []planned, unsubscribe []string) {
	t.Helper()
	c, list := fakeList(t, ctx)
	sj, err := listsync.New(ctx, c, list, src, listsync.Options{UnsubscribeMissing: true})
	require.NoError(t, err)
	plan, err := sj.Plan(ctx)
	require.NoError(t, err)
	defer plan.Close()
	for ev, err := range plan.Events(ctx, listsync.EventAdd|listsync.EventUpdate|listsync.EventReject) {
		require.NoError(t, err)
		events = append(events, planned{Kind: ev.Kind.String(), Row: ev.Row.Line - lineOffset, Email: ev.Row.Email, Values: ev.Row.Values, Reason: ev.Reason})
	}
	for m, err := range plan.ToUnsubscribe() {
		require.NoError(t, err)
		unsubscribe = append(unsubscribe, m.Email)
	}
	return []int{plan.Rows, plan.Adds, plan.Updates, plan.Unsubscribes, plan.Rejected, plan.SkippedStatus}, events, unsubscribe
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// The same rows as CSV and as JSON Lines plan identically: counts, each row's fate and
// values, the members to unsubscribe.
func TestPlansAsItsCSVTwin(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	type rec struct {
		email, first, plan string
		status             string
	}
	recs := []rec{
		{"ann@example.com", "Ann", "pro", "Subscribed"},   // update
		{"Bob@Example.com", "Bob", "free", "Subscribed"},  // unchanged
		{"cat@example.com", "Cat", "free", "Subscribed"},  // add
		{"not an address", "X", "free", "Subscribed"},     // reject
		{"eve@example.com", "Eve", "pro", "Unsubscribed"}, // skipped
		{" fay@example.com ", " Fay ", "", "Subscribed"},  // spaces trimmed, empty value
	}
	var csv, jsonl strings.Builder
	csv.WriteString("E-mail,First name,Plan,SubscriptionStatus\n")
	for _, r := range recs {
		fmt.Fprintf(&csv, "%s,%s,%s,%s\n", r.email, r.first, r.plan, r.status)
		obj := map[string]string{"E-mail": r.email, "First name": r.first, "Plan": r.plan, "SubscriptionStatus": r.status}
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		jsonl.Write(b)
		jsonl.WriteString("\n")
	}
	csvSrc, err := listsync.OpenCSV(write(t, "users.csv", csv.String()), listsync.CSVOptions{})
	require.NoError(t, err)
	jsonSrc, err := jsonlsource.New(write(t, "users.jsonl", jsonl.String()), jsonlsource.Options{}).Source(ctx)
	require.NoError(t, err)

	csvCounts, csvEvents, csvGone := planOf(t, ctx, csvSrc, 1)
	jsonCounts, jsonEvents, jsonGone := planOf(t, ctx, jsonSrc, 0)
	assert.Equal(t, []int{6, 2, 1, 1, 1, 1}, csvCounts)
	assert.Equal(t, csvCounts, jsonCounts)
	assert.Equal(t, csvEvents, jsonEvents)
	assert.Equal(t, []string{"dan@example.com"}, csvGone)
	assert.Equal(t, csvGone, jsonGone)
}

// Malformed lines are rejected by line, the sync goes on, and a member a malformed line
// names is not unsubscribed; values of every JSON type are text.
func TestRejectsMalformedLinesByNumber(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	text := strings.Join([]string{
		`{"email":"ann@example.com","Plan":1.50,"First name":null}`,
		``,
		`{"email":"bob@example.com","Plan":"free"`, // cut short: bob stays
		`{"email":"cat@example.com","Plan":true}`,
		`[1,2]`,
		`{"email":"dog@example.com","Nope":"x"}`,
	}, "\r\n")
	path := write(t, "users.jsonl", text)
	f := jsonlsource.New(path, jsonlsource.Options{Header: listsync.HeaderOptions{Ignore: []string{"Nope"}}})
	src, err := f.Source(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"email", "Plan", "First name", "Nope"}, f.Columns())
	rows, malformed := f.Lines()
	assert.Equal(t, []int{5, 2}, []int{rows, malformed})

	counts, events, gone := planOf(t, ctx, src, 0)
	assert.Equal(t, []int{5, 2, 1, 1, 2, 0}, counts) // ann updated; cat, dog added; dan gone; two rejects
	assert.Equal(t, []string{"dan@example.com"}, gone, "bob's malformed line keeps him")
	var rejected []int
	for _, ev := range events {
		switch ev.Kind {
		case "reject":
			rejected = append(rejected, ev.Row)
			assert.Contains(t, ev.Reason+ev.Email, "malformed JSON")
		case "update":
			assert.Equal(t, planned{Kind: "update", Row: 1, Email: "ann@example.com", Values: []string{"1.50", ""}}, ev)
		}
	}
	assert.Equal(t, []int{3, 5}, rejected)
}

func TestKeysMapAsACSVHeader(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	for _, tc := range []struct {
		name, text string
		header     listsync.HeaderOptions
		err        string
	}{
		{name: "no address", text: `{"who":"a@example.com"}`, err: "no address column"},
		{name: "two addresses", text: `{"email":"a@example.com","Email Address":"b@example.com"}`, err: "both hold"},
		{name: "--column", text: `{"contact":"a@example.com"}`, header: listsync.HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "contact", Target: "EmailAddress"}}}},
		{name: "--column naming nothing", text: `{"email":"a@example.com"}`, header: listsync.HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "x", Target: "Plan"}}}, err: `the source has no column "x"`},
		{name: "empty file", text: "", err: "no columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := jsonlsource.New(write(t, "f.jsonl", tc.text), jsonlsource.Options{Header: tc.header}).Source(ctx)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			var cerr *jsonlsource.ColumnsError
			require.ErrorAs(t, err, &cerr)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

// A file changed between its readings is refused, as a CSV file is.
func TestRefusesAFileThatChanged(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	path := write(t, "users.jsonl", `{"email":"ann@example.com"}`+"\n")
	src, err := jsonlsource.New(path, jsonlsource.Options{}).Source(ctx)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(`{"email":"ann@example.com"}`+"\n"+`{"email":"zed@example.com"}`+"\n"), 0o600))
	c, list := fakeList(t, ctx)
	sj, err := listsync.New(ctx, c, list, src, listsync.Options{})
	require.NoError(t, err)
	_, err = sj.Plan(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "changed during the sync")
}

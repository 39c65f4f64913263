package sendloop_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/browse"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// memberLine is what a sync reads of a member, as text to compare.
func memberLine(id int, email, status string, values []string) string {
	return fmt.Sprintf("%d %s %s %q", id, email, status, values)
}

func TestBrowseMembersYieldsWhatBrowseIterDoes(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()
	id, err := c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Fields", OptInMode: sendloop.OptInSingle})
	require.NoError(t, err)
	var fields []int
	for _, name := range []string{"First", "Plan"} {
		f, err := srv.DefineCustomField(id, sendlooptest.CustomField{Name: name})
		require.NoError(t, err)
		fields = append(fields, f)
	}
	const n = 250
	rows := func(yield func(sendloop.ImportSubscriber) bool) {
		for i := range n {
			row := sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("m%05d@example.com", i),
				Fields: sendloop.CustomFields{fields[0]: "Name " + strconv.Itoa(i)}}
			if i%3 > 0 {
				row.Fields[fields[1]] = []string{"", "pro", "team"}[i%3]
			}
			if !yield(row) {
				return
			}
		}
	}
	_, err = c.Subscribers.ImportAll(ctx, id, rows, sendloop.ImportOptions{Concurrency: 1})
	require.NoError(t, err)
	_, err = c.Subscribers.Unsubscribe(ctx, id, sendloop.SubscriberUnsubscribeParams{EmailAddress: "m00007@example.com", UnsubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)

	asked := []int{fields[1], 999, fields[0], fields[1]} // one twice, one the list lacks
	var want []string
	for sub, err := range c.Subscribers.BrowseIter(ctx, id, sendloop.SubscriberBrowseParams{}) {
		require.NoError(t, err)
		values := make([]string, len(asked))
		for i, f := range asked {
			values[i] = sub.CustomFields[f]
		}
		want = append(want, memberLine(sub.SubscriberID, sub.EmailAddress, string(sub.SubscriptionStatus), values))
	}
	require.Len(t, want, n)
	require.True(t, slices.ContainsFunc(want, func(line string) bool {
		return strings.Contains(line, " m00007@example.com Unsubscribed [\"pro\" \"\" \"Name 7\" \"pro\"]")
	}), "the walk reads the unsubscribed member and the values: %v", want[:10])
	for _, concurrency := range []int{0, 1, 3, 1000} {
		t.Run(strconv.Itoa(concurrency), func(t *testing.T) {
			t.Parallel()
			var got []string
			for m, err := range browse.Members(ctx, c.Subscribers, id, concurrency, asked) {
				require.NoError(t, err)
				got = append(got, memberLine(m.ID, m.Email, m.Status, m.Values))
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestBrowseMembersErrors(t *testing.T) {
	t.Parallel()
	c, _, pt, id := browseFixture(t, 250)
	pt.answer = func(startIndex int) *http.Response {
		if startIndex == 1 {
			return failPage()
		}
		return nil
	}
	tests := []struct {
		name        string
		subscribers any
		listID      int
		yielded     int
		err         string
	}{
		{"a page fails", c.Subscribers, id, 100, "500"},
		{"no list", c.Subscribers, 0, 0, "ListID"},
		{"not a service", "subscribers", id, 0, "*SubscribersService"},
		{"a nil service", (*sendloop.SubscribersService)(nil), id, 0, "*SubscribersService"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var yielded int
			var errs []error
			for _, err := range browse.Members(context.Background(), tt.subscribers, tt.listID, 4, nil) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				yielded++
			}
			assert.Equal(t, tt.yielded, yielded)
			require.Len(t, errs, 1)
			assert.Contains(t, errs[0].Error(), tt.err)
		})
	}
}

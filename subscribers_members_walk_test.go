package sendloop_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// walkTransport sits under a client and spoils the subscriber.browse pages of some lists:
// one page answered 500 (final, never retried), or every page asked for as page 0, which
// the walks stop on as a page that repeats.
type walkTransport struct {
	base   http.RoundTripper
	fail   map[int]int  // list ID → the page answered 500
	repeat map[int]bool // list IDs whose pages all come back as page 0
}

func (w *walkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.Contains(req.URL.Path, "subscriber.browse") {
		return w.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	form, _ := url.ParseQuery(string(body))
	list, _ := strconv.Atoi(form.Get("ListID"))
	page, _ := strconv.Atoi(form.Get("StartIndex"))
	if failing, ok := w.fail[list]; ok && page == failing {
		resp := failPage()
		resp.Request = req
		return resp, nil
	}
	if w.repeat[list] {
		form.Del("StartIndex")
		body = []byte(form.Encode())
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return w.base.RoundTrip(out)
}

// walkFixture is a fake holding the lists the walk tests read, and a client reaching it
// through a walkTransport.
type walkFixture struct {
	srv     *sendlooptest.Server
	c       *sendloop.Client
	full    int   // 250 members, with the fields First and Plan; m00007 unsubscribed
	fields  []int // First and Plan
	segment int   // the members of full whose Plan is "pro"
	empty   int   // no member
	failing int   // 250 members, page 1 answered 500
	looping int   // 250 members, every page answered as page 0
}

func newWalkFixture(t *testing.T) *walkFixture {
	t.Helper()
	f := &walkFixture{srv: sendlooptest.NewServer(t)}
	wt := &walkTransport{base: http.DefaultTransport.(*http.Transport).Clone(), fail: map[int]int{}, repeat: map[int]bool{}}
	var err error
	f.c, err = sendloop.NewClient(f.srv.APIKey, sendloop.WithBaseURL(f.srv.URL), sendloop.WithRetry(fastRetry),
		sendloop.WithHTTPClient(&http.Client{Transport: wt}))
	require.NoError(t, err)
	ctx := context.Background()
	newList := func(name string, members int) int {
		id, err := f.c.Lists.Create(ctx, sendloop.ListCreateParams{Name: name, OptInMode: sendloop.OptInSingle})
		require.NoError(t, err)
		if name == "Full" {
			for _, field := range []string{"First", "Plan"} {
				fid, err := f.srv.DefineCustomField(id, sendlooptest.CustomField{Name: field})
				require.NoError(t, err)
				f.fields = append(f.fields, fid)
			}
		}
		rows := func(yield func(sendloop.ImportSubscriber) bool) {
			for i := range members {
				row := sendloop.ImportSubscriber{EmailAddress: fmt.Sprintf("m%05d@example.com", i)}
				if f.fields != nil && name == "Full" {
					row.Fields = sendloop.CustomFields{f.fields[0]: "Name " + strconv.Itoa(i)}
					if i%3 > 0 {
						row.Fields[f.fields[1]] = []string{"", "pro", "team"}[i%3]
					}
				}
				if !yield(row) {
					return
				}
			}
		}
		if members > 0 {
			// One batch at a time: the fake numbers the members in the order of the rows.
			_, err = f.c.Subscribers.ImportAll(ctx, id, rows, sendloop.ImportOptions{Concurrency: 1})
			require.NoError(t, err)
		}
		return id
	}
	f.full = newList("Full", 250)
	_, err = f.c.Subscribers.Unsubscribe(ctx, f.full, sendloop.SubscriberUnsubscribeParams{EmailAddress: "m00007@example.com", UnsubscriptionIP: "192.0.2.1"})
	require.NoError(t, err)
	f.segment, err = f.srv.DefineSegment(f.full, "Pro", f.fields[1], "pro")
	require.NoError(t, err)
	f.empty = newList("Empty", 0)
	f.failing = newList("Failing", 250)
	f.looping = newList("Looping", 250)
	// Set before any walk, read only after.
	wt.fail[f.failing] = 1
	wt.repeat[f.looping] = true
	return f
}

// walkLine is a member, or an error, as text to compare.
func walkLine(id int, email string, status sendloop.SubscriptionStatus, values []string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%d %s %s %q", id, email, status, values)
}

// browseLines is what BrowseIter yields for the walk, each subscriber projected on fields:
// what Members must yield.
func browseLines(ctx context.Context, c *sendloop.Client, listID int, p sendloop.SubscriberMembersParams, limit int) []string {
	var lines []string
	for sub, err := range c.Subscribers.BrowseIter(ctx, listID, sendloop.SubscriberBrowseParams{
		SegmentID: p.SegmentID, StartIndex: p.StartIndex, Concurrency: p.Concurrency}) {
		values := make([]string, len(p.FieldIDs))
		for i, f := range p.FieldIDs {
			values[i] = sub.CustomFields[f]
		}
		lines = append(lines, walkLine(sub.SubscriberID, sub.EmailAddress, sub.SubscriptionStatus, values, err))
		if len(lines) == limit {
			break
		}
	}
	return lines
}

func TestMembersYieldsWhatBrowseIterDoes(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	ctx := context.Background()
	first, plan := f.fields[0], f.fields[1]
	tests := []struct {
		name   string
		listID int
		p      sendloop.SubscriberMembersParams
		limit  int    // the loop breaks after this many; 0: it walks to the end
		want   int    // the lines the walk yields
		check  string // a part of a line the walk yields, "" for none to look for
	}{
		{"no fields", f.full, sendloop.SubscriberMembersParams{}, 0, 250, " m00007@example.com Unsubscribed []"},
		{"fields, one twice, one the list lacks", f.full,
			sendloop.SubscriberMembersParams{FieldIDs: []int{plan, 999, first, plan}}, 0, 250,
			` m00007@example.com Unsubscribed ["pro" "" "Name 7" "pro"]`},
		{"fields, pages ahead", f.full,
			sendloop.SubscriberMembersParams{FieldIDs: []int{first, plan}, Concurrency: 3}, 0, 250,
			` m00249@example.com Subscribed ["Name 249" ""]`},
		{"more pages ahead than the list has", f.full,
			sendloop.SubscriberMembersParams{FieldIDs: []int{plan}, Concurrency: 1000}, 0, 250, ""},
		{"from a page on", f.full, sendloop.SubscriberMembersParams{StartIndex: 2, Concurrency: 2}, 0, 50,
			" m00200@example.com Subscribed []"},
		{"a segment", f.full, sendloop.SubscriberMembersParams{SegmentID: f.segment, FieldIDs: []int{plan}, Concurrency: 2}, 0, 83,
			` m00001@example.com Subscribed ["pro"]`},
		{"an empty list", f.empty, sendloop.SubscriberMembersParams{}, 0, 0, ""},
		{"an empty list, pages ahead", f.empty, sendloop.SubscriberMembersParams{FieldIDs: []int{1}, Concurrency: 4}, 0, 0, ""},
		{"a page fails", f.failing, sendloop.SubscriberMembersParams{}, 0, 101, "error: "},
		{"a page fails, pages ahead", f.failing, sendloop.SubscriberMembersParams{Concurrency: 4}, 0, 101, "error: "},
		{"a page repeats", f.looping, sendloop.SubscriberMembersParams{}, 0, 101, "error: "},
		{"a page repeats, pages ahead", f.looping, sendloop.SubscriberMembersParams{Concurrency: 4}, 0, 101, "error: "},
		{"the loop breaks", f.full, sendloop.SubscriberMembersParams{FieldIDs: []int{first}}, 150, 150, ""},
		{"the loop breaks, pages ahead", f.full, sendloop.SubscriberMembersParams{FieldIDs: []int{first}, Concurrency: 8}, 5, 5, ""},
		{"no list", 0, sendloop.SubscriberMembersParams{}, 0, 1, "error: sendloop: subscriber.browse: invalid parameters: ListID is required (fields: ListID) [error 105]"},
		{"a negative page", f.full, sendloop.SubscriberMembersParams{StartIndex: -1}, 0, 1, "error: "},
		{"a negative segment", f.full, sendloop.SubscriberMembersParams{SegmentID: -1}, 0, 1, "error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := browseLines(ctx, f.c, tt.listID, tt.p, tt.limit)
			var got []string
			for m, err := range f.c.Subscribers.Members(ctx, tt.listID, tt.p) {
				got = append(got, walkLine(m.SubscriberID, m.EmailAddress, m.SubscriptionStatus, m.Values, err))
				if err == nil {
					assert.Len(t, m.Values, len(tt.p.FieldIDs))
				}
				if len(got) == tt.limit {
					break
				}
			}
			assert.Equal(t, want, got)
			assert.Len(t, got, tt.want)
			if tt.check != "" {
				assert.True(t, slices.ContainsFunc(got, func(line string) bool { return strings.Contains(line, tt.check) }),
					"no line holds %q", tt.check)
			}
		})
	}
}

func TestMembersRefusesBeforeSending(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	tests := []struct {
		name   string
		listID int
		p      sendloop.SubscriberMembersParams
		want   sendloop.ErrorCode
		field  string
	}{
		{"no list", 0, sendloop.SubscriberMembersParams{}, sendloop.ErrMissingParameters, "ListID"},
		{"a negative list", -1, sendloop.SubscriberMembersParams{}, sendloop.ErrInvalidParameterValue, "ListID"},
		{"a negative page", 1, sendloop.SubscriberMembersParams{StartIndex: -1}, sendloop.ErrInvalidParameterValue, "StartIndex"},
		{"a negative segment", 1, sendloop.SubscriberMembersParams{SegmentID: -1}, sendloop.ErrInvalidSegmentID, "SegmentID"},
		{"a field ID 0", 1, sendloop.SubscriberMembersParams{FieldIDs: []int{2, 0}}, sendloop.ErrCustomFieldNotFound, "FieldIDs"},
		{"a negative field ID", 1, sendloop.SubscriberMembersParams{FieldIDs: []int{-2}}, sendloop.ErrCustomFieldNotFound, "FieldIDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var errs []error
			for m, err := range c.Subscribers.Members(context.Background(), tt.listID, tt.p) {
				require.Error(t, err, "yielded %+v", m)
				errs = append(errs, err)
			}
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], tt.want)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, errs[0], &ve)
			assert.Equal(t, []string{tt.field}, ve.Fields)
			assert.Equal(t, "subscriber.browse", ve.Command)
		})
	}
	assert.Empty(t, srv.Requests(), "nothing sent")
}

// TestMembersValuesAreTheWalks: a Member's Values are the walk's to write over; a loop that
// keeps them copies them, and the copies keep every member's values.
func TestMembersValuesAreTheWalks(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	ctx := context.Background()
	for _, concurrency := range []int{1, 4} {
		t.Run(strconv.Itoa(concurrency), func(t *testing.T) {
			t.Parallel()
			var kept [][]string
			var emails []string
			for m, err := range f.c.Subscribers.Members(ctx, f.full, sendloop.SubscriberMembersParams{FieldIDs: f.fields[:1], Concurrency: concurrency}) {
				require.NoError(t, err)
				kept = append(kept, slices.Clone(m.Values))
				emails = append(emails, m.EmailAddress)
			}
			require.Len(t, kept, 250)
			for i, values := range kept {
				var n int
				_, err := fmt.Sscanf(emails[i], "m%05d@example.com", &n)
				require.NoError(t, err)
				assert.Equal(t, []string{"Name " + strconv.Itoa(n)}, values)
			}
		})
	}
}

// TestMembersFieldIDsAreCopied: the walk keeps its own copy of FieldIDs, so a caller may
// reuse the slice once Members has returned.
func TestMembersFieldIDsAreCopied(t *testing.T) {
	t.Parallel()
	f := newWalkFixture(t)
	ids := []int{f.fields[0]}
	walk := f.c.Subscribers.Members(context.Background(), f.full, sendloop.SubscriberMembersParams{FieldIDs: ids})
	ids[0] = f.fields[1]
	for m, err := range walk {
		require.NoError(t, err)
		assert.Equal(t, []string{"Name 0"}, m.Values)
		break
	}
}

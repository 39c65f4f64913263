package sendlooptest

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlMembersPages: the members endpoint pages at 100 unless limit says otherwise
// (0: all), and says how many the page holds (count) beside the list's total.
func TestControlMembersPages(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	fakeList(t, f.srv, "n", 130)
	tests := []struct {
		query               string
		total, count, start int
	}{
		{"", 130, 100, 0},
		{"?start=100", 130, 30, 100},
		{"?limit=0", 130, 130, 0},
		{"?start=10&limit=5", 130, 5, 10},
		{"?start=200", 130, 0, 200},
	}
	for _, tt := range tests {
		var page struct {
			ListID              int `json:"list_id"`
			Total, Count, Start int
			Members             []map[string]any
		}
		f.get(t, "/lists/1/members"+tt.query, &page)
		assert.Equal(t, 1, page.ListID, tt.query)
		assert.Equal(t, tt.total, page.Total, tt.query)
		assert.Equal(t, tt.count, page.Count, tt.query)
		assert.Len(t, page.Members, tt.count, tt.query)
		assert.Equal(t, tt.start, page.Start, tt.query)
	}
}

// TestControlDeleteMember: DELETE …/lists/ID/members/EMAIL removes the record, as the
// legacy Subscriber.Delete does; a list or member that does not exist is 404.
func TestControlDeleteMember(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	_, emails := fakeList(t, f.srv, "n", 2)
	status, body := f.do(t, http.MethodDelete, "/lists/1/members/"+url.PathEscape(emails[0]), nil, "ctl")
	require.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"list_id": 1, "email": "`+emails[0]+`", "deleted": true, "webhooks": []}`, body)
	_, found := f.srv.SubscriberStatus(1, emails[0])
	assert.False(t, found, "the record is gone")
	_, found = f.srv.SubscriberStatus(1, emails[1])
	assert.True(t, found, "the other stays")
	assert.Equal(t, 1, f.srv.listInfos()[0].Subscribers)

	refusals := []struct {
		path, want string
		status     int
	}{
		{"/lists/1/members/" + url.PathEscape(emails[0]), `{"error": "` + emails[0] + ` is not in list 1"}`, http.StatusNotFound},
		{"/lists/9/members/a@example.com", `{"error": "no list 9"}`, http.StatusNotFound},
		{"/lists/x/members/a@example.com", `{"error": "\"x\" is not an ID"}`, http.StatusNotFound},
	}
	for _, r := range refusals {
		status, body := f.do(t, http.MethodDelete, r.path, nil, "ctl")
		assert.Equal(t, r.status, status, r.path)
		assert.JSONEq(t, r.want, body, r.path)
	}
	status, _ = f.do(t, http.MethodDelete, "/lists/1/members/"+url.PathEscape(emails[1]), nil, "")
	assert.Equal(t, http.StatusUnauthorized, status, "the key is needed")
}

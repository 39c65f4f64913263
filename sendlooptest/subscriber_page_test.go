package sendlooptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageList returns a list of n members with the given custom fields, the values of member i
// made by value(i, field).
func pageList(t testing.TB, n int, fieldIDs []int, value func(i, field int) string) (*state, *list) {
	t.Helper()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	st := newState(now)
	l := &list{ID: 1, OptInMode: "Single", Settings: map[string]string{}, byEmail: map[string]*subscriber{}}
	for _, id := range fieldIDs {
		l.Fields = append(l.Fields, &customField{ID: id, FieldName: fmt.Sprint("F", id)})
	}
	for i := 0; i < n; i++ {
		fields := map[int]string{}
		for _, id := range fieldIDs {
			if v := value(i, id); v != "" {
				fields[id] = v
			}
		}
		s, f := st.subscribe(l, fmt.Sprintf("user%d@example.com", i), "192.0.2.1", fields, now.Add(time.Duration(i%3)*24*time.Hour), i%2 == 0)
		require.Equal(t, ok, f)
		if i%5 == 4 {
			s.setBounce(st, "Soft")
		}
	}
	return st, l
}

// TestSubscriberPageWritesItsObjects checks that a page writes, in every format, what its
// records as objects write.
func TestSubscriberPageWritesItsObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		n      int
		fields []int
		value  func(i, field int) string
	}{
		{"empty page", 0, []int{1}, func(int, int) string { return "" }},
		{"no custom fields", 3, nil, func(int, int) string { return "" }},
		{"unset fields", 4, []int{2, 9}, func(i, f int) string {
			if i%2 == 0 {
				return ""
			}
			return fmt.Sprint(f)
		}},
		{"values to escape", 7, []int{3, 1}, func(i, f int) string {
			return []string{"Zoë", "a/b", `"q"\`, "tab\there", "😀", "\x01", "plain"}[(i+f)%7]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, l := pageList(t, tt.n, tt.fields, tt.value)
			page := newSubscriberPage(l, l.members)
			objects := page.objects()
			require.Len(t, objects, tt.n)
			for i, s := range l.members {
				assert.Equal(t, s.object(), objects[i])
			}
			got := appendJSON(nil, object{{"Subscribers", page}})
			assert.Equal(t, string(appendJSON(nil, object{{"Subscribers", objects}})), string(got))
			assert.True(t, json.Valid(got), "%s", got)
			assert.Equal(t, string(appendXML(nil, object{{"Subscribers", objects}})), string(appendXML(nil, object{{"Subscribers", page}})))
			assert.Equal(t, string(appendPHP(nil, object{{"Subscribers", objects}})), string(appendPHP(nil, object{{"Subscribers", page}})))
		})
	}
}

// FuzzSubscriberPageJSON checks the page's JSON against its objects' for any address and
// field values.
func FuzzSubscriberPageJSON(f *testing.F) {
	f.Add("user@example.com", "Zoë", "")
	f.Add("a/b@example.com", `"\`, "\x7f\x00")
	f.Add("x@example.com", "\xff\xfe", "😀/")
	f.Fuzz(func(t *testing.T, email, v1, v2 string) {
		_, l := pageList(t, 2, []int{4, 2}, func(i, f int) string {
			if f == 4 {
				return v1
			}
			return v2
		})
		l.members[1].Email = email
		page := newSubscriberPage(l, l.members)
		want := appendJSON(nil, page.objects())
		if got := appendJSON(nil, page); string(got) != string(want) {
			t.Fatalf("page writes\n%s\nobjects write\n%s", got, want)
		}
	})
}

// BenchmarkSubscriberPage writes a browse answer of 100 members with two custom fields:
// the page as the handler now answers it, into a reused buffer, against the objects it
// answered with before (the baseline of the same run).
func BenchmarkSubscriberPage(b *testing.B) {
	_, l := pageList(b, browsePageSize, []int{1, 2}, func(i, f int) string { return fmt.Sprintf("User %d/%d", i, f) })
	run := func(name string, answer func() object, reuse bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for i := 0; i < b.N; i++ {
				if !reuse {
					buf = nil
				}
				buf = appendJSON(buf[:0], append(object{{"Success", true}}, answer()...))
			}
			b.SetBytes(int64(len(buf)))
		})
	}
	run("objects", func() object {
		out := []object{}
		for _, s := range l.members {
			out = append(out, s.object())
		}
		return object{{"Subscribers", out}}
	}, false)
	run("page", func() object { return object{{"Subscribers", newSubscriberPage(l, l.members)}} }, true)
}

// TestSubscriberBrowsePages checks the pages of a list of 250 members, with and without a
// segment, against the members they must hold.
func TestSubscriberBrowsePages(t *testing.T) {
	t.Parallel()
	st, l := pageList(t, 250, []int{1}, func(i, _ int) string { return fmt.Sprint(i % 3) })
	st.lists.byID = map[int]*list{1: l}
	l.Segments = map[int]*segment{7: {ID: 7, FieldID: 1, Value: "1"}}
	var inSegment []*subscriber
	for _, s := range l.members {
		if s.Fields.get(1) == "1" {
			inSegment = append(inSegment, s)
		}
	}
	tests := []struct {
		start, segment string
		want           []*subscriber
	}{
		{"", "", l.members[:100]},
		{"0", "0", l.members[:100]},
		{"1", "", l.members[100:200]},
		{" 2 ", "", l.members[200:]},
		{"3", "", nil},
		{"9223372036854775807", "", nil},
		{"", "7", inSegment},
		{"0", "7", inSegment},
		{"1", "7", nil}, // 83 members in the segment
	}
	for _, tt := range tests {
		c := &call{st: st, form: map[string][]string{"ListID": {"1"}, "StartIndex": {tt.start}, "SegmentID": {tt.segment}}}
		answer, apiErr := subscriberBrowse(c)
		require.Nil(t, apiErr)
		page := answer[0].Value.(subscriberPage)
		var ids []int
		for _, s := range page.subs {
			ids = append(ids, s.ID)
		}
		var want []int
		for _, s := range tt.want {
			want = append(want, s.ID)
		}
		assert.Equal(t, want, ids, "StartIndex %q, SegmentID %q", tt.start, tt.segment)
	}
	require.Len(t, inSegment, 83)
}

// TestSubscriberBrowseConcurrentAnswers browses pages of a list in every format from several
// goroutines at once: each answer, written into a pooled buffer, must be the one a lone
// request gets, with its length sent.
func TestSubscriberBrowseConcurrentAnswers(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithAPIKey("k"))
	_, body := post(t, srv, "/api/v3/list.create/json", url.Values{"APIKey": {"k"}, "Name": {"L"}, "OptInMode": {"Single"}})
	var created struct{ ListID int }
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	_, err := srv.DefineCustomField(created.ListID, CustomField{Name: "Plan"})
	require.NoError(t, err)
	rows := url.Values{"APIKey": {"k"}, "ListID": {fmt.Sprint(created.ListID)}}
	for i := 0; i < 350; i++ {
		rows.Set(fmt.Sprintf("Subscribers[%d][EmailAddress]", i), fmt.Sprintf("user%d@example.com", i))
	}
	status, body := post(t, srv, "/api/v3/subscriber.import/json", rows)
	require.Equal(t, http.StatusOK, status, body)

	browse := func(format string, page int) (string, error) {
		form := url.Values{"APIKey": {"k"}, "ListID": {fmt.Sprint(created.ListID)}, "StartIndex": {fmt.Sprint(page)}}
		resp, err := srv.hs.Client().Post(srv.URL+"/api/v3/subscriber.browse/"+format, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.ContentLength != int64(len(b)) {
			err = fmt.Errorf("Content-Length %d for a body of %d bytes", resp.ContentLength, len(b))
		}
		return string(b), err
	}
	formats := []string{"json", "xml", "php"}
	want := map[string]string{}
	for _, format := range formats {
		for page := 0; page < 5; page++ {
			b, err := browse(format, page)
			require.NoError(t, err)
			want[fmt.Sprint(format, page)] = b
		}
	}
	assert.Contains(t, want["json3"], `"EmailAddress":"user349@example.com"`)
	assert.Equal(t, `{"Success":true,"Subscribers":[]}`, want["json4"])

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				format, page := formats[(g+i)%3], (g*7+i)%5
				got, err := browse(format, page)
				if err == nil && got != want[fmt.Sprint(format, page)] {
					err = fmt.Errorf("%s page %d differs from a lone request's", format, page)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// gif is a 1×1 GIF image.
var gif = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00," +
	"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// TestCommandsInEveryForm runs every typed command and Call against the fake in each input
// form.
func TestCommandsInEveryForm(t *testing.T) {
	t.Parallel()
	for _, form := range allForms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := sendlooptest.NewServer(t, sendlooptest.WithClock(func() time.Time { return today }))
			c := newClient(t, srv, form)
			double := createList(t, srv, "Double")
			single := createList(t, srv, "Single")
			fieldID, err := srv.DefineCustomField(single, sendlooptest.CustomField{Name: "Plan"})
			require.NoError(t, err)
			singleID, doubleID := strconv.Itoa(single), strconv.Itoa(double)

			// Subscriber.Add on both kinds of list.
			pending, err := c.SubscriberAdd(ctx, double, legacy.SubscriberAddParams{EmailAddress: "dee@example.com", SubscriptionIP: "192.0.2.1"})
			require.NoError(t, err)
			assert.Equal(t, &legacy.SubscriberAddResult{Status: legacy.StatusWaitingForOptIn, SubscriberID: 1,
				RedirectURL: srv.URL + "/subscribe/" + doubleID + "/thanks"}, pending)
			added, err := c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "sam@example.com", SubscriptionIP: "192.0.2.2", CustomFields: map[int]string{fieldID: "gold & silver"}})
			require.NoError(t, err)
			assert.Equal(t, legacy.StatusSubscribed, added.Status)
			assert.Equal(t, 2, added.SubscriberID)

			// Call: Subscriber.Get, Subscriber.Update, Subscribers.Get.
			get := func(list, email string) legacy.Struct {
				t.Helper()
				st, err := c.Call(ctx, "Subscriber.Get", map[string]string{"ListID": list, "EmailAddress": email})
				require.NoError(t, err)
				return st
			}
			assert.Equal(t, "Waiting For Opt-In Confirmation", get(doubleID, "dee@example.com").Text("SubscriptionStatus"))
			sam := get(singleID, "sam@example.com")
			assert.Equal(t, "Subscribed", sam.Text("SubscriptionStatus"))
			assert.Equal(t, "gold & silver", sam.Text("CustomField"+strconv.Itoa(fieldID)))
			assert.Equal(t, "2025-03-10", sam.Text("SubscriptionDate"))

			upd, err := c.Call(ctx, "Subscriber.Update", url.Values{"ListID": {singleID}, "EmailAddress": {"sam@example.com"},
				"Fields[CustomField" + strconv.Itoa(fieldID) + "]": {"platinum"}})
			require.NoError(t, err)
			assert.Equal(t, "Completed", upd.Text("Status"))
			assert.Equal(t, "platinum", get(singleID, "sam@example.com").Text("CustomField"+strconv.Itoa(fieldID)))

			all, err := c.Call(ctx, "Subscribers.Get", map[string]string{"ListID": singleID})
			require.NoError(t, err)
			records, _ := all.Get("Subscribers")
			require.Len(t, records.Array(), 1)
			assert.Equal(t, "sam@example.com", records.Array()[0].Struct().Text("EmailAddress"))

			// Subscriber.Unsubscribe.
			unsub, err := c.SubscriberUnsubscribe(ctx, single, legacy.SubscriberUnsubscribeParams{EmailAddress: "sam@example.com", UnsubscriptionIP: "192.0.2.3"})
			require.NoError(t, err)
			assert.Equal(t, &legacy.SubscriberUnsubscribeResult{Status: legacy.StatusUnsubscribed,
				RedirectURL: srv.URL + "/unsubscribe/" + singleID + "/thanks"}, unsub)
			assert.Equal(t, "192.0.2.3", get(singleID, "sam@example.com").Text("UnsubscriptionIP"))

			// Chart.ListActivity, drawn from the recorded activity.
			chart, err := c.ChartListActivity(ctx, single, legacy.ChartListActivityParams{Start: today.AddDate(0, 0, -1), Days: 3})
			require.NoError(t, err)
			assert.Equal(t, []string{"2025-03-09", "2025-03-10", "2025-03-11"}, chart.XAxis.Labels)
			assert.Equal(t, []float64{0, 1, 0}, chart.Subscriptions().Values())
			assert.Equal(t, []float64{0, 1, 0}, chart.Unsubscriptions().Values())
			assert.Equal(t, "1 unsubscription on 2025-03-10", chart.Unsubscriptions().Points[1].Tooltip)
			assert.Equal(t, "Activity of list L from 2025-03-09, 3 days", chart.Tooltip)
			assert.Equal(t, "Subscribers", chart.YAxis.Title)

			// Media.Upload and Media.Browse.
			up, err := c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif, Tags: []string{"logo", "header"}})
			require.NoError(t, err)
			assert.Equal(t, &legacy.MediaUploadResult{Status: legacy.StatusCompleted, MediaID: 1}, up)
			jpeg := []byte("\xff\xd8\xff\xe0 not really a jpeg")
			up, err = c.MediaUpload(ctx, legacy.MediaUploadParams{Data: jpeg, MediaType: "image/jpeg"})
			require.NoError(t, err)
			assert.Equal(t, 2, up.MediaID)
			library, err := c.MediaBrowse(ctx)
			require.NoError(t, err)
			assert.Equal(t, legacy.StatusCompleted, library.Status, "the answer's Status is returned")
			assert.Equal(t, []string{srv.URL + "/media/1.gif", srv.URL + "/media/2.jpg"}, library.URLs)
			items := srv.MediaItems()
			require.Len(t, items, 2)
			assert.Equal(t, gif, items[0].Data)
			assert.Equal(t, "image/gif", items[0].MediaType)
			assert.Equal(t, []string{"logo", "header"}, items[0].Tags)
			assert.Equal(t, jpeg, items[1].Data)
			assert.Equal(t, today, items[1].Uploaded)

			// Subscriber.Delete.
			del, err := c.Call(ctx, "Subscriber.Delete", map[string]string{"ListID": doubleID, "EmailAddress": "dee@example.com"})
			require.NoError(t, err)
			assert.Equal(t, "Completed", del.Text("Status"))
			_, found := srv.SubscriberStatus(double, "dee@example.com")
			assert.False(t, found)

			// Faults: an unknown function, a listed one the fake does not simulate, an
			// unknown custom field.
			var fault *legacy.Fault
			_, err = c.Call(ctx, "Nope.Nothing", nil)
			require.True(t, errors.As(err, &fault), "got %v", err)
			assert.Equal(t, -32601, fault.Code)
			assert.Equal(t, "Nope.Nothing", fault.Command)
			_, err = c.Call(ctx, "Report.List.Opens", map[string]string{"ListID": singleID})
			require.True(t, errors.As(err, &fault), "got %v", err)
			assert.Contains(t, fault.Message, "not simulated")
			_, err = c.SubscriberAdd(ctx, single, legacy.SubscriberAddParams{EmailAddress: "new@example.com", SubscriptionIP: "192.0.2.9", CustomFields: map[int]string{99: "x"}})
			require.True(t, errors.As(err, &fault), "got %v", err)
			assert.Equal(t, -32602, fault.Code)
			assert.Equal(t, http.StatusOK, fault.HTTPStatus)
			assert.Equal(t, 1, srv.SubscriberCount(single), "nothing was added")
		})
	}
}

// answering starts a server that answers every request with status and body.
func answering(t *testing.T, status int, body string) *legacy.Client {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(hs.Close)
	c, err := legacy.NewClient("test-key", legacy.WithBaseURL(hs.URL), legacy.WithRetry(legacy.RetryPolicy{MaxRetries: -1}))
	require.NoError(t, err)
	return c
}

func structBody(members string) string {
	return string(response("<struct>" + members + "</struct>"))
}

func member(name, value string) string {
	return "<member><name>" + name + "</name><value>" + value + "</value></member>"
}

// TestAnswers checks how answers that the fake does not give are read.
func TestAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	escaped := func(s string) string {
		var b []byte
		for _, r := range s {
			switch r {
			case '<':
				b = append(b, "&lt;"...)
			case '>':
				b = append(b, "&gt;"...)
			case '&':
				b = append(b, "&amp;"...)
			default:
				b = append(b, string(r)...)
			}
		}
		return string(b)
	}
	tests := []struct {
		name   string
		status int
		body   string
		call   func(c *legacy.Client) (any, error)
		want   any
		err    string
	}{
		{"failure members with code 0 are no failure", 200,
			structBody(member("APIErrorCode", "0") + member("APIError", "") + member("Status", "Completed")),
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			legacy.Struct{{Name: "APIErrorCode"}, {Name: "APIError"}, {Name: "Status"}}, ""},
		{"failure with an int code and a 500 status", 500,
			structBody(member("APIError", "Subscriber list does not exist") + member("APIErrorCode", "<int>3</int>")),
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "sendloop/legacy: Subscriber.Get: error 3: Subscriber list does not exist"},
		{"failure with a code that is no number", 200,
			structBody(member("APIError", "odd") + member("APIErrorCode", "x")),
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "sendloop/legacy: Subscriber.Get: error 0: odd"},
		{"success struct with an error status", 503, structBody(member("Status", "Completed")),
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "sendloop/legacy: Subscriber.Get: HTTP 503: unexpected status"},
		{"HTML page", 502, "<html><body>Bad Gateway</body></html>",
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, `HTTP 502: unexpected status; the body is not an XML-RPC answer: "<html><body>Bad Gateway</body></html>"`},
		{"truncated answer", 200, `<methodResponse><params><param><value><struct>`,
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "HTTP 200: the body is not an XML-RPC answer: sendloop/legacy: malformed XML: XML syntax error on line 1: unexpected EOF"},
		{"answer that is not a struct", 200, string(response("<array><data/></array>")),
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "the XML-RPC answer is a array, not a struct"},
		{"fault with a status", 500, `<methodResponse><fault><value><struct>` + member("faultCode", "<int>7</int>") +
			member("faultString", "oops") + `</struct></value></fault></methodResponse>`,
			func(c *legacy.Client) (any, error) { return c.Call(ctx, "Subscriber.Get", nil) },
			nil, "sendloop/legacy: Subscriber.Get: XML-RPC fault 7: oops"},
		{"media URLs by number", 200,
			structBody(member("Status", "Completed") + member("MediaURL10", "j") + member("MediaURL2", "b") +
				member("MediaURL1", "a") + member("MediaURLx", "no") + member("MediaURL-3", "no") + member("Other", "no")),
			func(c *legacy.Client) (any, error) { return c.MediaBrowse(ctx) },
			&legacy.MediaBrowseResult{Status: legacy.StatusCompleted, URLs: []string{"a", "b", "j"}}, ""},
		{"empty media library", 200, structBody(member("Status", "Completed")),
			func(c *legacy.Client) (any, error) { return c.MediaBrowse(ctx) },
			&legacy.MediaBrowseResult{Status: legacy.StatusCompleted, URLs: []string{}}, ""},
		{"MediaID that is no number", 200, structBody(member("Status", "Completed") + member("MediaID", "abc")),
			func(c *legacy.Client) (any, error) {
				return c.MediaUpload(ctx, legacy.MediaUploadParams{Data: gif})
			},
			nil, `sendloop/legacy: Media.Upload: member MediaID (string "abc") is not an integer`},
		{"typed SubscriberID and unknown status", 200,
			structBody(member("Status", "Pending Review") + member("SubscriberID", "<i4>12</i4>") + member("RedirectURL", "https://x/")),
			func(c *legacy.Client) (any, error) {
				return c.SubscriberAdd(ctx, 1, legacy.SubscriberAddParams{EmailAddress: "a@example.com", SubscriptionIP: "1.1.1.1"})
			},
			&legacy.SubscriberAddResult{Status: "Pending Review", SubscriberID: 12, RedirectURL: "https://x/"}, ""},
		{"chart as the body", 200, sampleChart,
			func(c *legacy.Client) (any, error) {
				ch, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
				if err != nil {
					return nil, err
				}
				return ch.Subscriptions().Values(), nil
			},
			[]float64{0, 2}, ""},
		{"chart in another string member", 200,
			structBody(member("Status", "Completed") + member("ChartXML", "<string>"+escaped(sampleChart)+"</string>")),
			func(c *legacy.Client) (any, error) {
				ch, err := c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
				if err != nil {
					return nil, err
				}
				return ch.Unsubscriptions().Values(), nil
			},
			[]float64{0, 1}, ""},
		{"no chart in the answer", 200, structBody(member("Status", "Completed")),
			func(c *legacy.Client) (any, error) {
				return c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
			},
			nil, "HTTP 200: the answer holds no chart document"},
		{"malformed chart member", 200, structBody(member("Chart", escaped("<data><series><set><serie>x</serie></set></series></data>"))),
			func(c *legacy.Client) (any, error) {
				return c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
			},
			nil, "the value is not a number"},
		{"malformed chart body", 200, `<data><series><set><serie>x</serie></set></series></data>`,
			func(c *legacy.Client) (any, error) {
				return c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
			},
			nil, "the value is not a number"},
		{"chart failure", 200, structBody(member("APIError", "no list") + member("APIErrorCode", "3")),
			func(c *legacy.Client) (any, error) {
				return c.ChartListActivity(ctx, 1, legacy.ChartListActivityParams{Start: today, Days: 2})
			},
			nil, "sendloop/legacy: Chart.ListActivity: error 3: no list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.call(answering(t, tt.status, tt.body))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			if st, ok := got.(legacy.Struct); ok {
				names := make(legacy.Struct, len(st))
				for i, m := range st {
					names[i].Name = m.Name
				}
				got = names
			}
			assert.Equal(t, tt.want, got, fmt.Sprintf("%#v", got))
		})
	}
}

func TestErrorCarriesStatusAndAttempts(t *testing.T) {
	t.Parallel()
	c := answering(t, 500, structBody(member("APIError", "x")+member("APIErrorCode", "8")))
	_, err := c.SubscriberUnsubscribe(context.Background(), 1, legacy.SubscriberUnsubscribeParams{EmailAddress: "a@example.com", UnsubscriptionIP: "1.1.1.1"})
	var e *legacy.Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, &legacy.Error{Code: 8, Message: "x", Command: "Subscriber.Unsubscribe", HTTPStatus: 500, Attempts: 1}, e)
	assert.ErrorIs(t, err, legacy.ErrEmailNotInList)
}

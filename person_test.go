package sendloop_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func newPeopleClient(t *testing.T) (*sendloop.Client, *sendlooptest.Server) {
	t.Helper()
	srv := sendlooptest.NewServer(t, sendlooptest.WithClock(func() time.Time { return campaignClock }))
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithRetry(fastRetry))
	require.NoError(t, err)
	return c, srv
}

func basicAuthHeader(key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(key+":"))
}

func TestPeopleTrackGetDelete(t *testing.T) {
	t.Parallel()
	c, srv := newPeopleClient(t)
	ctx := context.Background()

	require.NoError(t, c.People.Track(ctx, "u-42", sendloop.PersonTrackParams{Email: "ann@example.com", Extra: map[string]string{"plan": "pro", "name": "Ann & Co <x>", "signedup_date": "2026-01-05"}}))
	track := srv.LastRequest()
	assert.Equal(t, "person.track", track.Command)
	assert.Equal(t, http.MethodPost, track.Method)
	assert.Equal(t, "/api/v4/person.json", track.Path)
	assert.Equal(t, "application/x-www-form-urlencoded", track.Header.Get("Content-Type"))
	assert.Equal(t, keyParam(srv)+"&email=ann%40example.com"+
		"&extrainfo=%7B%22name%22%3A%22Ann+%26+Co+%3Cx%3E%22%2C%22plan%22%3A%22pro%22%2C%22signedup_date%22%3A%222026-01-05%22%7D"+
		"&user_id=u-42", string(track.Body))
	assert.Empty(t, track.Header.Get("Authorization"), "the POST carries the key in its body like every command")

	require.NoError(t, c.People.Track(ctx, "u-42", sendloop.PersonTrackParams{Email: "ann@example.org"}))
	assert.Equal(t, keyParam(srv)+"&email=ann%40example.org&user_id=u-42", string(srv.LastRequest().Body), "no extrainfo when Extra is empty")

	p, err := c.People.Get(ctx, "u-42")
	require.NoError(t, err)
	get := srv.LastRequest()
	assert.Equal(t, "person.get", get.Command)
	assert.Equal(t, http.MethodGet, get.Method)
	assert.Equal(t, "/api/v3/person.json", get.Path)
	assert.Empty(t, get.Body)
	assert.Equal(t, url.Values{"user_id": {"u-42"}}, get.Form, "the query holds user_id and nothing else: no key in the URL")
	assert.Equal(t, basicAuthHeader(srv.APIKey), get.Header.Get("Authorization"))

	stamp := sendloop.DateTime{Time: campaignClock}
	assert.Equal(t, &sendloop.Person{UserID: "u-42", EmailAddress: "ann@example.org", EntryDate: stamp, LastSeenDate: stamp,
		IPAddress: "127.0.0.1", Sessions: 2,
		Extra: map[string]string{"plan": "pro", "name": "Ann & Co <x>", "signedup_date": "2026-01-05"}}, p)

	require.NoError(t, c.People.Delete(ctx, "u-42"))
	del := srv.LastRequest()
	assert.Equal(t, "person.delete", del.Command)
	assert.Equal(t, http.MethodGet, del.Method)
	assert.Equal(t, "/api/v3/person.json/", del.Path)
	assert.Equal(t, url.Values{"user_id": {"u-42"}}, del.Form)
	assert.Equal(t, basicAuthHeader(srv.APIKey), del.Header.Get("Authorization"))

	_, err = c.People.Get(ctx, "u-42")
	require.ErrorIs(t, err, sendloop.ErrNotFound)
	var apiErr *sendloop.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, "person.get", apiErr.Command)
	require.NoError(t, c.People.Delete(ctx, "u-42"), "deleting twice is done already")
	assert.Equal(t, 2, srv.Executions("person.delete"))
}

func TestPeopleUserIDIsEscaped(t *testing.T) {
	t.Parallel()
	c, srv := newPeopleClient(t)
	ctx := context.Background()
	const id = "a b&c=d/é"
	require.NoError(t, c.People.Track(ctx, id, sendloop.PersonTrackParams{Email: "e@example.com"}))
	p, err := c.People.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, id, p.UserID)
	assert.Equal(t, url.Values{"user_id": {id}}, srv.LastRequest().Form)
}

func TestPeopleRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		call   func(c *sendloop.Client) error
		fields []string
	}{
		{"track without anything", func(c *sendloop.Client) error {
			return c.People.Track(context.Background(), "", sendloop.PersonTrackParams{})
		},
			[]string{"user_id", "email"}},
		{"track without email", func(c *sendloop.Client) error {
			return c.People.Track(context.Background(), "u", sendloop.PersonTrackParams{Email: " "})
		}, []string{"email"}},
		{"get without user", func(c *sendloop.Client) error { _, err := c.People.Get(context.Background(), ""); return err }, []string{"user_id"}},
		{"delete without user", func(c *sendloop.Client) error { return c.People.Delete(context.Background(), "\t") }, []string{"user_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			err := tt.call(c)
			require.ErrorIs(t, err, sendloop.ErrMissingParameters)
			var ve *sendloop.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.fields, ve.Fields)
			assert.Empty(t, srv.Requests())
		})
	}
}

func TestPeopleFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("wrong key", func(t *testing.T) {
		t.Parallel()
		srv := sendlooptest.NewServer(t)
		c, err := sendloop.NewClient("wrong-key", sendloop.WithBaseURL(srv.URL))
		require.NoError(t, err)
		require.ErrorIs(t, c.People.Track(ctx, "u", sendloop.PersonTrackParams{Email: "e@example.com"}), sendloop.ErrInvalidAPIKey)
		_, err = c.People.Get(ctx, "u")
		require.ErrorIs(t, err, sendloop.ErrInvalidAPIKey)
		require.ErrorIs(t, c.People.Delete(ctx, "u"), sendloop.ErrInvalidAPIKey)
		assert.Zero(t, srv.Executions("person.get"))
	})

	t.Run("server-side checks", func(t *testing.T) {
		t.Parallel()
		c, srv := newPeopleClient(t)
		require.ErrorIs(t, c.People.Track(ctx, "u", sendloop.PersonTrackParams{Email: "not-an-address"}), sendloop.ErrInvalidEmailFormat)
		srv.InjectFault("person.delete", sendlooptest.Fault{ErrorCode: 123})
		require.ErrorIs(t, c.People.Delete(ctx, "u"), sendloop.ErrCommandDisabled)
	})

	t.Run("track is a one-shot write: each call records a session", func(t *testing.T) {
		t.Parallel()
		c, srv := newPeopleClient(t)
		srv.InjectFault("person.track", sendlooptest.Fault{Reset: sendlooptest.ResetAfterExecution})
		err := c.People.Track(ctx, "u", sendloop.PersonTrackParams{Email: "e@example.com"})
		require.ErrorIs(t, err, sendloop.ErrOutcomeUnknown)
		assert.Equal(t, 1, srv.Executions("person.track"))
		srv.InjectFault("person.track", sendlooptest.Fault{Status: 503})
		require.NoError(t, c.People.Track(ctx, "u", sendloop.PersonTrackParams{Email: "e@example.com"}))
		assert.Equal(t, 2, srv.Executions("person.track"), "a 503 surely did not run: sent again")
		srv.InjectFault("person.get", sendlooptest.Fault{Status: 503})
		_, err = c.People.Get(ctx, "u")
		require.NoError(t, err)
		assert.Len(t, requestsFor(srv, "person.get"), 2)
	})

	t.Run("non-JSON body", func(t *testing.T) {
		t.Parallel()
		c, srv := newPeopleClient(t)
		srv.InjectFault("person.get", sendlooptest.Fault{Status: 500})
		_, err := c.People.Get(ctx, "u")
		var httpErr *sendloop.HTTPError
		require.ErrorAs(t, err, &httpErr)
		assert.Equal(t, 500, httpErr.HTTPStatus)
		assert.Equal(t, "person.get", httpErr.Command)
	})
}

// TestPeopleEnvelope checks answers the fake does not give: a Status other than Okay
// without a code, Success false, a missing Person, and a server echoing the credential.
func TestPeopleEnvelope(t *testing.T) {
	t.Parallel()
	const key = "secret-key-zq7k"
	cred := base64.StdEncoding.EncodeToString([]byte(key + ":"))
	tests := []struct {
		name   string
		status int
		body   string
		check  func(t *testing.T, err error)
	}{
		{"status not okay", 200, `{"Status":"Failed"}`, func(t *testing.T, err error) {
			var apiErr *sendloop.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, sendloop.ErrorCode(0), apiErr.Code)
			assert.Equal(t, "Status Failed", apiErr.Message)
		}},
		{"success false", 200, `{"Success":false,"ErrorCode":"104","ErrorMessage":"bad key"}`, func(t *testing.T, err error) {
			require.ErrorIs(t, err, sendloop.ErrInvalidAPIKey)
		}},
		{"okay without person", 200, `{"Status":"Okay"}`, func(t *testing.T, err error) {
			require.ErrorContains(t, err, "holds no Person")
		}},
		{"malformed", 200, `{"Status":"Okay","Person":{`, func(t *testing.T, err error) {
			var httpErr *sendloop.HTTPError
			require.ErrorAs(t, err, &httpErr)
			assert.Contains(t, httpErr.Reason, "malformed JSON")
		}},
		{"bad person", 200, `{"Status":"Okay","Person":{"Sessions":"many"}}`, func(t *testing.T, err error) {
			require.ErrorContains(t, err, "decoding response")
		}},
		{"echoed credential in an error", 200, `{"Status":"Failed","ErrorCode":104,"ErrorMessage":"bad credential Basic ` + cred + `"}`,
			func(t *testing.T, err error) {
				require.ErrorIs(t, err, sendloop.ErrInvalidAPIKey)
				assert.NotContains(t, err.Error(), cred)
			}},
		{"echoed credential in a page", 403, `<html>Authorization: Basic ` + cred + `</html>`, func(t *testing.T, err error) {
			var httpErr *sendloop.HTTPError
			require.ErrorAs(t, err, &httpErr)
			assert.NotContains(t, fmt.Sprintf("%v %+v", err, httpErr), cred)
		}},
		{"unexpected status", 404, `{"Status":"Okay","Person":{}}`, func(t *testing.T, err error) {
			var httpErr *sendloop.HTTPError
			require.ErrorAs(t, err, &httpErr)
			assert.Equal(t, 404, httpErr.HTTPStatus)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(hs.Close)
			c, err := sendloop.NewClient(key, sendloop.WithBaseURL(hs.URL), sendloop.WithRetry(sendloop.RetryPolicy{MaxRetries: -1}))
			require.NoError(t, err)
			_, err = c.People.Get(context.Background(), "u")
			require.Error(t, err)
			assert.NotContains(t, err.Error(), key)
			tt.check(t, err)
		})
	}
}

func TestPersonUnmarshalKeepsExtraAttributes(t *testing.T) {
	t.Parallel()
	var p sendloop.Person
	require.NoError(t, p.UnmarshalJSON([]byte(`{"User ID":"7","Email Address":"a@example.com","Entry Date":"2026-01-01 09:00:00",`+
		`"Last Seen Date":"0000-00-00 00:00:00","IP Address":"0.0.0.0","Sessions":3,"plan":"pro","age":41,"tags":["a","b"],"none":null}`)))
	assert.Equal(t, sendloop.Person{UserID: "7", EmailAddress: "a@example.com",
		EntryDate: sendloop.DateTime{Time: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}, IPAddress: "0.0.0.0", Sessions: 3,
		Extra: map[string]string{"plan": "pro", "age": "41", "tags": `["a","b"]`, "none": ""}}, p)
}

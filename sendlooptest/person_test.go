package sendlooptest

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// personRequest sends a person request; user is the Basic auth user name, if not "".
func personRequest(t *testing.T, srv *Server, method, path string, query, form url.Values, user string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target := srv.URL + path
	if query != nil {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != "" {
		req.SetBasicAuth(user, "")
	}
	resp, err := srv.hs.Client().Do(req) // not http.DefaultClient: parallel tests close its connections
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

func TestPersonRoutes(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	track := func(form url.Values) string {
		_, body := personRequest(t, srv, http.MethodPost, "/api/v4/person.json", nil, form, "")
		return body
	}
	assert.Equal(t, `{"Status":"Okay"}`, track(url.Values{"APIKey": {"k"}, "user_id": {"u1"}, "email": {"a@example.com"},
		"extrainfo": {`{"plan":"pro","age":41,"tags":["x"],"none":null}`}}))
	assert.Equal(t, `{"Status":"Okay"}`, track(url.Values{"APIKey": {"k"}, "user_id": {"u1"}, "email": {"b@example.com"},
		"extrainfo": {`{"plan":"team","City":"hidden"}`}}))

	status, body := personRequest(t, srv, http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u1"}}, nil, "k")
	assert.Equal(t, 200, status)
	assert.Equal(t, `{"Status":"Okay","Person":{"User ID":"u1","Email Address":"b@example.com","Entry Date":"2026-03-02 10:00:00",`+
		`"Last Seen Date":"2026-03-02 10:00:00","IP Address":"127.0.0.1","City":"","Country":"","Sessions":"2",`+
		`"age":"41","none":"","plan":"team","tags":"[\"x\"]"}}`, body, "extra attributes after the person's own keys; a reserved name is not echoed")
	p, ok := srv.Person("u1")
	require.True(t, ok)
	assert.Equal(t, "team", p["plan"])

	// The key counts only where the SDK sends it: Basic auth on the GETs, the body of the POST.
	for _, refused := range []struct {
		method, path string
		query, form  url.Values
		user         string
	}{
		{http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u1"}, "APIKey": {"k"}}, nil, ""},
		{http.MethodGet, "/api/v3/person.json/", url.Values{"user_id": {"u1"}, "APIKey": {"k"}}, nil, ""},
		{http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u1"}}, nil, ""},
		{http.MethodPost, "/api/v4/person.json", url.Values{"APIKey": {"k"}}, url.Values{"user_id": {"u1"}, "email": {"a@example.com"}}, ""},
		{http.MethodPost, "/api/v4/person.json", nil, url.Values{"user_id": {"u1"}, "email": {"a@example.com"}}, "k"},
	} {
		_, body = personRequest(t, srv, refused.method, refused.path, refused.query, refused.form, refused.user)
		assert.Contains(t, body, `"ErrorCode":104`, "%+v", refused)
	}
	assert.Equal(t, 1, srv.Executions("person.get"))
	_, body = personRequest(t, srv, http.MethodGet, "/api/v3/person.json/", url.Values{"user_id": {"u1"}}, nil, "k")
	assert.Equal(t, `{"Status":"Okay"}`, body)
	_, ok = srv.Person("u1")
	assert.False(t, ok)
	_, body = personRequest(t, srv, http.MethodGet, "/api/v3/person.json/", url.Values{"user_id": {"u1"}}, nil, "k")
	assert.Equal(t, `{"Status":"Okay"}`, body, "deleting an unknown person succeeds")
	_, body = personRequest(t, srv, http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u1"}}, nil, "k")
	assert.Equal(t, `{"Status":"Failed","ErrorCode":106,"ErrorMessage":"Requested data not found","ErrorFields":["user_id"]}`, body)
	assert.Equal(t, 2, srv.Executions("person.track"))
	assert.Equal(t, 2, srv.Executions("person.delete"))
}

func TestPersonRouteChecks(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	tests := []struct {
		name, method, path string
		query, form        url.Values
		user               string
		status             int
		want               string
	}{
		{"no key", http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u"}}, nil, "", 200,
			`{"Status":"Failed","ErrorCode":104,"ErrorMessage":"Invalid API key","ErrorFields":[]}`},
		{"wrong Basic user", http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u"}}, nil, "nope", 200, `"ErrorCode":104`},
		{"Basic wins over a query key", http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u"}, "APIKey": {"k"}}, nil, "nope", 200, `"ErrorCode":104`},
		{"POST to the read address", http.MethodPost, "/api/v3/person.json", nil, url.Values{"APIKey": {"k"}, "user_id": {"u"}}, "", 405, `"ErrorCode":101`},
		{"GET to the track address", http.MethodGet, "/api/v4/person.json", url.Values{"user_id": {"u"}}, nil, "k", 405, `"ErrorCode":101`},
		{"no user", http.MethodGet, "/api/v3/person.json/", nil, nil, "k", 200,
			`{"Status":"Failed","ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["user_id"]}`},
		{"track without anything", http.MethodPost, "/api/v4/person.json", nil, url.Values{"APIKey": {"k"}}, "", 200,
			`"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["user_id","email"]`},
		{"bad email", http.MethodPost, "/api/v4/person.json", nil, url.Values{"APIKey": {"k"}, "user_id": {"u"}, "email": {"x"}}, "", 200, `"ErrorCode":111`},
		{"extrainfo not an object", http.MethodPost, "/api/v4/person.json", nil,
			url.Values{"APIKey": {"k"}, "user_id": {"u"}, "email": {"u@example.com"}, "extrainfo": {"plan=pro"}}, "", 200,
			`{"Status":"Failed","ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["extrainfo"]}`},
		{"extrainfo with trailing data", http.MethodPost, "/api/v4/person.json", nil,
			url.Values{"APIKey": {"k"}, "user_id": {"u"}, "email": {"u@example.com"}, "extrainfo": {`{} {}`}}, "", 200, `"ErrorCode":116`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := personRequest(t, srv, tt.method, tt.path, tt.query, tt.form, tt.user)
			assert.Equal(t, tt.status, status)
			assert.Contains(t, body, tt.want)
		})
	}
	assert.Zero(t, srv.Executions("person.get"))
	_, ok := srv.Person("u")
	assert.False(t, ok, "a refused track stores nothing")

	srv.AllowIPs("192.0.2.1")
	_, body := personRequest(t, srv, http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u"}}, nil, "k")
	assert.Contains(t, body, `"ErrorCode":103`)
}

func TestPersonRouteFaults(t *testing.T) {
	t.Parallel()
	srv := newCampaignFake(t)
	form := url.Values{"APIKey": {"k"}, "user_id": {"u"}, "email": {"u@example.com"}}
	srv.InjectFault("person.track", Fault{ErrorCode: 150, Status: 500})
	status, body := personRequest(t, srv, http.MethodPost, "/api/v4/person.json", nil, form, "")
	assert.Equal(t, 500, status)
	assert.Contains(t, body, `"ErrorCode":150`)
	assert.Zero(t, srv.Executions("person.track"))

	srv.InjectFault("person.track", Fault{Reset: ResetAfterExecution})
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v4/person.json", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err = srv.hs.Client().Do(req)
	require.Error(t, err, "the connection is reset")
	assert.Equal(t, 1, srv.Executions("person.track"), "after the person was stored")
	_, ok := srv.Person("u")
	assert.True(t, ok)

	srv.InjectFault("person.get", Fault{Status: 503, RetryAfter: "1"})
	status, _ = personRequest(t, srv, http.MethodGet, "/api/v3/person.json", url.Values{"user_id": {"u"}}, nil, "k")
	assert.Equal(t, 503, status)
	reqs := srv.Requests()
	assert.Equal(t, "person.get", reqs[len(reqs)-1].Command)
}

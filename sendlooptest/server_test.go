package sendlooptest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends a raw v3 request and returns the status and body.
func post(t *testing.T, srv *Server, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := srv.hs.Client().Post(srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestDispatchAndEnvelopeErrors(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, WithAPIKey("k"))
	key := url.Values{"APIKey": {"k"}}
	tests := []struct {
		name string
		path string
		form url.Values
		want string
	}{
		{"success", "/api/v3/account.info.get/json", key, `"Success":true`},
		{"command case-insensitive", "/api/v3/ACCOUNT.Info.GET/json", key, `"Username":"demo"`},
		{"missing key", "/api/v3/account.info.get/json", nil, `{"Success":false,"ErrorCode":104,"ErrorMessage":"Invalid API key","ErrorFields":[]}`},
		{"wrong key", "/api/v3/account.info.get/json", url.Values{"APIKey": {"nope"}}, `"ErrorCode":104`},
		{"key in the query does not count", "/api/v3/account.info.get/json?APIKey=k", nil, `"ErrorCode":104`},
		{"unknown command", "/api/v3/no.such/json", key, `"ErrorCode":101`},
		{"bad format", "/api/v3/account.info.get/yaml", key, `"ErrorCode":100`},
		{"missing parameters", "/api/v3/list.create/json", key, `"ErrorCode":105,"ErrorMessage":"Required parameter(s) missing","ErrorFields":["Name","OptInMode"]`},
		{"xml error", "/api/v3/account.info.get/xml", nil, `<ErrorCode>104</ErrorCode>`},
		{"php success", "/api/v3/System.SystemDate.Get/php", key, `a:3:{s:7:"Success";b:1;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv, tt.path, tt.form)
			assert.Equal(t, 200, status)
			assert.Contains(t, body, tt.want)
		})
	}
	status, _ := post(t, srv, "/elsewhere", key)
	assert.Equal(t, 404, status)
}

func TestAllowIPs(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	key := url.Values{"APIKey": {srv.APIKey}}
	srv.AllowIPs("192.0.2.10")
	_, body := post(t, srv, "/api/v3/account.info.get/json", key)
	assert.Contains(t, body, `"ErrorCode":103`)
	srv.AllowIPs("192.0.2.10", "127.0.0.1")
	_, body = post(t, srv, "/api/v3/account.info.get/json", key)
	assert.Contains(t, body, `"Success":true`)
	srv.AllowIPs()
	_, body = post(t, srv, "/api/v3/account.info.get/json", key)
	assert.Contains(t, body, `"Success":true`)
}

func TestRequestLogAndExecutions(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	key := url.Values{"APIKey": {srv.APIKey}}
	post(t, srv, "/api/v3/account.info.get/json", key)
	post(t, srv, "/api/v3/Account.Info.Get/json", key)
	post(t, srv, "/api/v3/account.info.get/json", nil) // refused: not executed
	assert.Equal(t, 2, srv.Executions("account.info.get"))
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "Account.Info.Get", reqs[1].Command)
	assert.Equal(t, "json", reqs[1].Format)
	assert.Equal(t, "APIKey="+url.QueryEscape(srv.APIKey), string(reqs[0].Body))
	assert.Equal(t, srv.APIKey, reqs[0].Form.Get("APIKey"))
	assert.Equal(t, reqs[2], srv.LastRequest())
}

func TestFaults(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	key := url.Values{"APIKey": {srv.APIKey}}
	path := "/api/v3/list.create/json"
	form := url.Values{"APIKey": {srv.APIKey}, "Name": {"L"}, "OptInMode": {"Single"}}

	srv.InjectFault("LIST.CREATE", Fault{Times: 2, Status: 503, RetryAfter: "7"})
	srv.InjectFault("list.create", Fault{ErrorCode: 117, Status: 500})
	resp, err := srv.hs.Client().PostForm(srv.URL+path, form)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "7", resp.Header.Get("Retry-After"))
	status, body := post(t, srv, path, form)
	assert.Equal(t, 503, status)
	assert.Contains(t, body, "503 Service Unavailable")
	status, body = post(t, srv, path, form)
	assert.Equal(t, 500, status)
	assert.Contains(t, body, `"ErrorCode":117`)
	assert.Equal(t, 0, srv.Executions("list.create"), "no fault so far let the command run")

	srv.InjectFault("list.create", Fault{Reset: ResetAfterExecution})
	_, err = srv.hs.Client().PostForm(srv.URL+path, form)
	require.Error(t, err, "the connection is reset")
	assert.Equal(t, 1, srv.Executions("list.create"))
	assert.Equal(t, 1, srv.ListCount(), "the command ran before the reset")

	srv.InjectFault("*", Fault{Reset: ResetBeforeExecution})
	_, err = srv.hs.Client().PostForm(srv.URL+"/api/v3/account.info.get/json", key)
	require.Error(t, err)
	assert.Equal(t, 0, srv.Executions("account.info.get"))

	srv.InjectFault("account.info.get", Fault{Delay: 30 * time.Millisecond})
	start := time.Now()
	status, _ = post(t, srv, "/api/v3/account.info.get/json", key)
	assert.Equal(t, 200, status)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	srv.InjectFault("account.info.get", Fault{Status: 502, Body: "custom"})
	srv.ClearFaults()
	status, _ = post(t, srv, "/api/v3/account.info.get/json", key)
	assert.Equal(t, 200, status)
}

func TestAccountUpdateIsAllOrNothing(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	form := url.Values{"APIKey": {srv.APIKey}, "FirstName": {"Changed"}, "TimeZone": {"Nowhere/Land"}}
	_, body := post(t, srv, "/api/v3/account.info.update/json", form)
	assert.Contains(t, body, `"ErrorCode":116,"ErrorMessage":"Invalid parameter value provided","ErrorFields":["TimeZone"]`)
	_, body = post(t, srv, "/api/v3/account.info.get/json", url.Values{"APIKey": {srv.APIKey}})
	var got struct{ AccountInfo map[string]string }
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, "Dana", got.AccountInfo["FirstName"])
}

func TestWithListenerAndTheAccountRelay(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(t, WithListener(ln))
	assert.Equal(t, "http://"+ln.Addr().String(), srv.URL)
	status, _ := post(t, srv, "/api/v3/account.info.get/json", url.Values{"APIKey": {srv.APIKey}})
	assert.Equal(t, 200, status)

	user, pass := srv.RelayCredentials()
	assert.NotEmpty(t, user)
	assert.NotEmpty(t, pass)
	relay, err := srv.StartRelay(t)
	require.NoError(t, err)
	assert.NotEmpty(t, relay.Addr())
}

// An import body in row order and one sorted by key (url.Values.Encode puts row 10 before
// row 2) both import every row.
func TestImportBodyInAnyOrder(t *testing.T) {
	t.Parallel()
	for _, sorted := range []bool{false, true} {
		srv := NewServer(t)
		_, body := post(t, srv, "/api/v3/list.create/json", url.Values{"APIKey": {srv.APIKey}, "Name": {"L"}, "OptInMode": {"Single"}})
		require.Contains(t, body, `"ListID":1`)
		var b strings.Builder
		b.WriteString("APIKey=" + url.QueryEscape(srv.APIKey) + "&ListID=1")
		form := url.Values{"APIKey": {srv.APIKey}, "ListID": {"1"}}
		for i := 0; i < 12; i++ {
			key := fmt.Sprintf("Subscribers[%d][EmailAddress]", i)
			email := fmt.Sprintf("r%d@example.com", i)
			b.WriteString("&" + url.QueryEscape(key) + "=" + url.QueryEscape(email))
			form.Set(key, email)
		}
		encoded := b.String()
		if sorted {
			encoded = form.Encode()
		}
		resp, err := srv.hs.Client().Post(srv.URL+"/api/v3/subscriber.import/json", "application/x-www-form-urlencoded", strings.NewReader(encoded))
		require.NoError(t, err)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(answer), `"TotalImported":12,"TotalDuplicate":0,"TotalFailed":0`, "sorted=%v", sorted)
		assert.Equal(t, 12, srv.SubscriberCount(1))
	}
}

// TestAccountUpdateWithNothingSet follows the specification: every parameter of
// account.info.update is optional, so an update with none succeeds and changes nothing.
func TestAccountUpdateWithNothingSet(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	before := v3Command(t, srv, "account.info.get")
	require.Contains(t, v3Command(t, srv, "account.info.update"), `"Success":true`)
	assert.Equal(t, before, v3Command(t, srv, "account.info.get"))
	require.Contains(t, v3Command(t, srv, "account.info.update", "TimeZone", "Mars/Olympus_Mons"), `"ErrorCode":116`)
}

// TestFakeAddressesFollowTheSDKRule: the fake refuses what the SDK's one address rule
// refuses, so that a raw call cannot get past it.
func TestFakeAddressesFollowTheSDKRule(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	require.Contains(t, v3Command(t, srv, "account.info.update", "Email", "ann@localhost"), `"ErrorCode":111`)
	require.Contains(t, v3Command(t, srv, "account.info.update", "Email", "ann@example.com"), `"Success":true`)
	require.Contains(t, v3Command(t, srv, "list.create", "Name", "L", "OptInMode", "Single"), `"ListID":1`)
	pairs := []string{"CampaignName", "C", "FromName", "Dana", "FromEmail", "dana@example.com\r\n", "ReplyToName", "Dana",
		"ReplyToEmail", "dana@example.com", "Subject", "S", "TargetListIDs[]", "1",
		"HTMLContent", `<a href="%Link:Unsubscribe%">Unsubscribe</a>`}
	require.Contains(t, v3Command(t, srv, "campaign.create", pairs...), `"ErrorCode":111`)
}

// An import counts a row whose address an earlier row of the batch added, or found in the
// list, as a duplicate, whatever came in between; a row refused before (bad format, an
// unknown field, a suppressed address) takes nothing, so a later row of its address is
// imported. Rows in the query string count as the body's.
func TestImportCountsDuplicatesInTheBatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rows  []string // address[,CustomFieldID=value]
		query []string // rows sent in the query string, after the body's
		want  string
	}{
		{"twice", []string{"a@example.com", "A@example.com"}, nil, `"TotalImported":1,"TotalDuplicate":1,"TotalFailed":0`},
		{"thrice apart", []string{"a@example.com", "b@example.com", "a@example.com", "a@example.com"}, nil, `"TotalImported":2,"TotalDuplicate":2,"TotalFailed":0`},
		{"in the list", []string{"member@example.com", "member@example.com"}, nil, `"TotalImported":0,"TotalDuplicate":2,"TotalFailed":0`},
		{"refused first", []string{"a@example.com,CustomField99=x", "a@example.com", "a@example.com"}, nil, `"TotalImported":1,"TotalDuplicate":1,"TotalFailed":1`},
		{"suppressed", []string{"gone@example.com", "gone@example.com"}, nil, `"TotalImported":0,"TotalDuplicate":0,"TotalFailed":2`},
		{"bad format", []string{"not-an-address", "not-an-address"}, nil, `"TotalImported":0,"TotalDuplicate":0,"TotalFailed":2`},
		{"empty", []string{"", "", "c@example.com"}, nil, `"TotalImported":1,"TotalDuplicate":0,"TotalFailed":2`},
		{"query", []string{"a@example.com"}, []string{"a@example.com", "q@example.com"}, `"TotalImported":2,"TotalDuplicate":1,"TotalFailed":0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t)
			_, body := post(t, srv, "/api/v3/list.create/json", url.Values{"APIKey": {srv.APIKey}, "Name": {"L"}, "OptInMode": {"Single"}})
			require.Contains(t, body, `"ListID":1`)
			_, body = post(t, srv, "/api/v3/subscriber.subscribe/json", url.Values{"APIKey": {srv.APIKey}, "ListID": {"1"},
				"EmailAddress": {"member@example.com"}, "SubscriptionIP": {"192.0.2.1"}})
			require.Contains(t, body, `"Success":true`)
			_, body = post(t, srv, "/api/v3/suppression.list.add/json", url.Values{"APIKey": {srv.APIKey}, "ListID": {"1"}, "EmailAddress": {"gone@example.com"}})
			require.Contains(t, body, `"Success":true`)
			rowValues := func(rows []string, from int) url.Values {
				v := url.Values{}
				for i, row := range rows {
					email, field, _ := strings.Cut(row, ",")
					v.Set(fmt.Sprintf("Subscribers[%d][EmailAddress]", from+i), email)
					if key, value, ok := strings.Cut(field, "="); ok {
						v.Set(fmt.Sprintf("Subscribers[%d][%s]", from+i, key), value)
					}
				}
				return v
			}
			form := rowValues(tt.rows, 0)
			form.Set("APIKey", srv.APIKey)
			form.Set("ListID", "1")
			path := "/api/v3/subscriber.import/json"
			if tt.query != nil {
				path += "?" + rowValues(tt.query, len(tt.rows)).Encode()
			}
			_, answer := post(t, srv, path, form)
			assert.Contains(t, answer, tt.want)
		})
	}
}

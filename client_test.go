package sendloop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

func TestNewClientChecksItsInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		opts    []sendloop.Option
		wantErr string
		wantURL string
	}{
		{name: "default host", key: "test-key", wantURL: sendloop.DefaultBaseURL},
		{name: "empty key", key: "  ", wantErr: "API key is empty"},
		{name: "control characters in key", key: "test\nkey", wantErr: "control characters"},
		{name: "a C1 control character in key", key: "test\u009bkey", wantErr: "control characters"},
		{name: "a space inside the key", key: "test key", wantErr: "the API key holds white space"},
		{name: "a no-break space inside the key", key: "test\u00a0key", wantErr: "the API key holds white space"},
		{name: "a one-character key", key: "k", wantErr: "the API key is shorter than 8 characters"},
		{name: "a seven-character key", key: " sl-1234 ", wantErr: "shorter than 8"},
		{name: "an eight-character key, trimmed", key: "\tsl-12345\n", wantURL: sendloop.DefaultBaseURL},
		{name: "account host", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://acme.sendloop.com/")}, wantURL: "https://acme.sendloop.com"},
		{name: "the API's path", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://acme.sendloop.com/api/v3/")}, wantErr: "give the host (and any proxy prefix) only, https://acme.sendloop.com;"},
		{name: "the v4 API's path", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://acme.sendloop.com/api/v4/json")}, wantErr: "give the host (and any proxy prefix) only"},
		{name: "the legacy API's path", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://proxy.example/sl/api/index.php")}, wantErr: "only, https://proxy.example/sl;"},
		{name: "path prefix kept", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://proxy.example/sendloop/")}, wantURL: "https://proxy.example/sendloop"},
		{name: "relative URL", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("/api")}, wantErr: "absolute"},
		{name: "other scheme", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("ftp://example.com")}, wantErr: "absolute"},
		{name: "credentials in URL", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("https://u:p@example.com")}, wantErr: "credentials"},
		{name: "plain http remote", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("http://example.com")}, wantErr: "clear text"},
		{name: "plain http loopback", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("http://127.0.0.1:8080")}, wantURL: "http://127.0.0.1:8080"},
		{name: "plain http localhost", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("http://localhost:8080")}, wantURL: "http://localhost:8080"},
		{name: "plain http ipv6 loopback", key: "test-key", opts: []sendloop.Option{sendloop.WithBaseURL("http://[::1]:8080")}, wantURL: "http://[::1]:8080"},
		{name: "plain http allowed explicitly", key: "test-key", opts: []sendloop.Option{sendloop.WithInsecureHTTP(), sendloop.WithBaseURL("http://sendloop.internal")}, wantURL: "http://sendloop.internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := sendloop.NewClient(tt.key, tt.opts...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantURL, c.BaseURL())
		})
	}
}

func TestNewClientFromEnv(t *testing.T) {
	srv := sendlooptest.NewServer(t)
	t.Setenv(sendloop.EnvAPIKey, "")
	_, err := sendloop.NewClientFromEnv()
	require.ErrorContains(t, err, sendloop.EnvAPIKey)

	for key, want := range map[string]string{"k": "shorter than 8", "two words": "white space"} {
		t.Setenv(sendloop.EnvAPIKey, key)
		_, err = sendloop.NewClientFromEnv()
		require.ErrorContains(t, err, want, "%q", key)
	}

	t.Setenv(sendloop.EnvAPIKey, srv.APIKey)
	t.Setenv(sendloop.EnvBaseURL, srv.URL)
	c, err := sendloop.NewClientFromEnv()
	require.NoError(t, err)
	assert.Equal(t, srv.URL, c.BaseURL())
	_, err = c.Account.Get(context.Background())
	require.NoError(t, err)

	c, err = sendloop.NewClientFromEnv(sendloop.WithBaseURL("https://override.example"))
	require.NoError(t, err)
	assert.Equal(t, "https://override.example", c.BaseURL(), "options override the environment")

	t.Setenv(sendloop.EnvBaseURL, "https://acme.sendloop.com/api/v3/")
	_, err = sendloop.NewClientFromEnv()
	require.ErrorContains(t, err, "give the host (and any proxy prefix) only, https://acme.sendloop.com;")
}

func TestNewClientFromEnvInsecureHTTP(t *testing.T) {
	tests := []struct {
		insecure string
		wantErr  string // "" for a client
	}{
		{insecure: "", wantErr: "http"},
		{insecure: "0", wantErr: "http"},
		{insecure: "1"},
		{insecure: "true"},
		{insecure: "yes please", wantErr: sendloop.EnvInsecureHTTP},
	}
	for _, tt := range tests {
		t.Run(tt.insecure, func(t *testing.T) {
			t.Setenv(sendloop.EnvAPIKey, "test-key")
			t.Setenv(sendloop.EnvBaseURL, "http://fake.ci.internal:8080")
			t.Setenv(sendloop.EnvInsecureHTTP, tt.insecure)
			c, err := sendloop.NewClientFromEnv()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "http://fake.ci.internal:8080", c.BaseURL())
		})
	}
}

func TestClientHeadersAndHTTPClientCopy(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	hc := &http.Client{Transport: testkit.Transport()}
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL), sendloop.WithHTTPClient(hc),
		sendloop.WithUserAgent("myapp/1.2"))
	require.NoError(t, err)
	hc.Timeout = 1 // a later change to the caller's client must not reach ours
	_, err = c.Account.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "myapp/1.2 sendloop-go/"+sendloop.Version, srv.LastRequest().Header.Get("User-Agent"))
}

func TestCall(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	var out struct {
		Success     bool
		AccountInfo map[string]string
	}
	require.NoError(t, c.Call(context.Background(), "account.info.get", nil, &out))
	assert.True(t, out.Success)
	assert.Equal(t, "demo", out.AccountInfo["Username"])

	// A struct, url.Values and a map all reach the service the same way.
	type params struct {
		Name      string `url:"Name"`
		OptInMode string `url:"OptInMode"`
	}
	var created struct{ ListID int }
	require.NoError(t, c.Call(context.Background(), "list.create", params{"News", "Single"}, &created))
	assert.Equal(t, 1, created.ListID)
	require.NoError(t, c.Call(context.Background(), "List.Create", url.Values{"Name": {"B"}, "OptInMode": {"Double"}}, nil))
	require.NoError(t, c.Call(context.Background(), "list.create", map[string]string{"Name": "C", "OptInMode": "Single"}, nil))
	assert.Equal(t, 3, srv.ListCount())
	assert.Equal(t, keyParam(srv)+"&Name=C&OptInMode=Single", string(srv.LastRequest().Body))
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		params  any
		prepare func(*sendlooptest.Server)
		want    error
		fields  []string
	}{
		{name: "unknown command", command: "no.such.command", want: sendloop.ErrInvalidCommand},
		{name: "missing parameters", command: "list.create", want: sendloop.ErrMissingParameters, fields: []string{"Name", "OptInMode"}},
		{name: "bad value", command: "list.create", params: map[string]string{"Name": "x", "OptInMode": "Triple"}, want: sendloop.ErrInvalidParameterValue, fields: []string{"OptInMode"}},
		{name: "address not allowed", command: "account.info.get", prepare: func(s *sendlooptest.Server) { s.AllowIPs("192.0.2.1") }, want: sendloop.ErrIPNotAuthorized},
		{name: "injected code", command: "account.info.get", prepare: func(s *sendlooptest.Server) { s.InjectFault("account.info.get", sendlooptest.Fault{ErrorCode: 147}) }, want: sendloop.ErrTrialExpired},
		{name: "bad command name", command: "list/create", want: sendloop.ErrInvalidCommand},
		{name: "empty command", command: "", want: sendloop.ErrInvalidCommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := newTestClient(t)
			if tt.prepare != nil {
				tt.prepare(srv)
			}
			err := c.Call(context.Background(), tt.command, tt.params, nil)
			require.ErrorIs(t, err, tt.want)
			if tt.fields != nil {
				var apiErr *sendloop.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, tt.fields, apiErr.Fields)
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	t.Parallel()
	srv := sendlooptest.NewServer(t)
	c, err := sendloop.NewClient("wrong-key", sendloop.WithBaseURL(srv.URL))
	require.NoError(t, err)
	_, err = c.Account.Get(context.Background())
	require.ErrorIs(t, err, sendloop.ErrInvalidAPIKey)
	assert.EqualError(t, err, "sendloop: account.info.get: error 104: Invalid API key")
	assert.Equal(t, 0, srv.Executions("account.info.get"))
}

func TestCallRawFormats(t *testing.T) {
	t.Parallel()
	c, srv := newTestClient(t)
	ctx := context.Background()

	body, err := c.CallRaw(ctx, "account.info.get", nil, sendloop.FormatXML)
	require.NoError(t, err)
	assert.Contains(t, string(body), "<Success>true</Success>")
	assert.Contains(t, string(body), "<Username>demo</Username>")
	assert.Equal(t, "/api/v3/account.info.get/xml", srv.LastRequest().Path)

	body, err = c.CallRaw(ctx, "account.info.get", nil, sendloop.FormatPHP)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(body), `a:2:{s:7:"Success";b:1;`), string(body))

	body, err = c.CallRaw(ctx, "account.info.get", nil, sendloop.FormatJSON)
	require.NoError(t, err)
	assert.True(t, json.Valid(body))

	_, err = c.CallRaw(ctx, "account.info.get", nil, "yaml")
	require.ErrorIs(t, err, sendloop.ErrInvalidFormat)

	for _, f := range []sendloop.Format{sendloop.FormatXML, sendloop.FormatPHP, sendloop.FormatJSON} {
		_, err = c.CallRaw(ctx, "list.create", nil, f)
		require.ErrorIs(t, err, sendloop.ErrMissingParameters, "format %s", f)
		var apiErr *sendloop.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "Required parameter(s) missing", apiErr.Message, "format %s", f)
	}
}

func TestResponsesThatAreNotEnvelopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		want    error // nil: an *HTTPError
		excerpt string
	}{
		{name: "html page", status: 200, body: "<html>maintenance</html>", excerpt: "<html>maintenance</html>"},
		{name: "truncated JSON", status: 200, body: `{"Success":true,"AccountInfo":{"User`, excerpt: `{"Success":true,"AccountInfo":{"User`},
		{name: "gateway error", status: 502, body: "Bad Gateway"},
		{name: "success envelope with error status", status: 404, body: `{"Success":true}`},
		{name: "error envelope on a 500", status: 500, body: `{"Success":false,"ErrorCode":"116","ErrorMessage":"Invalid parameter value provided","ErrorFields":["TimeZone"]}`, want: sendloop.ErrInvalidParameterValue},
		{name: "error code without Success", status: 200, body: `{"ErrorCode":106,"ErrorMessage":"Requested data not found"}`, want: sendloop.ErrNotFound},
		{name: "empty body", status: 200, body: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := cannedClient(t, tt.status, tt.body)
			_, err := c.Account.Get(context.Background())
			require.Error(t, err)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				var apiErr *sendloop.APIError
				require.ErrorAs(t, err, &apiErr)
				assert.Equal(t, tt.status, apiErr.HTTPStatus)
				return
			}
			var httpErr *sendloop.HTTPError
			require.ErrorAs(t, err, &httpErr)
			assert.Equal(t, tt.status, httpErr.HTTPStatus)
			assert.Equal(t, "account.info.get", httpErr.Command)
			if tt.excerpt != "" {
				assert.Equal(t, tt.excerpt, httpErr.Excerpt)
			}
		})
	}
}

func TestHTTPErrorExcerptIsShortAndPrintable(t *testing.T) {
	t.Parallel()
	long := "<html>\n\t" + strings.Repeat("é", 300) + "\x00</html>"
	c := cannedClient(t, 503, long)
	_, err := c.Account.Get(context.Background())
	var httpErr *sendloop.HTTPError
	require.ErrorAs(t, err, &httpErr)
	assert.LessOrEqual(t, len(httpErr.Excerpt), 200+len("…"))
	assert.NotContains(t, httpErr.Excerpt, "\n")
	assert.NotContains(t, httpErr.Excerpt, "\x00")
	assert.True(t, strings.HasPrefix(httpErr.Excerpt, "<html> é"))
	assert.Equal(t, 4, httpErr.Attempts, "503 is retried by reads")
}

func TestClientNeverPrintsItsKey(t *testing.T) {
	t.Parallel()
	const key = "KEY-MARKER-0b5e"
	c, err := sendloop.NewClient(key)
	require.NoError(t, err)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		assert.NotContains(t, sprintf(format, c), key, format)
		assert.NotContains(t, sprintf(format, struct{ C *sendloop.Client }{c}), key, format+" of a holder")
	}
	secret := sendloop.Secret("hunter22")
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		assert.NotContains(t, sprintf(format, secret), "hunter22", format)
	}
	out, err := json.Marshal(sendloop.AccountUpdateParams{NewPassword: secret})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "hunter22")
}

// unused guards the canned server helper against an unused import when tests change.
var _ = httptest.NewServer

func TestTolerantAnswers(t *testing.T) {
	t.Parallel()
	c := cannedClient(t, 200, "\xef\xbb\xbf"+`{"Success":"1","AccountInfo":{"Username":"demo","Fax":[],"Phone":{},"MemberSince":[]}}`)
	info, err := c.Account.Get(context.Background())
	require.NoError(t, err, "a byte-order mark and PHP's empty arrays are no error")
	assert.Equal(t, "demo", info.Username)
	assert.Empty(t, info.Fax)
	assert.True(t, info.MemberSince.IsZero())

	c = cannedClient(t, 200, `{"Success":true,"Lists":[{"ListID":"1","SubscriptionActivity":[3,4]}]}`)
	lists, err := c.Lists.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, lists[0].SubscriptionActivity, "a list of bare counts has no days to count")
}

func TestSynonymousCodesMatch(t *testing.T) {
	t.Parallel()
	for _, code := range []sendloop.ErrorCode{111, 124, 128} {
		err := &sendloop.APIError{Code: code}
		assert.ErrorIs(t, err, sendloop.ErrInvalidEmailFormat, "code %d", code)
		assert.NotErrorIs(t, err, sendloop.ErrInvalidEmail, "code %d", code)
	}
	assert.ErrorIs(t, &sendloop.APIError{Code: 126}, sendloop.ErrInvalidEmail)
	assert.ErrorIs(t, &sendloop.ValidationError{Code: 111}, sendloop.ErrInvalidEmailFormat3)
}

// TestNewClientFromLookup reads the settings through a function: each variable that is
// missing or unusable is an *EnvError naming it, and an option replaces the environment.
func TestNewClientFromLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      map[string]string
		opts     []sendloop.Option
		variable string // the *EnvError's, "" for a client
		unset    bool
		base     string // the client's, when made
	}{
		{name: "no key", env: map[string]string{}, variable: sendloop.EnvAPIKey, unset: true},
		{name: "a blank key", env: map[string]string{sendloop.EnvAPIKey: "  "}, variable: sendloop.EnvAPIKey, unset: true},
		{name: "the default host", env: map[string]string{sendloop.EnvAPIKey: "test-key"}, base: sendloop.DefaultBaseURL},
		{name: "an account's host", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: " https://acme.sendloop.com/ "},
			base: "https://acme.sendloop.com"},
		{name: "plain http", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "http://fake:8080"},
			variable: sendloop.EnvBaseURL},
		{name: "plain http on loopback", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "http://app.localhost:8080"},
			base: "http://app.localhost:8080"},
		{name: "plain http allowed", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "http://fake:8080", sendloop.EnvInsecureHTTP: "1"},
			base: "http://fake:8080"},
		{name: "plain http allowed by an option", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "http://fake:8080"},
			opts: []sendloop.Option{sendloop.WithInsecureHTTP()}, base: "http://fake:8080"},
		{name: "a password in the URL", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "https://u:secret@acme.sendloop.com"},
			variable: sendloop.EnvBaseURL},
		{name: "not a URL", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "acme.sendloop.com"},
			variable: sendloop.EnvBaseURL},
		{name: "an option replaces a bad variable", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvBaseURL: "acme"},
			opts: []sendloop.Option{sendloop.WithBaseURL("https://other.sendloop.com")}, base: "https://other.sendloop.com"},
		{name: "not a boolean", env: map[string]string{sendloop.EnvAPIKey: "test-key", sendloop.EnvInsecureHTTP: "yes please"},
			variable: sendloop.EnvInsecureHTTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lookup := func(name string) (string, bool) {
				v, ok := tt.env[name]
				return v, ok
			}
			c, err := sendloop.NewClientFromLookup(lookup, tt.opts...)
			if tt.variable == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.base, c.BaseURL())
				return
			}
			var envErr *sendloop.EnvError
			require.ErrorAs(t, err, &envErr)
			assert.Equal(t, tt.variable, envErr.Variable)
			assert.Equal(t, tt.unset, envErr.Unset)
			assert.True(t, strings.HasPrefix(err.Error(), "sendloop: "+tt.variable), err.Error())
			assert.NotContains(t, err.Error(), "secret")
			assert.NotContains(t, err.Error(), "test-key")
		})
	}
}

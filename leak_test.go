package sendloop_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// marker is an API key that must never appear in an error or a log line.
const marker = "MARKER-KEY-zq7k/9+a"

func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	// echo answers with the request body inside, as a careless server might.
	echo := func(status int, envelope bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body := make([]byte, r.ContentLength)
			_, _ = r.Body.Read(body)
			w.WriteHeader(status)
			if envelope {
				fmt.Fprintf(w, `{"Success":false,"ErrorCode":104,"ErrorMessage":"Invalid API key: %s","ErrorFields":["%s"]}`, body, body)
				return
			}
			fmt.Fprintf(w, "<html>request %s was refused</html>", body)
		}
	}
	withFault := func(f sendlooptest.Fault) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := sendlooptest.NewServer(t, sendlooptest.WithAPIKey(marker))
			srv.InjectFault("account.info.get", f)
			return srv.URL
		}
	}
	withHandler := func(h http.Handler) func(t *testing.T) string {
		return func(t *testing.T) string {
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			return hs.URL
		}
	}
	tests := []struct {
		name    string
		server  func(t *testing.T) string
		timeout time.Duration
	}{
		{"bad key", func(t *testing.T) string { return sendlooptest.NewServer(t).URL }, 0},
		{"5xx echoing the request", withHandler(echo(503, false)), 0},
		{"error envelope echoing the request", withHandler(echo(200, true)), 0},
		{"500 error envelope echoing the request", withHandler(echo(500, true)), 0},
		{"non-JSON body echoing the request", withHandler(echo(200, false)), 0},
		{"reset", withFault(sendlooptest.Fault{Times: 10, Reset: sendlooptest.ResetBeforeExecution}), 0},
		{"timeout", withFault(sendlooptest.Fault{Delay: 10 * time.Second}), 30 * time.Millisecond},
		{"retries exhausted", withFault(sendlooptest.Fault{Times: 10, Status: 502, Body: marker}), 0},
		{"retry-after over the cap", withFault(sendlooptest.Fault{Status: 429, RetryAfter: "3600", Body: "key=" + marker}), 0},
		{"JSON-escaped echo", withHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"Error":"unknown key %s"}`, strings.ReplaceAll(marker, "/", `\/`))
		})), 0},
		{"echo after a long run of spaces", withHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(502)
			fmt.Fprint(w, strings.Repeat(" ", 1040)+marker+strings.Repeat(" ", 70000)+marker)
		})), 0},
		{"echo in a malformed value", withHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `{"Success":true,"AccountInfo":{"MemberSince":"not a date %s"}}`, marker)
		})), 0},
		{"dial error", func(t *testing.T) string {
			u, err := testkit.DeadURL()
			require.NoError(t, err)
			return u
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs, logger := testkit.DebugLogger()
			c, err := sendloop.NewClient(marker, sendloop.WithBaseURL(tt.server(t)), sendloop.WithLogger(logger),
				sendloop.WithRetry(fastRetry))
			require.NoError(t, err)
			ctx, cancel := testkit.Context(tt.timeout)
			defer cancel()
			_, err = c.Account.Get(ctx)
			require.Error(t, err)

			for e := err; e != nil; e = errors.Unwrap(e) {
				for _, format := range []string{"%v", "%+v", "%#v", "%q"} {
					assert.NotContains(t, fmt.Sprintf(format, e), marker, "error (%s): %v", format, e)
				}
			}
			var httpErr *sendloop.HTTPError
			if errors.As(err, &httpErr) {
				assert.NotContains(t, httpErr.Excerpt, "zq7k")
			}
			var apiErr *sendloop.APIError
			if errors.As(err, &apiErr) {
				assert.NotContains(t, fmt.Sprint(apiErr.Message, apiErr.Fields), "zq7k")
			}
			assert.Contains(t, logs.String(), "sendloop request", "the debug logger saw the attempts")
			assert.NotContains(t, logs.String(), marker)
			assert.NotContains(t, logs.String(), "zq7k")
		})
	}
}

func TestNewPasswordNeverLeaks(t *testing.T) {
	t.Parallel()
	const password = "new-pass/word+MARKER"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		if strings.Contains(r.URL.Path, "timezones") {
			fmt.Fprint(w, `{"Success":true,"TimeZones":["UTC"]}`)
			return
		}
		fmt.Fprintf(w, `{"Success":false,"ErrorCode":115,"ErrorMessage":"Invalid password in %s","ErrorFields":["%s"]}`, body, body)
	}))
	defer hs.Close()
	c, err := sendloop.NewClient("some-key", sendloop.WithBaseURL(hs.URL))
	require.NoError(t, err)
	err = c.Account.Update(context.Background(), sendloop.AccountUpdateParams{NewPassword: password})
	require.ErrorIs(t, err, sendloop.ErrInvalidPassword)
	for _, format := range []string{"%v", "%+v", "%#v"} {
		text := fmt.Sprintf(format, err)
		assert.NotContains(t, text, "MARKER", format)
		assert.NotContains(t, text, "some-key", format)
	}
}

package legacy_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

// marker is an API key that must never appear in an error, a log line or a printed value.
// Its '/', '+' and '&' change under query and XML escaping; "zq7k" (not hex, so no pointer printed by %#v can hold it) finds any spelling.
const marker = "MARKER-KEY-zq7k/9+a&b"

// echo is everything a careless server could repeat of a request: the URL, the raw body,
// and the decoded form values, the message document included.
func echo(r *http.Request) string {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	return fmt.Sprintf("%s %s %v %v", r.URL.String(), body, form, r.URL.Query())
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	handler := func(h http.HandlerFunc) func(t *testing.T) string {
		return func(t *testing.T) string {
			hs := httptest.NewServer(h)
			t.Cleanup(hs.Close)
			return hs.URL
		}
	}
	withFault := func(f sendlooptest.Fault) func(t *testing.T) string {
		return func(t *testing.T) string {
			srv := sendlooptest.NewServer(t, sendlooptest.WithAPIKey(marker))
			srv.InjectFault("Media.Browse", f)
			return srv.URL
		}
	}
	xmlrpc := func(status int, value func(echoed string) string) func(t *testing.T) string {
		return handler(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprintf(w, `<?xml version="1.0"?><methodResponse><params><param><value>%s</value></param></params></methodResponse>`,
				value(echo(r)))
		})
	}
	tests := []struct {
		name    string
		server  func(t *testing.T) string
		timeout time.Duration
	}{
		{"a wrong key", func(t *testing.T) string { return sendlooptest.NewServer(t).URL }, 0},
		{"5xx page echoing the request", handler(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "<html>request %s refused</html>", echo(r))
		}), 0},
		{"non-XML body echoing the request", handler(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "request %s refused", echo(r))
		}), 0},
		{"failure struct echoing the request", xmlrpc(http.StatusOK, func(e string) string {
			return `<struct><member><name>APIError</name><value>Invalid API key ` + xmlEscape(e) +
				`</value></member><member><name>APIErrorCode</name><value>2</value></member></struct>`
		}), 0},
		{"failure struct echoing the request escaped twice", xmlrpc(http.StatusInternalServerError, func(e string) string {
			return `<struct><member><name>APIError</name><value>` + xmlEscape(xmlEscape(e)) +
				`</value></member><member><name>APIErrorCode</name><value>2</value></member></struct>`
		}), 0},
		{"fault echoing the request", handler(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>1</int></value></member>`+
				`<member><name>faultString</name><value>%s</value></member></struct></value></fault></methodResponse>`, xmlEscape(xmlEscape(echo(r))))
		}), 0},
		{"malformed answer echoing the request", xmlrpc(http.StatusOK, func(e string) string {
			return "<int>" + xmlEscape(e) + "</int>"
		}), 0},
		{"success answer echoing the request", xmlrpc(http.StatusOK, func(e string) string {
			return `<struct><member><name>MediaURL1</name><value>` + xmlEscape(e) + `</value></member>` +
				`<member><name>MediaURL2</name><value>` + xmlEscape(xmlEscape(e)) + `</value></member></struct>`
		}), 0},
		{"reset", withFault(sendlooptest.Fault{Times: 10, Reset: sendlooptest.ResetBeforeExecution}), 0},
		{"timeout", withFault(sendlooptest.Fault{Delay: 10 * time.Second}), 30 * time.Millisecond},
		{"retries exhausted", withFault(sendlooptest.Fault{Times: 10, Status: http.StatusBadGateway, Body: marker}), 0},
		{"Retry-After over the cap", withFault(sendlooptest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "3600", Body: "key=" + marker}), 0},
		{"dial error", func(t *testing.T) string {
			u, err := testkit.DeadURL()
			require.NoError(t, err)
			return u
		}, 0},
	}
	for _, form := range allForms {
		for _, tt := range tests {
			t.Run(form.String()+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				logs, logger := testkit.DebugLogger()
				c, err := legacy.NewClient(marker, legacy.WithBaseURL(tt.server(t)), legacy.WithLogger(logger),
					legacy.WithRetry(fastRetry), legacy.WithInputForm(form))
				require.NoError(t, err)
				ctx, cancel := testkit.Context(tt.timeout)
				defer cancel()
				library, err := c.MediaBrowse(ctx)
				var urls []string
				if library != nil {
					urls = library.URLs
				}
				for _, u := range urls {
					assert.NotContains(t, u, "zq7k", "a success value")
				}
				if tt.name == "success answer echoing the request" {
					require.NoError(t, err)
					require.Len(t, urls, 2)
					assert.Contains(t, urls[0], "[REDACTED]")
					return
				}
				require.Error(t, err)
				checkNoKey(t, err)
				assert.Contains(t, logs.String(), "sendloop request", "the debug logger saw the attempts")
				assert.NotContains(t, logs.String(), "zq7k")
			})
		}
	}
}

// checkNoKey asserts that no error in err's chain shows any spelling of the marker key.
func checkNoKey(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		for _, format := range []string{"%v", "%+v", "%#v", "%q", "%s"} {
			assert.NotContains(t, fmt.Sprintf(format, e), "zq7k", "error (%s): %v", format, e)
		}
	}
	var he *legacy.HTTPError
	if errors.As(err, &he) {
		assert.NotContains(t, he.Excerpt+he.Reason, "zq7k")
	}
	var apiErr *legacy.Error
	if errors.As(err, &apiErr) {
		assert.NotContains(t, apiErr.Message, "zq7k")
	}
	var fault *legacy.Fault
	if errors.As(err, &fault) {
		assert.NotContains(t, fault.Message, "zq7k")
	}
}

// TestKeyNeverLeaksFromTheTransport covers an HTTP client whose own error quotes the URL,
// which holds the key in the GET forms.
func TestKeyNeverLeaksFromTheTransport(t *testing.T) {
	t.Parallel()
	for _, form := range allForms {
		t.Run(form.String(), func(t *testing.T) {
			t.Parallel()
			failing := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return nil, fmt.Errorf("proxy refused %s (query %v)", r.URL.String(), r.URL.Query())
			})
			c, err := legacy.NewClient(marker, legacy.WithBaseURL("https://legacy.example"), legacy.WithInputForm(form),
				legacy.WithHTTPClient(&http.Client{Transport: failing}), legacy.WithRetry(legacy.RetryPolicy{MaxRetries: -1}))
			require.NoError(t, err)
			_, err = c.SubscriberAdd(context.Background(), 1, legacy.SubscriberAddParams{EmailAddress: "a@example.com", SubscriptionIP: "192.0.2.1"})
			require.Error(t, err)
			if form == legacy.GetForm || form == legacy.MessageGetForm {
				assert.Contains(t, err.Error(), "[REDACTED]", "the URL was quoted, without its key")
			}
			checkNoKey(t, err)
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

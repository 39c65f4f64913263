package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/webhook"
)

const secret = "s3cret-t0ken"

// recorder collects the events a Handler delivers.
type recorder struct {
	mu     sync.Mutex
	events []*webhook.Event
	err    error
}

func (rec *recorder) handle(_ context.Context, ev *webhook.Event) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.events = append(rec.events, ev)
	return rec.err
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.events)
}

func TestHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		opts        []webhook.Option
		callbackErr error
		method      string
		target      string
		header      http.Header
		contentType string
		body        string
		wantCode    int
		wantBody    string // substring
		wantEvent   *webhook.Event
	}{
		{name: "xml", body: canonicalXML, contentType: "text/xml", wantCode: 200, wantBody: "OK", wantEvent: canonicalEvent()},
		{name: "form", body: canonicalForm, contentType: "application/x-www-form-urlencoded", wantCode: 200, wantEvent: canonicalEvent()},
		{name: "json", body: canonicalJSON, contentType: "application/json", wantCode: 200, wantEvent: canonicalEvent()},
		{name: "sniffed without content type", body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "GET not allowed", method: "GET", wantCode: 405, wantBody: "method not allowed"},
		{name: "PUT not allowed", method: "PUT", body: canonicalXML, wantCode: 405},
		{name: "body too large", opts: []webhook.Option{webhook.WithMaxBodyBytes(100)}, body: canonicalXML, wantCode: 413, wantBody: "too large"},
		{name: "limit ignored when not positive", opts: []webhook.Option{webhook.WithMaxBodyBytes(0)}, body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "token in query", opts: []webhook.Option{webhook.WithToken(secret)}, target: "/hook?token=" + secret, body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "token in header", opts: []webhook.Option{webhook.WithToken(secret)}, header: http.Header{"X-Sendloop-Token": {secret}}, body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "header wins over query", opts: []webhook.Option{webhook.WithToken(secret)}, target: "/hook?token=" + secret, header: http.Header{"X-Sendloop-Token": {"nope"}}, body: canonicalXML, wantCode: 401},
		{name: "wrong token", opts: []webhook.Option{webhook.WithToken(secret)}, target: "/hook?token=" + secret + "x", body: canonicalXML, wantCode: 401, wantBody: "unauthorized"},
		{name: "missing token", opts: []webhook.Option{webhook.WithToken(secret)}, body: canonicalXML, wantCode: 401},
		{name: "token ignored when not required", target: "/hook?token=whatever", body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "callback error", callbackErr: errors.New("db down: password=hunter2"), body: canonicalXML, wantCode: 500, wantBody: "internal error", wantEvent: canonicalEvent()},
		{name: "unknown action", body: strings.Replace(canonicalXML, ">Subscription<", ">Bounce<", 1), wantCode: 400, wantBody: "unknown action"},
		{name: "missing email", body: `Action=Subscription&Subscriber[SubscriberID]=3`, wantCode: 400, wantBody: "missing email address"},
		{name: "unparseable", contentType: "application/json", body: `{"Action":`, wantCode: 400, wantBody: "json body"},
		{name: "empty body", wantCode: 400, wantBody: "empty body"},
		{name: "missing action", body: `EmailAddress=a%40b`, wantCode: 400, wantBody: "missing action"},
		{name: "default kind fills missing action", opts: []webhook.Option{webhook.WithDefaultKind(webhook.KindUnsubscription)}, body: `EmailAddress=a%40b`, wantCode: 200,
			wantEvent: &webhook.Event{Kind: webhook.KindUnsubscription, Subscriber: sendloop.Subscriber{EmailAddress: "a@b"}}},
		{name: "default kind does not override", opts: []webhook.Option{webhook.WithDefaultKind(webhook.KindUnsubscription)}, body: canonicalXML, wantCode: 200, wantEvent: canonicalEvent()},
		{name: "default kind does not excuse unknown action", opts: []webhook.Option{webhook.WithDefaultKind(webhook.KindSubscription)}, body: `Action=x&EmailAddress=a%40b`, wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{err: tt.callbackErr}
			h := mustHandler(t, rec.handle, tt.opts...)

			method, target := tt.method, tt.target
			if method == "" {
				method = http.MethodPost
			}
			if target == "" {
				target = "/hook"
			}
			r := httptest.NewRequest(method, target, strings.NewReader(tt.body))
			for k, v := range tt.header {
				r.Header[k] = v
			}
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)

			if w.Code != tt.wantCode {
				t.Errorf("status = %d, want %d (body %q)", w.Code, tt.wantCode, w.Body)
			}
			if !strings.Contains(w.Body.String(), tt.wantBody) {
				t.Errorf("body %q does not contain %q", w.Body, tt.wantBody)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type = %q, want text/plain", ct)
			}
			if tt.wantCode == 405 && w.Header().Get("Allow") != "POST" {
				t.Errorf("Allow = %q, want POST", w.Header().Get("Allow"))
			}
			for _, leak := range []string{secret, "hunter2", "a@b", "ann@example.com"} {
				if strings.Contains(w.Body.String(), leak) {
					t.Errorf("response %q leaks %q", w.Body, leak)
				}
			}
			if tt.wantEvent == nil {
				if rec.count() != 0 {
					t.Errorf("callback called %d times, want 0", rec.count())
				}
				return
			}
			if rec.count() != 1 {
				t.Fatalf("callback called %d times, want 1", rec.count())
			}
			assertEvent(t, rec.events[0], tt.wantEvent)
		})
	}
}

// TestHandlerServer checks the limit against a chunked body of unknown
// length, and the callback context, over a real connection.
func TestHandlerServer(t *testing.T) {
	t.Parallel()
	type ctxKey struct{}
	var gotCtx atomic.Bool
	h := mustHandler(t, func(ctx context.Context, _ *webhook.Event) error {
		gotCtx.Store(ctx.Value(ctxKey{}) == "v")
		return nil
	}, webhook.WithMaxBodyBytes(int64(len(canonicalXML))))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, "v")))
	}))
	defer srv.Close()

	tests := []struct {
		name     string
		body     string
		wantCode int
	}{
		{"at the limit", canonicalXML, 200},
		{"over the limit", canonicalXML + " ", 413},
	}
	for _, tt := range tests {
		// Hide the length so that the handler must count.
		body := io.MultiReader(strings.NewReader(tt.body))
		resp, err := srv.Client().Post(srv.URL, "text/xml", body) // not http.DefaultClient: parallel tests close its connections
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tt.wantCode {
			t.Errorf("%s: status = %d, want %d", tt.name, resp.StatusCode, tt.wantCode)
		}
	}
	if !gotCtx.Load() {
		t.Error("callback did not get the request context")
	}
}

func TestHandlerLogging(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := mustHandler(t, func(context.Context, *webhook.Event) error { return errors.New("boom") },
		webhook.WithToken(secret), webhook.WithLogger(logger))

	for _, target := range []string{"/hook?token=" + secret, "/hook?token=wrong"} {
		r := httptest.NewRequest("POST", target, strings.NewReader(canonicalXML))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{"webhook callback failed", "error=boom", "subscriber_id=12", "status=401", "path=/hook"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, leak := range []string{secret, "wrong", "ann@example.com"} {
		if strings.Contains(out, leak) {
			t.Errorf("log leaks %q:\n%s", leak, out)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}

// mustHandler builds a Handler or fails the test.
func mustHandler(t *testing.T, fn func(context.Context, *webhook.Event) error, opts ...webhook.Option) *webhook.Handler {
	t.Helper()
	h, err := webhook.NewHandler(fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestNewHandlerOptions checks that bad option values are errors from NewHandler, each
// named, and that good ones build a Handler.
func TestNewHandlerOptions(t *testing.T) {
	t.Parallel()
	fn := func(context.Context, *webhook.Event) error { return nil }
	tests := []struct {
		name    string
		opts    []webhook.Option
		wantErr []string // substrings; nil: no error
	}{
		{name: "none"},
		{name: "all good", opts: []webhook.Option{webhook.WithToken(secret), webhook.WithDefaultKind(webhook.KindSubscription),
			webhook.WithListIDParam("list"), webhook.WithMaxBodyBytes(10), webhook.WithLogger(nil), nil}},
		{name: "empty token", opts: []webhook.Option{webhook.WithToken("")}, wantErr: []string{"WithToken: empty token"}},
		{name: "unknown default kind", opts: []webhook.Option{webhook.WithDefaultKind("Bounce")}, wantErr: []string{`WithDefaultKind: unknown kind "Bounce"`}},
		{name: "empty list parameter", opts: []webhook.Option{webhook.WithListIDParam(" ")}, wantErr: []string{"WithListIDParam: empty parameter name"}},
		{name: "list parameter is the token's", opts: []webhook.Option{webhook.WithListIDParam(webhook.TokenParam)}, wantErr: []string{"WithListIDParam", "token"}},
		{name: "every bad option named", opts: []webhook.Option{webhook.WithToken(""), webhook.WithListIDParam(""), webhook.WithDefaultKind("")},
			wantErr: []string{"WithToken", "WithListIDParam", "WithDefaultKind"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := webhook.NewHandler(fn, tt.opts...)
			if tt.wantErr == nil {
				if err != nil || h == nil {
					t.Fatalf("NewHandler = %v, %v; want a Handler", h, err)
				}
				return
			}
			if err == nil || h != nil {
				t.Fatalf("NewHandler = %v, %v; want an error", h, err)
			}
			if !errors.Is(err, webhook.ErrInvalidOption) {
				t.Errorf("%v does not match ErrInvalidOption", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestNewHandlerNilCallbackPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	_, _ = webhook.NewHandler(nil)
}

// TestHandlerListID checks where a Handler told WithListIDParam takes the list ID from,
// and that it never passes on an event without one.
func TestHandlerListID(t *testing.T) {
	t.Parallel()
	noList := strings.Replace(canonicalXML, "<ListID>3</ListID>", "", 1)
	list4 := strings.Replace(canonicalXML, "<ListID>3</ListID>", "<ListID>4</ListID>", 1)
	tests := []struct {
		name     string
		query    string
		body     string
		wantCode int
		wantBody string
		wantList int
	}{
		{name: "query only", query: "?list=7", body: noList, wantCode: 200, wantList: 7},
		{name: "query with the token", query: "?token=x&list=7", body: noList, wantCode: 200, wantList: 7},
		{name: "query with spaces", query: "?list=%207%20", body: noList, wantCode: 200, wantList: 7},
		{name: "body only", body: canonicalXML, wantCode: 200, wantList: 3},
		{name: "empty query value, body has it", query: "?list=", body: canonicalXML, wantCode: 200, wantList: 3},
		{name: "query and body agree", query: "?list=3", body: canonicalXML, wantCode: 200, wantList: 3},
		{name: "repeated, same value", query: "?list=7&list=7", body: noList, wantCode: 200, wantList: 7},
		{name: "missing everywhere", body: noList, wantCode: 400, wantBody: "missing list ID"},
		{name: "empty query value, none in the body", query: "?list=", body: noList, wantCode: 400, wantBody: "missing list ID"},
		{name: "another parameter", query: "?List=7", body: noList, wantCode: 400, wantBody: "missing list ID"},
		{name: "query and body differ", query: "?list=3", body: list4, wantCode: 400, wantBody: "differs"},
		{name: "repeated, different values", query: "?list=7&list=8", body: noList, wantCode: 400, wantBody: "conflicting"},
		{name: "not a number", query: "?list=x", body: noList, wantCode: 400, wantBody: "invalid list ID"},
		{name: "zero", query: "?list=0", body: canonicalXML, wantCode: 400, wantBody: "invalid list ID"},
		{name: "negative", query: "?list=-3", body: canonicalXML, wantCode: 400, wantBody: "invalid list ID"},
		{name: "beyond the IDs' int32", query: "?list=2147483648", body: noList, wantCode: 400, wantBody: "invalid list ID"},
		{name: "the largest ID", query: "?list=2147483647", body: noList, wantCode: 200, wantList: 2147483647},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			h := mustHandler(t, rec.handle, webhook.WithListIDParam("list"))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/hook"+tt.query, strings.NewReader(tt.body)))
			if w.Code != tt.wantCode || !strings.Contains(w.Body.String(), tt.wantBody) {
				t.Fatalf("answer %d %q, want %d with %q", w.Code, w.Body, tt.wantCode, tt.wantBody)
			}
			if tt.wantCode != 200 {
				if rec.count() != 0 {
					t.Fatal("a refused delivery reached the callback")
				}
				return
			}
			if rec.count() != 1 || rec.events[0].ListID != tt.wantList {
				t.Fatalf("events %+v, want one of list %d", rec.events, tt.wantList)
			}
		})
	}
}

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpExport is one POST the test collector received.
type otlpExport struct {
	path, auth string
	spans      []string // span names
	service    []string // service.name of each resource
}

// otlpCollector is an OTLP/HTTP receiver: it hands each export to the test on a channel,
// before it answers, so that once the CLI's run returned (it flushes before it does) every
// export is on the channel.
type otlpCollector struct {
	srv     *httptest.Server
	exports chan otlpExport
}

// newOTLPCollector starts a collector that answers status (and, when not 200, echoes the
// Authorization header in its body: the CLI must not print it).
func newOTLPCollector(t *testing.T, status int) *otlpCollector {
	t.Helper()
	c := &otlpCollector{exports: make(chan otlpExport, 16)}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if !assert.NoError(t, err) || !assert.Equal(t, http.MethodPost, r.Method) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		assert.NoError(t, proto.Unmarshal(body, &req), "an OTLP protobuf export")
		e := otlpExport{path: r.URL.Path, auth: r.Header.Get("Authorization")}
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.GetKey() == "service.name" {
					e.service = append(e.service, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					e.spans = append(e.spans, s.GetName())
				}
			}
		}
		c.exports <- e
		if status != http.StatusOK {
			http.Error(w, "refused: "+e.auth, status)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// received returns the exports so far.
func (c *otlpCollector) received() []otlpExport {
	var out []otlpExport
	for {
		select {
		case e := <-c.exports:
			out = append(out, e)
		default:
			return out
		}
	}
}

// runTraced runs the CLI in this process with vars as its whole environment, exporting
// through the collector's own client.
func runTraced(t *testing.T, c *otlpCollector, vars map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), args, &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return vars[k] }, otlpClient: c.srv.Client()})
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func TestOTLPExport(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-collector-key"
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "members.csv", "EmailAddress\nann@example.com\ndan@example.com\n")
	textPath := writeFile(t, dir, "body.txt", "Hello.\n")
	tests := []struct {
		name    string
		status  int // the collector's answer
		env     func(url string) map[string]string
		args    []string
		code    int
		exports int      // requests the collector gets
		stderr  []string // in stderr
		service string
		auth    string   // the Authorization header the collector gets
		spans   []string // among the spans exported; nil: the lists command's
	}{
		{
			name:   "the endpoint variable turns it on",
			status: http.StatusOK,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPEndpoint: u, envOTLPHeaders: "authorization=Bearer%20" + secret}
			},
			args: []string{"--fake", "lists"}, code: exitOK, exports: 1, service: "sendloop", auth: "Bearer " + secret,
		},
		{
			name:   "--otel overrides OTEL_TRACES_EXPORTER=none, to the traces endpoint as it is",
			status: http.StatusOK,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPTracesEndpoint: u + "/v1/traces", envTracesExporter: "none",
					envOTLPProtocol: "http/protobuf", envServiceName: "nightly-sync"}
			},
			args: []string{"lists", "--fake", "--otel"}, code: exitOK, exports: 1, service: "nightly-sync",
		},
		{
			name:   "a sync's dry run",
			status: http.StatusOK,
			env:    func(u string) map[string]string { return map[string]string{envOTLPEndpoint: u + "/"} },
			args:   []string{"--fake", "--quiet", "sync", "--list", "1", "--csv", csvPath, "--dry-run"},
			code:   exitOK, exports: 1, service: "sendloop",
			spans: []string{"sendloop sync", "sendloop list.get", "sendloop subscriber.browse"},
		},
		{
			name:   "a relay message",
			status: http.StatusOK,
			env:    func(u string) map[string]string { return map[string]string{envOTLPEndpoint: u} },
			args: []string{"--fake", "send", "--from", "shop@example.com", "--to", "ann@example.net",
				"--subject", "Receipt", "--text", textPath},
			code: exitOK, exports: 1, service: "sendloop",
			spans: []string{"sendloop send", "sendloop smtp.send"},
		},
		{
			name:   "OTEL_TRACES_EXPORTER=none turns it off",
			status: http.StatusOK,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPEndpoint: u, envTracesExporter: "none"}
			},
			args: []string{"--fake", "lists"}, code: exitOK, exports: 0,
		},
		{
			name:   "grpc is refused before the command runs",
			status: http.StatusOK,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPEndpoint: u, envOTLPProtocol: "grpc"}
			},
			args: []string{"--fake", "lists"}, code: exitUsage, exports: 0,
			stderr: []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "http/protobuf only"},
		},
		{
			name:   "an endpoint that is no URL is refused without its value",
			status: http.StatusOK,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPEndpoint: "ftp://user:" + secret + "@collector"}
			},
			args: []string{"--fake", "lists"}, code: exitUsage, exports: 0,
			stderr: []string{"OTEL_EXPORTER_OTLP_ENDPOINT is not an http or https URL"},
		},
		{
			name:   "a collector's refusal is a note, not a failure",
			status: http.StatusBadRequest,
			env: func(u string) map[string]string {
				return map[string]string{envOTLPEndpoint: u, envOTLPTracesHeaders: "Authorization=Bearer " + secret}
			},
			args: []string{"--fake", "lists"}, code: exitOK, exports: 1, service: "sendloop", auth: "Bearer " + secret,
			stderr: []string{"sendloop: traces not exported: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newOTLPCollector(t, tt.status)
			r := runTraced(t, c, tt.env(c.srv.URL), tt.args...)
			assert.Equal(t, tt.code, r.code, "stderr: %s", r.stderr)
			for _, want := range tt.stderr {
				assert.Contains(t, r.stderr, want)
			}
			if len(tt.stderr) == 0 {
				assert.Empty(t, r.stderr)
			}
			assert.NotContains(t, r.stderr, secret)
			if tt.code == exitOK {
				assert.LessOrEqual(t, strings.Count(r.stderr, "\n"), 1, "a note of one line at most: %s", r.stderr)
			}
			assert.NotContains(t, r.stdout, secret)
			got := c.received()
			require.Len(t, got, tt.exports)
			if tt.exports == 0 {
				return
			}
			e := got[0]
			assert.Equal(t, "/v1/traces", e.path)
			assert.Equal(t, tt.auth, e.auth, "the headers variable's credentials are sent")
			assert.Contains(t, e.service, tt.service)
			want := tt.spans
			if want == nil {
				want = []string{"sendloop lists", "sendloop list.getlist"} // the command's and its call's
			}
			for _, name := range want {
				assert.Contains(t, e.spans, name)
			}
			for _, name := range e.spans {
				assert.NotContains(t, name, secret)
			}
		})
	}
}

// TestOTLPCollectorDown: a collector nobody listens at costs a note, within the flush's
// bound, and the command's own exit status stands.
func TestOTLPCollectorDown(t *testing.T) {
	t.Parallel()
	c := newOTLPCollector(t, http.StatusOK)
	down := c.srv.URL
	c.srv.Close() // its port now refuses connections
	start := time.Now()
	r := runTraced(t, c, map[string]string{envOTLPEndpoint: down}, "--fake", "lists")
	assert.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	assert.Less(t, time.Since(start), tracingFlushTimeout+2*time.Second, "the flush is bounded")
	assert.True(t, strings.HasPrefix(r.stderr, "sendloop: traces not exported: "), "stderr: %s", r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %s", r.stderr)
	assert.NotContains(t, r.stderr, down)
	assert.NotEmpty(t, r.stdout, "the lists are printed")
}

// TestOTLPCollectorHangs: a collector that takes the request and never answers holds the
// tool up for the flush's bound only.
func TestOTLPCollectorHangs(t *testing.T) {
	t.Parallel()
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handler returns, Close does not wait
	var stdout, stderr bytes.Buffer
	code := run(testContext(t), []string{"--fake", "lists"}, &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return map[string]string{envOTLPEndpoint: srv.URL}[k] }, otlpClient: srv.Client(),
		otlpFlush: 100 * time.Millisecond})
	assert.Equal(t, exitOK, code, "stderr: %s", stderr.String())
	assert.Equal(t, "sendloop: traces not exported: the OTLP endpoint did not answer within 100ms\n", stderr.String())
	assert.NotEmpty(t, stdout.String(), "the lists are printed")
	select {
	case <-got:
	default:
		t.Error("the collector got no export")
	}
}

func TestOTLPHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string
		err  string
	}{
		{"none", nil, map[string]string{}, ""},
		{"decoded, the traces variable over the general one",
			map[string]string{envOTLPHeaders: "api-key=a%20b, x-team=mail", envOTLPTracesHeaders: "Api-Key=c"},
			map[string]string{"Api-Key": "c", "X-Team": "mail"}, ""},
		{"an entry without a value", map[string]string{envOTLPHeaders: "api-key=secretvalue,broken"}, nil,
			"OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"},
		{"a bad escape", map[string]string{envOTLPTracesHeaders: "k=%zzsecretvalue"}, nil,
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := otlpHeaders(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.NotContains(t, err.Error(), "secretvalue")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

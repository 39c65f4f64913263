package sendlooptest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// Server is an in-memory fake of the service on a loopback address. Its methods are safe
// for concurrent use.
type Server struct {
	// URL is the base URL to give the client, e.g. http://127.0.0.1:41234.
	URL string
	// APIKey is the one key the server accepts.
	APIKey string

	hs       *httptest.Server
	listener net.Listener

	relayUser, relayPassword string // the account's relay credentials (StartRelay)

	mu         sync.Mutex
	now        func() time.Time
	allowedIPs []string        // empty: every address
	requests   []loggedRequest // a ring of the newest logSize requests, oldest at logStart
	logStart   int
	logSize    int
	onRequest  func(Request)
	executions map[string]int
	faults     map[string][]*Fault
	state      *state
	latency    latency // WithLatency

	control atomic.Pointer[Control] // StartControl

	webhookPolicy WebhookPolicy
	webhooks      []WebhookDelivery
	deliverMu     sync.Mutex // serialises webhook delivery (deliverWebhooks)
}

// Option configures a Server in NewServer.
type Option func(*Server)

// WithAPIKey sets the key the server accepts instead of a random one.
func WithAPIKey(key string) Option { return func(s *Server) { s.APIKey = key } }

// WithClock sets the server's clock, for answers that carry dates (default: the host's).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithListener serves on ln instead of a random loopback port, e.g. for a fixed address.
func WithListener(ln net.Listener) Option { return func(s *Server) { s.listener = ln } }

// DefaultRequestLogSize is how many requests a Server keeps for Requests and LastRequest
// unless WithRequestLog says otherwise: the newest ones, so that a long-lived fake's memory
// does not grow with its traffic.
const DefaultRequestLogSize = 10000

// WithRequestLog keeps the newest n requests for Requests and LastRequest (n < 0: all of
// them; 0: none).
func WithRequestLog(n int) Option { return func(s *Server) { s.logSize = n } }

// WithRequestHook calls fn once for every request, as it arrives and before it is
// answered, in the request's goroutine (calls may run concurrently). The Request's Form is
// shared with the server: fn must not modify it. It sees requests whether or not the log
// keeps them.
func WithRequestHook(fn func(Request)) Option { return func(s *Server) { s.onRequest = fn } }

// Start starts a fake on a loopback port (or on the listener of WithListener), for programs
// rather than tests: the caller calls Close.
func Start(opts ...Option) (*Server, error) {
	s := &Server{
		APIKey:     "sltest_" + randomHex(16),
		now:        time.Now,
		executions: map[string]int{},
		faults:     map[string][]*Fault{},
		logSize:    DefaultRequestLogSize,
	}
	for _, opt := range opts {
		opt(s)
	}
	ln := s.listener
	if ln == nil {
		var err error
		if ln, err = listenLoopback(); err != nil {
			return nil, err
		}
	}
	s.state = newState(s.now())
	s.relayUser, s.relayPassword = "relay-"+randomHex(4)+"@example.com", randomHex(12)
	s.hs = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}}
	s.hs.Start()
	s.URL = s.hs.URL
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.hs.Close() }

// RelayCredentials returns the user name and password of the account's relay, which
// StartRelay requires.
func (s *Server) RelayCredentials() (username, password string) { return s.relayUser, s.relayPassword }

// StartRelay starts the account's SMTP relay: a fake relay on loopback that requires the
// account's relay credentials (RelayCredentials). With a non-nil t it is closed when the
// test ends; with nil (in a program) call its Close.
func (s *Server) StartRelay(t TB, opts ...RelayOption) (*Relay, error) {
	if t != nil {
		t.Helper()
	}
	serverLatency := func(c *relayConfig) { c.latency, c.clock = &s.latency, s.clockNow }
	return StartRelay(t, s.relayUser, s.relayPassword, append([]RelayOption{serverLatency}, opts...)...)
}

// clockNow reads the server's clock, which SetClock may replace meanwhile.
func (s *Server) clockNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

// SetClock replaces the server's clock.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// AllowIPs restricts the API key to the given client addresses, as the service's IP binding
// does: any other address gets error 103. No argument lifts the restriction. The client of
// a test runs on 127.0.0.1.
func (s *Server) AllowIPs(ips ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowedIPs = slices.Clone(ips)
}

// Request is a request the server received, as it received it.
type Request struct {
	Time       time.Time   // when it arrived, by the server's clock
	Method     string      // the HTTP method
	Path       string      // the URL path, without the query
	Command    string      // as written in the path
	Format     string      // the format the path names ("json", "xml", "php"); "" for none
	Body       []byte      // the body, byte for byte
	Form       url.Values  // body and query parameters together
	Header     http.Header // the request's headers, as received
	RemoteAddr string      // the client's address, host:port
}

// Requests returns the requests received so far, oldest first: the newest
// DefaultRequestLogSize of them unless WithRequestLog says otherwise.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, 0, len(s.requests))
	for _, part := range [][]loggedRequest{s.requests[s.logStart:], s.requests[:s.logStart]} {
		for _, r := range part {
			out = append(out, r.request())
		}
	}
	return out
}

// logRequest adds r to the log, dropping the oldest request when it is full; the caller
// holds s.mu.
func (s *Server) logRequest(r loggedRequest) {
	switch {
	case s.logSize == 0:
	case s.logSize < 0 || len(s.requests) < s.logSize:
		s.requests = append(s.requests, r)
	default:
		s.requests[s.logStart] = r
		s.logStart = (s.logStart + 1) % len(s.requests)
	}
}

// loggedRequest is a Request as the log keeps it: its Form is parsed again when asked for,
// so that the log holds one byte slice per request rather than thousands of strings (an
// import carries thousands of keys, and a long-lived fake would carry them all).
type loggedRequest struct {
	Request
	rawQuery string
}

func (l loggedRequest) request() Request {
	r := l.Request
	r.Form = requestForm(r.Body, l.rawQuery)
	return r
}

// requestForm merges the body's parameters and the query's, the body's first.
func requestForm(body []byte, rawQuery string) url.Values {
	return withQuery(parseForm(body), rawQuery)
}

// withQuery adds the query's parameters that form lacks.
func withQuery(form url.Values, rawQuery string) url.Values {
	query, _ := url.ParseQuery(rawQuery)
	for k, v := range query {
		if _, inBody := form[k]; !inBody {
			form[k] = v
		}
	}
	return form
}

// LastRequest returns the newest request, or the zero Request.
func (s *Server) LastRequest() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}
	}
	newest := s.logStart - 1
	if newest < 0 {
		newest = len(s.requests) - 1
	}
	return s.requests[newest].request()
}

// Executions returns how many times command was executed: requests that reached the
// command's logic, not those refused before it or cut by a fault before execution.
func (s *Server) Executions(command string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.executions[strings.ToLower(command)]
}

// ResetMode tells when a Fault resets the connection.
type ResetMode int

const (
	// NoReset leaves the connection alone.
	NoReset ResetMode = iota
	// ResetBeforeExecution resets the connection without executing the command.
	ResetBeforeExecution
	// ResetAfterExecution executes the command, then resets the connection before answering:
	// the client cannot know that its request was processed.
	ResetAfterExecution
)

// Fault is a failure to inject into the next calls of a command.
type Fault struct {
	// Times is how many calls the fault applies to; 0 means one.
	Times int
	// Delay holds the answer back, e.g. to make a client time out.
	Delay time.Duration
	// Status answers with this HTTP status without executing the command. The body is Body,
	// or a short HTML page; with ErrorCode set, an API error envelope.
	Status int
	// RetryAfter is sent as the Retry-After header with Status.
	RetryAfter string
	// Body replaces the default body sent with Status.
	Body string
	// ErrorCode answers with this API error instead of executing the command.
	ErrorCode int
	// Reset resets the connection, before or after executing the command.
	Reset ResetMode
}

// InjectFault queues f for the next calls of command (case-insensitive; "*" for any
// command). Faults queued for the same command apply one after the other.
func (s *Server) InjectFault(command string, f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(command)
	s.faults[key] = append(s.faults[key], &f)
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

func (s *Server) takeFault(command string) *Fault {
	for _, key := range []string{strings.ToLower(command), "*"} {
		queue := s.faults[key]
		if len(queue) == 0 {
			continue
		}
		f := *queue[0]
		if queue[0].Times--; queue[0].Times == 0 {
			s.faults[key] = queue[1:]
		}
		return &f
	}
	return nil
}

// apiError is a failure answered in the service's envelope.
type apiError struct {
	code    int
	message string
	fields  []string
	status  int // HTTP status; 0 means 200
}

func (e *apiError) Error() string { return fmt.Sprintf("error %d: %s", e.code, e.message) }

// call is one command invocation as its handler sees it.
type call struct {
	srv  *Server
	st   *state
	form url.Values
	rows *importParams // subscriber.import's rows, kept out of form (parseParams)
	now  time.Time
	ip   string
}

// handler executes a command with the server's lock held.
var formats = map[string]bool{"json": true, "xml": true, "php": true}

// route serves an address other than /api/v3/<command>/<format>: the legacy endpoint and
// the person operations register theirs from their own files.
type route struct {
	// name gives the command name used for the request log, faults and counters.
	name func(r *http.Request, form url.Values) string
	// serve answers the request. The fault, if any, has already been applied up to its
	// execution step: serve handles ErrorCode and ResetAfterExecution itself.
	serve func(s *Server, w http.ResponseWriter, r *http.Request, form url.Values, fault *Fault)
}

// routes holds the extra addresses, by exact path: the legacy endpoint, and the person
// operations at the addresses the command table gives them.
var routes = func() map[string]route {
	out := map[string]route{LegacyPath: {name: legacyName, serve: (*Server).serveLegacy}}
	for _, spec := range cmdtable.All() {
		if spec.API == cmdtable.Person {
			out[spec.Path] = personRoute(spec.Name, spec.Method)
		}
	}
	return out
}()

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if c := s.control.Load(); c != nil && isControlPath(r.URL.Path) {
		c.serveHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	form, rows := parseParams(body)
	// The key counts only in the body, where the service wants it: a client that moved it
	// into the URL must fail here as it would there.
	key := form.Get("APIKey")
	form = withQuery(form, r.URL.RawQuery)
	var name, format string
	rt, isRoute := routes[r.URL.Path]
	if isRoute {
		name = rt.name(r, form)
	} else {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3/")
		name, format, _ = strings.Cut(rest, "/")
		if !ok || name == "" || strings.Contains(format, "/") {
			http.NotFound(w, r)
			return
		}
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)

	s.mu.Lock()
	logged := loggedRequest{Request{Time: s.now(), Method: r.Method, Path: r.URL.Path, Command: name,
		Format: format, Body: body, Header: r.Header.Clone(), RemoteAddr: r.RemoteAddr}, r.URL.RawQuery}
	s.logRequest(logged)
	fault := s.takeFault(name)
	s.mu.Unlock()
	if s.onRequest != nil {
		logged.Form = form
		s.onRequest(logged.Request)
	}

	// The latency is spent here, outside the lock: concurrent requests overlap.
	if d := s.latency.next(); d > 0 && !sleep(r, d) {
		return
	}
	if !applyFault(w, r, fault) {
		return
	}
	if isRoute {
		rt.serve(s, w, r, form, fault)
		s.deliverWebhooks()
		return
	}
	if !formats[format] {
		s.reply(w, "json", nil, &apiError{code: 100, message: "Invalid response format"})
		return
	}
	answer, apiErr := s.execute(name, form, rows, key, ip, fault)
	s.deliverWebhooks()
	if fault != nil && fault.Reset == ResetAfterExecution {
		resetConnection(w)
		return
	}
	s.reply(w, format, answer, apiErr)
}

// applyFault carries out the parts of a fault that come before execution: the delay, a
// reset before execution, a bare HTTP status. It reports whether the request goes on.
func applyFault(w http.ResponseWriter, r *http.Request, fault *Fault) bool {
	if fault == nil {
		return true
	}
	if fault.Delay > 0 && !sleep(r, fault.Delay) {
		return false
	}
	if fault.Reset == ResetBeforeExecution {
		resetConnection(w)
		return false
	}
	if fault.Status != 0 && fault.ErrorCode == 0 {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		page := fault.Body
		if page == "" {
			page = fmt.Sprintf("<html><body><h1>%d %s</h1></body></html>", fault.Status, http.StatusText(fault.Status))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(fault.Status)
		_, _ = io.WriteString(w, page)
		return false
	}
	return true
}

// countExecution records that a command reached its logic; the caller holds s.mu.
func (s *Server) countExecution(name string) { s.executions[strings.ToLower(name)]++ }

func (s *Server) execute(name string, form url.Values, rows *importParams, key, ip string, fault *Fault) (object, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" || key != s.APIKey {
		return nil, &apiError{code: 104, message: "Invalid API key"}
	}
	if len(s.allowedIPs) > 0 && !slices.Contains(s.allowedIPs, ip) {
		return nil, &apiError{code: 103, message: "IP address is not authorized to the API connection"}
	}
	cmd, ok := commands[strings.ToLower(name)]
	if !ok {
		return nil, &apiError{code: 101, message: "Invalid API command"}
	}
	if fault != nil && fault.ErrorCode != 0 {
		return nil, &apiError{code: fault.ErrorCode, message: "Injected error", status: fault.Status}
	}
	var absent []string
	for _, p := range cmd.required {
		if strings.TrimSpace(form.Get(p)) == "" && !hasArray(form, p) && !rows.has(p) {
			absent = append(absent, p)
		}
	}
	if len(absent) > 0 {
		return nil, &apiError{code: 105, message: "Required parameter(s) missing", fields: absent}
	}
	s.countExecution(name)
	return cmd.run(&call{srv: s, st: s.state, form: form, rows: rows, now: s.now(), ip: ip})
}

// hasArray reports whether a bracketed parameter such as Recipients[] or Fields[x] is set.
func hasArray(form url.Values, name string) bool {
	for k, v := range form {
		if strings.HasPrefix(k, name+"[") && len(v) > 0 {
			return true
		}
	}
	return false
}

func (s *Server) reply(w http.ResponseWriter, format string, answer object, apiErr *apiError) {
	status := http.StatusOK
	var doc object
	if apiErr != nil {
		fields := apiErr.fields
		if fields == nil {
			fields = []string{}
		}
		doc = object{{"Success", false}, {"ErrorCode", apiErr.code}, {"ErrorMessage", apiErr.message}, {"ErrorFields", fields}}
		if apiErr.status != 0 {
			status = apiErr.status
		}
	} else {
		doc = append(object{{"Success", true}}, answer...)
	}
	buf := answerBufs.Get().(*[]byte)
	out := (*buf)[:0]
	switch format {
	case "xml":
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		out = appendXML(out, doc)
	case "php":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		out = appendPHP(out, doc)
	default:
		w.Header().Set("Content-Type", "application/json")
		out = appendJSON(out, doc)
	}
	// A length rather than chunks: the client sizes its buffer once.
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, _ = w.Write(out)
	// Write has copied out; a buffer grown by a huge answer is left to the collector.
	if cap(out) <= maxPooledAnswer {
		*buf = out
		answerBufs.Put(buf)
	}
}

// answerBufs keeps the buffers answers are written into: a browse of a big list writes
// thousands of pages of some 30 KB.
var answerBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledAnswer is the largest buffer answerBufs keeps.
const maxPooledAnswer = 1 << 20

// resetConnection drops the TCP connection with a reset, so the client sees an error
// instead of a response.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("sendlooptest: the response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// readBody reads a request body of up to 64 MiB, in one allocation when its length is known.
func readBody(r *http.Request) ([]byte, error) {
	const limit = 64 << 20
	if n := r.ContentLength; n >= 0 && n <= limit {
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	return io.ReadAll(io.LimitReader(r.Body, limit))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

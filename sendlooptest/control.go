package sendlooptest

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// ControlPrefix is the path under which a Control serves its API and inbox pages on the
// fake's HTTP server: the service has no path there, so neither can shadow the other.
const ControlPrefix = "/_fake"

// DefaultKeepMessages is how many relay messages `sendloop fake` keeps unless
// --keep-messages says otherwise (RelayKeepMessages).
const DefaultKeepMessages = 10000

// ControlOptions configure StartControl.
type ControlOptions struct {
	// Key is the control API's bearer key; default a random one. It is not the service's
	// API key, so that a program under test holding that one cannot reset the fake.
	Key string
	// Relay is the relay whose messages the API and the inbox show; nil shows none.
	Relay *Relay
	// BaseURL is the server's address as clients reach it, e.g. a --tls-name host; default
	// the Server's URL. Control.URL and the inbox URLs start with it.
	BaseURL string
	// Hosts are more names accepted in the Host header, besides the host of BaseURL and of
	// the Server's URL, localhost, 127.0.0.1 and [::1]: any other is refused (403), as a
	// web page that rebound its own name to this address would send.
	Hosts []string
	// Reseed fills the fake again after a reset (POST …/reset), e.g. with LoadSeed; nil
	// leaves it empty.
	Reseed func(ctx context.Context, s *Server) error
}

// Control is the fake's control API and inbox, served under ControlPrefix on the Server's
// HTTP address (StartControl). Every request must come with the Host of the fake (see
// ControlOptions.Hosts) and either "Authorization: Bearer <Key>" or the session cookie of
// the inbox; anything else is answered 401. State-changing requests made with the cookie
// must also carry the session's form token (the inbox's forms do).
//
// The messages API has the shape of Mailpit's API (its /api/v1 paths and the field names
// they share), so that Mailpit client code works against the fake:
//
//	GET    URL/api/v1/messages            newest first; ?start=0&limit=50, ?to=ADDR (part of
//	                                      an envelope recipient), ?subject=TEXT (part of the
//	                                      rendered subject), ?since=RFC3339 time; answers
//	                                      total, unread, count, messages_count, start, tags,
//	                                      messages (ID, MessageID, From, To, Cc, Bcc, ReplyTo,
//	                                      Subject rendered, Created, Username, Tags, Size,
//	                                      Attachments, Snippet) and dropped (messages forgotten
//	                                      beyond RelayKeepMessages); Read is always false
//	GET    URL/api/v1/message/{ID}        one message: the summary's fields, ReturnPath, Date,
//	                                      Text and HTML rendered as the service renders them,
//	                                      Inline, Attachments, and the fake's own Envelope
//	                                      (From, To), Headers, Sendloop (the X-SL-* options:
//	                                      CustomArgs, MergeVars, Tags, TrackOpens, TrackClicks,
//	                                      TrackGA) and Template (Subject, Text, HTML as sent)
//	GET    URL/api/v1/message/{ID}/raw    the message as received (.eml), text/plain
//	GET    URL/api/v1/message/{ID}/headers  its headers, name → values
//	DELETE URL/api/v1/messages            forgets every message
//
// The fake's own state, in snake_case as the sendloop tool's --json:
//
//	GET    URL/webhooks                   deliveries, oldest first: url, action, body,
//	                                      attempts, status_code, error, delivered
//	GET    URL/lists                      lists: id, name, opt_in_mode, custom_fields,
//	                                      subscribers, subscription_url, unsubscription_url
//	GET    URL/lists/{ID}/members         ?start=0&limit=100 (the default; limit=0: all):
//	                                      total (the list's records), count (this page's),
//	                                      start and members as subscriber.browse writes them
//	DELETE URL/lists/{ID}/members/{EMAIL} deletes the member (DeleteMember): the record is
//	                                      gone, as after the legacy Subscriber.Delete; no
//	                                      webhook is posted
//	POST   URL/lists/{ID}/confirm         email=ADDR: confirms a pending double opt-in
//	                                      (Confirm): the Subscription webhook is posted
//	POST   URL/campaigns/{ID}/send        delivers a Draft campaign now (SimulateSend)
//	POST   URL/events                     kind=, email=, list= or campaign=: one event of
//	                                      SimulateEvents (open, click, forward, browser-view,
//	                                      unsubscribe, bounce, soft-bounce, complaint) on the
//	                                      newest delivered campaign that reached the address
//	                                      (in that list); without one, unsubscribe, bounce,
//	                                      soft-bounce and complaint apply to the list member
//	POST   URL/reset                      back to the seed (ControlOptions.Reseed): lists,
//	                                      campaigns, webhooks, outbox and messages
//	POST   URL/inbox/token                a new one-time inbox URL (Bearer key only)
//
// Parameters of a POST are form fields (or query parameters); actions answer a JSON object
// with the webhooks they posted ("webhooks", each with its URL whole, query included), and
// failures {"error": "..."} with a 4xx status: 404 for a list, campaign or member that does
// not exist, 409 for one whose state does not allow the action.
//
// The inbox is the same for a browser, logged in by a one-time InboxURL (an HttpOnly,
// SameSite=Strict cookie): URL/inbox/ lists the messages newest first with a search,
// URL/inbox/message/{ID} shows one (its rendered HTML only inside a sandboxed frame, served
// under a Content-Security-Policy that forbids scripts and every load from elsewhere, and
// neutralized: resource hints, preloads, frames, objects, meta and script elements renamed
// to elements without a meaning, as a browser opens connections for some of them before
// the policy stops them; the text, the headers and the source escaped), URL/inbox/lists the lists and members with
// confirm and event buttons, URL/inbox/webhooks the deliveries. The pages carry no script.
type Control struct {
	// URL is the root of the control API, BaseURL + ControlPrefix.
	URL string
	// Key is the bearer key the API requires.
	Key string

	srv    *Server
	relay  *Relay
	hosts  map[string]bool
	reseed func(context.Context, *Server) error
	mux    *http.ServeMux

	mu       sync.Mutex
	tokens   map[string]bool    // one-time inbox login tokens not yet used
	sessions map[string]session // by cookie value
}

// session is a browser logged in to the inbox.
type session struct {
	csrf string // the token its forms carry
}

// controlLimit bounds the tokens and sessions a long-lived fake keeps.
const controlLimit = 1000

// StartControl serves the control API and the inbox on the server's HTTP address, under
// ControlPrefix. A server has at most one.
func (s *Server) StartControl(o ControlOptions) (*Control, error) {
	if o.BaseURL == "" {
		o.BaseURL = s.URL
	}
	if o.Key == "" {
		o.Key = "slfake_" + randomHex(16)
	}
	c := &Control{URL: strings.TrimSuffix(o.BaseURL, "/") + ControlPrefix, Key: o.Key, srv: s, relay: o.Relay,
		reseed: o.Reseed, tokens: map[string]bool{}, sessions: map[string]session{},
		hosts: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	for _, u := range []string{o.BaseURL, s.URL} {
		if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
			c.hosts[strings.ToLower(pu.Hostname())] = true
		}
	}
	for _, h := range o.Hosts {
		c.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	c.routes()
	if !s.control.CompareAndSwap(nil, c) {
		return nil, errors.New("sendlooptest: the server already has a control API")
	}
	return c, nil
}

// isControlPath reports whether a request is the Control's.
func isControlPath(p string) bool {
	return p == ControlPrefix || strings.HasPrefix(p, ControlPrefix+"/")
}

func (c *Control) routes() {
	m := http.NewServeMux()
	p := ControlPrefix
	m.HandleFunc("GET "+p+"/api/v1/messages", c.apiMessages)
	m.HandleFunc("DELETE "+p+"/api/v1/messages", c.apiDeleteMessages)
	m.HandleFunc("GET "+p+"/api/v1/message/{id}", c.apiMessage)
	m.HandleFunc("GET "+p+"/api/v1/message/{id}/raw", c.apiRaw)
	m.HandleFunc("GET "+p+"/api/v1/message/{id}/headers", c.apiHeaders)
	m.HandleFunc("GET "+p+"/webhooks", c.apiWebhooks)
	m.HandleFunc("GET "+p+"/lists", c.apiLists)
	m.HandleFunc("GET "+p+"/lists/{id}/members", c.apiMembers)
	m.HandleFunc("DELETE "+p+"/lists/{id}/members/{email}", c.apiDeleteMember)
	m.HandleFunc("POST "+p+"/lists/{id}/confirm", c.apiConfirm)
	m.HandleFunc("POST "+p+"/campaigns/{id}/send", c.apiSend)
	m.HandleFunc("POST "+p+"/events", c.apiEvent)
	m.HandleFunc("POST "+p+"/reset", c.apiReset)
	m.HandleFunc("POST "+p+"/inbox/token", c.apiInboxToken)
	c.inboxRoutes(m)
	c.mux = m
}

// serveHTTP checks the host and the credentials, then serves the request.
func (c *Control) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.hostAllowed(r.Host) {
		jsonError(w, http.StatusForbidden, "unknown host %q: the fake answers to its own names only", r.Host)
		return
	}
	if r.URL.Path == ControlPrefix+inboxLoginPath {
		c.inboxLogin(w, r)
		return
	}
	sess, byCookie := c.session(r)
	bearer := c.bearer(r)
	switch {
	case !bearer && !byCookie:
		if strings.HasPrefix(r.URL.Path, ControlPrefix+"/inbox") && r.Method == http.MethodGet {
			inboxLoggedOut(w)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="sendloop fake"`)
		jsonError(w, http.StatusUnauthorized, "the control API needs Authorization: Bearer $SENDLOOP_FAKE_KEY")
		return
	case !bearer && !safeMethod(r.Method) && !c.formTokenOK(r, sess):
		jsonError(w, http.StatusForbidden, "a request made with the inbox's cookie must carry its form token")
		return
	case !bearer && r.URL.Path == ControlPrefix+"/inbox/token":
		jsonError(w, http.StatusUnauthorized, "a new inbox URL needs Authorization: Bearer $SENDLOOP_FAKE_KEY")
		return
	}
	c.mux.ServeHTTP(w, r)
}

func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// hostAllowed checks the Host header against DNS rebinding: a page of another site whose
// name now resolves to this address sends that name.
func (c *Control) hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return c.hosts[strings.ToLower(strings.Trim(host, "[]"))]
}

// bearer reports whether the request carries the key.
func (c *Control) bearer(r *http.Request) bool {
	scheme, key, found := strings.Cut(r.Header.Get("Authorization"), " ")
	return found && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(key)), []byte(c.Key)) == 1
}

// jsonError answers {"error": …} with status.
func jsonError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// writeJSON answers v as indented JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (c *Control) apiInboxToken(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"url": c.InboxURL()})
}

// InboxURL returns a new URL that logs a browser in to the inbox once: opening it sets the
// session cookie (HttpOnly, SameSite=Strict) and shows the messages.
func (c *Control) InboxURL() string {
	tok := randomHex(16)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tokens) >= controlLimit {
		clear(c.tokens)
	}
	c.tokens[tok] = true
	return c.URL + inboxLoginPath + "?token=" + tok
}

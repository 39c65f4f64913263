package sendlooptest

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
//	GET    URL/lists/{ID}/members         ?start=&limit= (default 100): total, start and
//	                                      members as subscriber.browse writes them
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
// and failures {"error": "..."} with a 4xx status.
//
// The inbox is the same for a browser, logged in by a one-time InboxURL (an HttpOnly,
// SameSite=Strict cookie): URL/inbox/ lists the messages newest first with a search,
// URL/inbox/message/{ID} shows one (its rendered HTML only inside a sandboxed frame, served
// under a Content-Security-Policy that forbids scripts and every load from elsewhere; the
// text, the headers and the source escaped), URL/inbox/lists the lists and members with
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

// mailpitAddress is an address in Mailpit's shape.
type mailpitAddress struct {
	Name    string `json:"Name"`
	Address string `json:"Address"`
}

// messageSummary is a message of the messages API, in the shape of Mailpit's summary.
type messageSummary struct {
	ID          string           `json:"ID"`
	MessageID   string           `json:"MessageID"`
	Read        bool             `json:"Read"`
	From        *mailpitAddress  `json:"From"`
	To          []mailpitAddress `json:"To"`
	Cc          []mailpitAddress `json:"Cc"`
	Bcc         []mailpitAddress `json:"Bcc"`
	ReplyTo     []mailpitAddress `json:"ReplyTo"`
	Subject     string           `json:"Subject"`
	Created     time.Time        `json:"Created"`
	Username    string           `json:"Username"`
	Tags        []string         `json:"Tags"`
	Size        int              `json:"Size"`
	Attachments int              `json:"Attachments"`
	Snippet     string           `json:"Snippet"`
}

// messagesPage is the answer of GET …/api/v1/messages.
type messagesPage struct {
	Total         int              `json:"total"`
	Unread        int              `json:"unread"`
	Count         int              `json:"count"`
	MessagesCount int              `json:"messages_count"`
	Start         int              `json:"start"`
	Tags          []string         `json:"tags"`
	Messages      []messageSummary `json:"messages"`
	Dropped       int              `json:"dropped"`
}

// messageFilter selects messages: the search of the API and the inbox.
type messageFilter struct {
	to, subject string
	since       time.Time
	start       int
	limit       int
}

// readFilter reads the query of a messages search.
func readFilter(q url.Values, defaultLimit int) (messageFilter, error) {
	f := messageFilter{to: strings.TrimSpace(q.Get("to")), subject: strings.TrimSpace(q.Get("subject")), limit: defaultLimit}
	var err error
	if v := strings.TrimSpace(q.Get("since")); v != "" {
		if f.since, err = time.Parse(time.RFC3339, v); err != nil {
			return f, fmt.Errorf("since=%q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", v)
		}
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"start", &f.start}, {"limit", &f.limit}} {
		if v := strings.TrimSpace(q.Get(p.name)); v != "" {
			if *p.v, err = strconv.Atoi(v); err != nil || *p.v < 0 {
				return f, fmt.Errorf("%s=%q is not a whole number", p.name, v)
			}
		}
	}
	return f, nil
}

// match reports whether a message passes the filter's search.
func (f messageFilter) match(m *RelayMessage) bool {
	if !f.since.IsZero() && m.Time.Before(f.since) {
		return false
	}
	if f.subject != "" && !strings.Contains(strings.ToLower(m.RenderedSubject), strings.ToLower(f.subject)) {
		return false
	}
	if f.to == "" {
		return true
	}
	return slices.ContainsFunc(m.EnvelopeTo, func(a string) bool {
		return strings.Contains(strings.ToLower(a), strings.ToLower(f.to))
	})
}

// messages returns the relay's messages, newest first, that pass the filter's search, the
// page the filter asks for, and how many the relay dropped.
func (c *Control) messages(f messageFilter) (page []RelayMessage, matched, total, dropped int) {
	if c.relay == nil {
		return nil, 0, 0, 0
	}
	all := c.relay.Messages()
	dropped = c.relay.Dropped()
	for i := len(all) - 1; i >= 0; i-- {
		if !f.match(&all[i]) {
			continue
		}
		if matched >= f.start && (f.limit == 0 || len(page) < f.limit) {
			page = append(page, all[i])
		}
		matched++
	}
	return page, matched, len(all), dropped
}

func (c *Control) apiMessages(w http.ResponseWriter, r *http.Request) {
	f, err := readFilter(r.URL.Query(), 50)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "%v", err)
		return
	}
	page, matched, total, dropped := c.messages(f)
	out := messagesPage{Total: total, Unread: total, Count: len(page), MessagesCount: matched, Start: f.start,
		Tags: []string{}, Messages: []messageSummary{}, Dropped: dropped}
	tags := map[string]bool{}
	for i := range page {
		out.Messages = append(out.Messages, summarize(&page[i]))
		for _, t := range page[i].SLHeaders.Tags {
			tags[t] = true
		}
	}
	for t := range tags {
		out.Tags = append(out.Tags, t)
	}
	slices.Sort(out.Tags)
	writeJSON(w, http.StatusOK, out)
}

func (c *Control) apiDeleteMessages(w http.ResponseWriter, _ *http.Request) {
	if c.relay != nil {
		c.relay.ClearMessages()
	}
	writeJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

// message finds the message named by the path, or answers 404.
func (c *Control) message(w http.ResponseWriter, r *http.Request) (RelayMessage, bool) {
	id := r.PathValue("id")
	if c.relay != nil {
		if m, ok := c.relay.Message(id); ok {
			return m, true
		}
	}
	jsonError(w, http.StatusNotFound, "no message %q (dropped, deleted or never received)", id)
	return RelayMessage{}, false
}

// messageDetail is the answer of GET …/api/v1/message/{ID}: Mailpit's message, and what the
// relay knows besides.
type messageDetail struct {
	messageSummary
	ReturnPath  string              `json:"ReturnPath"`
	Date        time.Time           `json:"Date"`
	Text        string              `json:"Text"`
	HTML        string              `json:"HTML"`
	Inline      []attachmentInfo    `json:"Inline"`
	Attachments []attachmentInfo    `json:"Attachments"`
	Envelope    envelopeInfo        `json:"Envelope"`
	Headers     map[string][]string `json:"Headers"`
	Sendloop    sendloopOptions     `json:"Sendloop"`
	Template    templateInfo        `json:"Template"`
}

type attachmentInfo struct {
	PartID      string `json:"PartID"`
	FileName    string `json:"FileName"`
	ContentType string `json:"ContentType"`
	ContentID   string `json:"ContentID"`
	Size        int    `json:"Size"`
}

type envelopeInfo struct {
	From string   `json:"From"`
	To   []string `json:"To"`
}

type sendloopOptions struct {
	CustomArgs  map[string]any `json:"CustomArgs"`
	MergeVars   map[string]any `json:"MergeVars"`
	Tags        []string       `json:"Tags"`
	TrackOpens  bool           `json:"TrackOpens"`
	TrackClicks bool           `json:"TrackClicks"`
	TrackGA     bool           `json:"TrackGA"`
}

type templateInfo struct {
	Subject string `json:"Subject"`
	Text    string `json:"Text"`
	HTML    string `json:"HTML"`
}

func (c *Control) apiMessage(w http.ResponseWriter, r *http.Request) {
	m, ok := c.message(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, detail(&m))
}

func (c *Control) apiRaw(w http.ResponseWriter, r *http.Request) {
	m, ok := c.message(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	_, _ = w.Write(m.Raw)
}

func (c *Control) apiHeaders(w http.ResponseWriter, r *http.Request) {
	m, ok := c.message(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, m.Header.Map())
}

// summarize writes a message in the summary's shape.
func summarize(m *RelayMessage) messageSummary {
	s := messageSummary{ID: m.ID, MessageID: m.MessageID, Subject: m.RenderedSubject, Created: m.Time,
		Username: m.Username, Tags: nonNil(m.SLHeaders.Tags), Size: len(m.Raw), Attachments: len(m.Attachments),
		To: addresses(m, "To"), Cc: addresses(m, "Cc"), ReplyTo: addresses(m, "Reply-To"), Bcc: []mailpitAddress{}}
	if from := addresses(m, "From"); len(from) > 0 {
		s.From = &from[0]
	}
	// As Mailpit does, Bcc are the envelope's recipients that no header names.
	named := map[string]bool{}
	for _, a := range append(slices.Clone(s.To), s.Cc...) {
		named[strings.ToLower(a.Address)] = true
	}
	for _, rcpt := range m.EnvelopeTo {
		if !named[strings.ToLower(rcpt)] {
			s.Bcc = append(s.Bcc, mailpitAddress{Address: rcpt})
		}
	}
	s.Snippet = snippet(m)
	return s
}

// addresses reads an address header; a malformed one gives its raw text as one address.
func addresses(m *RelayMessage, key string) []mailpitAddress {
	out := []mailpitAddress{}
	list, err := m.Header.AddressList(key)
	if err != nil {
		if raw := m.Header.Get(key); raw != "" {
			out = append(out, mailpitAddress{Address: raw})
		}
		return out
	}
	for _, a := range list {
		out = append(out, mailpitAddress{Name: a.Name, Address: a.Address})
	}
	return out
}

// snippet is the start of the rendered text, or of the HTML's text, on one line.
func snippet(m *RelayMessage) string {
	text := m.RenderedText
	if strings.TrimSpace(text) == "" {
		text = htmlText(m.RenderedHTML)
	}
	words := strings.Fields(text)
	var b strings.Builder
	for _, w := range words {
		if b.Len()+len(w) > 250 {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// htmlText drops the tags of an HTML text, roughly: for a snippet only.
func htmlText(h string) string {
	var b strings.Builder
	inTag := false
	for _, r := range h {
		switch {
		case r == '<':
			inTag = true
		case r == '>':
			inTag = false
			b.WriteByte(' ')
		case !inTag:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// detail writes a message in the message's shape.
func detail(m *RelayMessage) messageDetail {
	d := messageDetail{messageSummary: summarize(m), ReturnPath: m.EnvelopeFrom, Date: m.Time,
		Text: m.RenderedText, HTML: m.RenderedHTML, Inline: parts(m.Inline, "inline"), Attachments: parts(m.Attachments, "attachment"),
		Envelope: envelopeInfo{From: m.EnvelopeFrom, To: nonNil(m.EnvelopeTo)}, Headers: m.Header.Map(),
		Sendloop: sendloopOptions{CustomArgs: m.SLHeaders.CustomArgs, MergeVars: m.SLHeaders.MergeVars,
			Tags: nonNil(m.SLHeaders.Tags), TrackOpens: m.SLHeaders.TrackOpens, TrackClicks: m.SLHeaders.TrackClicks,
			TrackGA: m.SLHeaders.TrackGA},
		Template: templateInfo{Subject: m.Subject, Text: m.Text, HTML: m.HTML}}
	if date, err := m.Header.Date(); err == nil && !date.IsZero() {
		d.Date = date
	}
	return d
}

func parts(atts []RelayAttachment, kind string) []attachmentInfo {
	out := []attachmentInfo{}
	for i, a := range atts {
		out = append(out, attachmentInfo{PartID: kind + "-" + strconv.Itoa(i+1), FileName: a.Filename,
			ContentType: a.ContentType, ContentID: a.ContentID, Size: len(a.Data)})
	}
	return out
}

// webhookInfo is a delivery of GET …/webhooks.
type webhookInfo struct {
	URL        string `json:"url"`
	Action     string `json:"action"`
	Body       string `json:"body"`
	Attempts   int    `json:"attempts"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	Delivered  bool   `json:"delivered"`
}

func webhookInfos(ds []WebhookDelivery) []webhookInfo {
	out := []webhookInfo{}
	for _, d := range ds {
		out = append(out, webhookInfo{URL: d.URL, Action: d.Action, Body: string(d.Body), Attempts: d.Attempts,
			StatusCode: d.StatusCode, Error: d.Err, Delivered: d.Delivered})
	}
	return out
}

func (c *Control) apiWebhooks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": webhookInfos(c.srv.Webhooks())})
}

// listInfo is a list of GET …/lists.
type listInfo struct {
	ID                int         `json:"id"`
	Name              string      `json:"name"`
	OptInMode         string      `json:"opt_in_mode"`
	CustomFields      []fieldInfo `json:"custom_fields"`
	Subscribers       int         `json:"subscribers"`
	SubscriptionURL   string      `json:"subscription_url"`
	UnsubscriptionURL string      `json:"unsubscription_url"`
}

type fieldInfo struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// listInfos reads the lists, by ascending ID.
func (s *Server) listInfos() []listInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []listInfo{}
	for _, l := range s.state.lists.sorted() {
		li := listInfo{ID: l.ID, Name: l.Name, OptInMode: l.OptInMode, CustomFields: []fieldInfo{}, Subscribers: len(l.members),
			SubscriptionURL: l.Settings["WebServiceSubscriptionURL"], UnsubscriptionURL: l.Settings["WebServiceUnsubscriptionURL"]}
		for _, f := range l.Fields {
			li.CustomFields = append(li.CustomFields, fieldInfo{ID: f.ID, Name: f.FieldName})
		}
		out = append(out, li)
	}
	return out
}

func (c *Control) apiLists(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"lists": c.srv.listInfos()})
}

// members returns a page of a list's records as subscriber.browse writes them, and how
// many the list holds.
func (s *Server) members(listID, start, limit int) ([]object, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return nil, 0, fmt.Errorf("no list %d", listID)
	}
	out := []object{}
	for i := start; i < len(l.members) && (limit == 0 || len(out) < limit); i++ {
		out = append(out, l.members[i].object())
	}
	return out, len(l.members), nil
}

func (c *Control) apiMembers(w http.ResponseWriter, r *http.Request) {
	listID, ok := pathID(w, r)
	if !ok {
		return
	}
	f, err := readFilter(r.URL.Query(), 100)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "%v", err)
		return
	}
	page, total, err := c.srv.members(listID, f.start, f.limit)
	if err != nil {
		jsonError(w, http.StatusNotFound, "%v", err)
		return
	}
	// The records go out as the service writes them, in their order of keys.
	b := fmt.Appendf(nil, `{"list_id":%d,"total":%d,"start":%d,"members":`, listID, total, f.start)
	b = append(appendJSON(b, page), "}\n"...)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// pathID reads the {id} of the path as a positive number, or answers 404.
func pathID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		jsonError(w, http.StatusNotFound, "%q is not an ID", r.PathValue("id"))
		return 0, false
	}
	return id, true
}

// param reads a POST parameter: a form field (of the body or the query) or, for a JSON
// body, a member.
func param(r *http.Request, name string) string {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return strings.TrimSpace(r.FormValue(name))
	}
	if r.Form == nil {
		r.Form = r.URL.Query()
		var body map[string]any
		if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body) == nil {
			for k, v := range body {
				switch v := v.(type) {
				case string:
					r.Form.Set(k, v)
				case float64:
					r.Form.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
				}
			}
		}
	}
	return strings.TrimSpace(r.Form.Get(name))
}

// webhooksSince returns the deliveries after the first n.
func (c *Control) webhooksSince(n int) []webhookInfo {
	all := c.srv.Webhooks()
	return webhookInfos(all[min(n, len(all)):])
}

func (c *Control) apiConfirm(w http.ResponseWriter, r *http.Request) {
	listID, ok := pathID(w, r)
	if !ok {
		return
	}
	before := len(c.srv.Webhooks())
	email := param(r, "email")
	if err := c.confirm(listID, email); err != nil {
		jsonError(w, http.StatusConflict, "%s", strings.TrimPrefix(err.Error(), "sendlooptest: "))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"list_id": listID, "email": email, "status": "Subscribed",
		"webhooks": c.webhooksSince(before)})
}

// confirm is Confirm with the address checked first.
func (c *Control) confirm(listID int, email string) error {
	if email == "" {
		return errors.New("email is missing")
	}
	return c.srv.Confirm(listID, email)
}

func (c *Control) apiSend(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	to, err := c.srv.SimulateSend(id)
	if err != nil {
		jsonError(w, http.StatusConflict, "%s", strings.TrimPrefix(err.Error(), "sendlooptest: "))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"campaign_id": id, "recipients": nonNil(to)})
}

// eventKinds are the names the control API takes for the kinds of SimulateEvents, besides
// the constants' own values.
var eventKinds = map[string]CampaignEventKind{
	"unsubscribe": EventUnsubscription, "bounce": EventHardBounce, "complaint": EventSpamComplaint,
}

// ParseEventKind reads an event kind as the control API and `sendloop fake event` take it:
// a CampaignEventKind's value ("open", "hard bounce", …) with '-' or '_' for spaces, or
// unsubscribe, bounce (hard) and complaint.
func ParseEventKind(v string) (CampaignEventKind, error) {
	k := strings.ToLower(strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSpace(v)))
	if kind, ok := eventKinds[k]; ok {
		return kind, nil
	}
	if slices.Contains(knownEventKinds, CampaignEventKind(k)) {
		return CampaignEventKind(k), nil
	}
	return "", fmt.Errorf("unknown event kind %q: open, click, forward, browser-view, unsubscribe, bounce, soft-bounce or complaint", v)
}

func (c *Control) apiEvent(w http.ResponseWriter, r *http.Request) {
	kind, err := ParseEventKind(param(r, "kind"))
	if err != nil {
		jsonError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var listID, campaignID int
	for _, p := range []struct {
		name string
		v    *int
	}{{"list", &listID}, {"campaign", &campaignID}} {
		if v := param(r, p.name); v != "" {
			if *p.v, err = strconv.Atoi(v); err != nil || *p.v <= 0 {
				jsonError(w, http.StatusBadRequest, "%s=%q is not an ID", p.name, v)
				return
			}
		}
	}
	email := param(r, "email")
	if email == "" {
		jsonError(w, http.StatusBadRequest, "email is missing")
		return
	}
	before := len(c.srv.Webhooks())
	campaignID, err = c.srv.event(kind, email, listID, campaignID)
	if err != nil {
		jsonError(w, http.StatusConflict, "%s", strings.TrimPrefix(err.Error(), "sendlooptest: "))
		return
	}
	answer := map[string]any{"kind": string(kind), "email": email, "webhooks": c.webhooksSince(before)}
	if campaignID > 0 {
		answer["campaign_id"] = campaignID
	}
	if listID > 0 {
		answer["list_id"] = listID
	}
	writeJSON(w, http.StatusOK, answer)
}

// event records one event for email: on campaignID, or the newest delivered campaign that
// reached the address (as a member of listID, when given), through SimulateEvents; with no
// such campaign, an unsubscription, bounce or complaint applies to the list's member as
// SimulateEvents would apply it. It returns the campaign used, 0 for none.
func (s *Server) event(kind CampaignEventKind, email string, listID, campaignID int) (int, error) {
	s.mu.Lock()
	now := s.now()
	st := s.state
	var camp *campaign
	if campaignID > 0 {
		if camp = st.campaigns.byID[campaignID]; camp == nil {
			s.mu.Unlock()
			return 0, fmt.Errorf("no campaign %d", campaignID)
		}
	} else {
		camp = st.newestDelivery(email, listID)
	}
	if camp != nil {
		s.mu.Unlock()
		after := max(now.Sub(camp.deliveredAt), 0)
		return camp.ID, s.SimulateEvents(camp.ID, CampaignEvent{Kind: kind, Email: email, After: after})
	}
	err := st.listEvent(kind, email, listID, now)
	s.mu.Unlock()
	s.deliverWebhooks()
	return 0, err
}

// newestDelivery returns the newest delivered campaign whose recipients hold email (as a
// member of listID unless 0), or nil.
func (st *state) newestDelivery(email string, listID int) *campaign {
	var best *campaign
	for _, camp := range st.campaigns.byID {
		if camp.deliveredAt.IsZero() || best != nil && (camp.deliveredAt.Before(best.deliveredAt) ||
			camp.deliveredAt.Equal(best.deliveredAt) && camp.ID < best.ID) {
			continue
		}
		if slices.ContainsFunc(camp.recipients, func(sub *subscriber) bool {
			return strings.EqualFold(sub.Email, strings.TrimSpace(email)) && (listID == 0 || sub.list.ID == listID)
		}) {
			best = camp
		}
	}
	return best
}

// listEvent applies an event that needs no campaign to a member of a list.
func (st *state) listEvent(kind CampaignEventKind, email string, listID int, now time.Time) error {
	switch kind {
	case EventUnsubscription, EventHardBounce, EventSoftBounce, EventSpamComplaint:
	default:
		return fmt.Errorf("no delivered campaign reached %s: a %s needs one (POST %s/campaigns/{ID}/send)", email, kind, ControlPrefix)
	}
	if listID == 0 {
		return fmt.Errorf("no delivered campaign reached %s: name its list (list=ID)", email)
	}
	l := st.lists.get(listID)
	if l == nil {
		return fmt.Errorf("no list %d", listID)
	}
	sub := l.member(email)
	if sub == nil {
		return fmt.Errorf("%s is not in list %d", email, listID)
	}
	return st.applyEvent(sub, CampaignEvent{Kind: kind, Email: email, IP: "0.0.0.0"}, now)
}

func (c *Control) apiReset(w http.ResponseWriter, r *http.Request) {
	if err := c.reset(r.Context()); err != nil {
		jsonError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"reset": true})
}

// reset brings the fake back to its seed.
func (c *Control) reset(ctx context.Context) error {
	c.srv.resetState()
	if c.relay != nil {
		c.relay.ClearMessages()
	}
	if c.reseed != nil {
		if err := c.reseed(ctx, c.srv); err != nil {
			return fmt.Errorf("reseeding: %w", err)
		}
	}
	return nil
}

// resetState empties the account: lists, campaigns, activity, outbox, webhooks, faults.
// The keys, the clock, the latency and the request log stay.
func (s *Server) resetState() {
	s.deliverMu.Lock() // no delivery in flight records into the old state
	defer s.deliverMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = newState(s.now())
	s.webhooks = nil
	s.faults = map[string][]*Fault{}
	s.executions = map[string]int{}
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

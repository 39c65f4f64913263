package sendlooptest

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed inbox/*.html
var inboxFiles embed.FS

// inboxTemplates returns the inbox's pages, each with the shared layout. They are parsed
// on the first page served, not when a program linking the package starts: the CLI carries
// the fake, and every command would pay for the parse.
var inboxTemplates = sync.OnceValue(func() map[string]*template.Template {
	funcs := template.FuncMap{
		"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"json": func(v any) string {
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return err.Error()
			}
			return string(b)
		},
		"join": func(ss []string) string {
			var b bytes.Buffer
			for i, s := range ss {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(s)
			}
			return b.String()
		},
	}
	out := map[string]*template.Template{}
	for _, page := range []string{"messages", "message", "lists", "webhooks"} {
		out[page] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(inboxFiles, "inbox/layout.html", "inbox/"+page+".html"))
	}
	return out
})

// The Content-Security-Policy of the inbox's pages: no script at all (the pages need none),
// nothing from elsewhere, frames of the inbox only, and no framing by others.
const inboxPageCSP = "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; form-action 'self'; " +
	"base-uri 'none'; frame-ancestors 'none'"

// messageHTMLCSP is the policy of a message's HTML, which is untrusted: no script, no load
// of any kind beyond data: images and inline styles, no form, no plugin, and a sandbox even
// when the document is opened outside its frame.
const messageHTMLCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'self'; sandbox"

func (c *Control) inboxRoutes(m *http.ServeMux) {
	p := ControlPrefix + "/inbox"
	m.Handle("GET "+p, http.RedirectHandler(p+"/", http.StatusMovedPermanently))
	m.HandleFunc("GET "+p+"/{$}", c.pageMessages)
	m.HandleFunc("GET "+p+"/message/{id}", c.pageMessage)
	m.HandleFunc("GET "+p+"/message/{id}/html", c.pageMessageHTML)
	m.HandleFunc("GET "+p+"/lists", c.pageLists)
	m.HandleFunc("GET "+p+"/webhooks", c.pageWebhooks)
	m.HandleFunc("POST "+p+"/confirm", c.pageConfirm)
	m.HandleFunc("POST "+p+"/event", c.pageEvent)
	m.HandleFunc("POST "+p+"/delete", c.pageDelete)
	m.HandleFunc("POST "+p+"/reset", c.pageReset)
}

// pageData is what every page's layout shows.
type pageData struct {
	Title     string
	Prefix    string // ControlPrefix
	FormToken string // for the forms' POSTs
	Flash     string // the outcome of the last action
	Error     bool   // Flash tells a failure
	Body      any    // the page's own data
}

// render writes a page with its security headers.
func (c *Control) render(w http.ResponseWriter, r *http.Request, page, title string, body any) {
	sess, _ := c.session(r)
	d := pageData{Title: title, Prefix: ControlPrefix, FormToken: sess.csrf, Body: body,
		Flash: r.URL.Query().Get("done"), Error: r.URL.Query().Get("failed") == "1"}
	var b bytes.Buffer
	if err := inboxTemplates()[page].Execute(&b, d); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pageHeaders(w, inboxPageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Frame-Options", "DENY")
	_, _ = w.Write(b.Bytes())
}

// pageHeaders sets what every inbox answer carries.
func pageHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// messagesView is the data of the messages page.
type messagesView struct {
	To, Subject      string
	Messages         []messageSummary
	Matched, Total   int
	Dropped          int
	Start, Limit     int
	PrevURL, NextURL string
}

func (c *Control) pageMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := readFilter(q, 50)
	if err != nil || f.limit == 0 {
		f = messageFilter{to: f.to, subject: f.subject, limit: 50}
	}
	page, matched, total, dropped := c.messages(f)
	v := messagesView{To: f.to, Subject: f.subject, Matched: matched, Total: total, Dropped: dropped, Start: f.start, Limit: f.limit}
	for i := range page {
		v.Messages = append(v.Messages, summarize(&page[i]))
	}
	link := func(start int) string {
		q := url.Values{"start": {strconv.Itoa(start)}}
		if f.to != "" {
			q.Set("to", f.to)
		}
		if f.subject != "" {
			q.Set("subject", f.subject)
		}
		return ControlPrefix + "/inbox/?" + q.Encode()
	}
	if f.start > 0 {
		v.PrevURL = link(max(f.start-f.limit, 0))
	}
	if f.start+len(page) < matched {
		v.NextURL = link(f.start + len(page))
	}
	c.render(w, r, "messages", "Messages", v)
}

// messageView is the data of a message's page.
type messageView struct {
	messageDetail
	Raw      string
	HTMLURL  string
	RawURL   string
	JSONURL  string
	Rcpts    []string
	HasHTML  bool
	RawTrunc bool
}

// rawShown bounds the source shown on a message's page; the raw link has all of it.
const rawShown = 256 << 10

func (c *Control) pageMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, ok := c.relayMessage(id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	v := messageView{messageDetail: detail(&m), HasHTML: m.RenderedHTML != "",
		HTMLURL: ControlPrefix + "/inbox/message/" + url.PathEscape(id) + "/html",
		RawURL:  ControlPrefix + "/api/v1/message/" + url.PathEscape(id) + "/raw",
		JSONURL: ControlPrefix + "/api/v1/message/" + url.PathEscape(id)}
	raw := m.Raw
	if len(raw) > rawShown {
		raw, v.RawTrunc = raw[:rawShown], true
	}
	v.Raw = string(raw)
	c.render(w, r, "message", m.RenderedSubject, v)
}

// relayMessage finds a message of the relay.
func (c *Control) relayMessage(id string) (RelayMessage, bool) {
	if c.relay == nil {
		return RelayMessage{}, false
	}
	return c.relay.Message(id)
}

// pageMessageHTML serves a message's rendered HTML for its sandboxed frame, neutralized
// (neutralizeHTML: no resource hint, preload or frame), under a policy that lets none of
// it run or load anything. The policy alone is not enough: a browser opens connections
// for resource hints, and for a frame's source, before the policy has its say.
func (c *Control) pageMessageHTML(w http.ResponseWriter, r *http.Request) {
	m, ok := c.relayMessage(r.PathValue("id"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	pageHeaders(w, messageHTMLCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Frame-Options", "SAMEORIGIN")
	w.Header().Set("X-DNS-Prefetch-Control", "off")
	_, _ = w.Write([]byte(neutralizeHTML(m.RenderedHTML)))
}

// listView is a list with its first members, for the lists page.
type listView struct {
	listInfo
	Members []memberView
	More    int // members not shown
}

// memberView is a member of the lists page.
type memberView struct {
	Email, Status, BounceType string
	Fields                    []string // the values of the list's custom fields, in their order
}

// membersShown bounds the members listed per list on the page.
const membersShown = 200

func (c *Control) pageLists(w http.ResponseWriter, r *http.Request) {
	var views []listView
	for _, l := range c.srv.listInfos() {
		v := listView{listInfo: l, Members: c.srv.memberViews(l.ID, membersShown)}
		v.More = max(l.Subscribers-len(v.Members), 0)
		views = append(views, v)
	}
	c.render(w, r, "lists", "Lists", views)
}

// memberViews returns the first n members of a list.
func (s *Server) memberViews(listID, n int) []memberView {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return nil
	}
	out := make([]memberView, 0, min(n, len(l.members)))
	for _, sub := range l.members[:min(n, len(l.members))] {
		v := memberView{Email: sub.Email, Status: sub.Status, BounceType: sub.BounceType, Fields: make([]string, len(l.Fields))}
		for i, f := range l.Fields {
			v.Fields[i] = sub.Fields.get(f.ID)
		}
		out = append(out, v)
	}
	return out
}

func (c *Control) pageWebhooks(w http.ResponseWriter, r *http.Request) {
	ds := webhookInfos(c.srv.Webhooks())
	// Newest first, as the messages.
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	c.render(w, r, "webhooks", "Webhook deliveries", ds)
}

// back redirects to an inbox page with the outcome of an action.
func back(w http.ResponseWriter, r *http.Request, page, done string, err error) {
	q := url.Values{"done": {done}}
	if err != nil {
		q = url.Values{"done": {err.Error()}, "failed": {"1"}}
	}
	http.Redirect(w, r, ControlPrefix+"/inbox/"+page+"?"+q.Encode(), http.StatusSeeOther)
}

func (c *Control) pageConfirm(w http.ResponseWriter, r *http.Request) {
	listID, _ := strconv.Atoi(r.PostFormValue("list"))
	email := r.PostFormValue("email")
	err := c.confirm(listID, email)
	back(w, r, "lists", "Confirmed "+email+": see the webhook deliveries", err)
}

func (c *Control) pageEvent(w http.ResponseWriter, r *http.Request) {
	listID, _ := strconv.Atoi(r.PostFormValue("list"))
	email := r.PostFormValue("email")
	kind, err := ParseEventKind(r.PostFormValue("kind"))
	if err == nil {
		_, err = c.srv.event(kind, email, listID, 0)
	}
	back(w, r, "lists", "Recorded "+withArticle(string(kind))+" of "+email, err)
}

// withArticle puts "a" or "an" before an event kind: "an open", "a click", "an
// unsubscription".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func (c *Control) pageDelete(w http.ResponseWriter, r *http.Request) {
	if c.relay != nil {
		c.relay.ClearMessages()
	}
	back(w, r, "", "Deleted every message", nil)
}

func (c *Control) pageReset(w http.ResponseWriter, r *http.Request) {
	back(w, r, "", "The fake is back to its seed", c.reset(r.Context()))
}

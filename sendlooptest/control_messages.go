package sendlooptest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

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

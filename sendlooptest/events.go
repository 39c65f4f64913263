package sendlooptest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EmailKind tells which email the fake sent.
type EmailKind string

// The emails the fake sends on its own.
const (
	OptInConfirmation EmailKind = "opt-in confirmation"
	Welcome           EmailKind = "welcome"
)

// Email is a message the service would have sent; the fake keeps it in its outbox.
type Email struct {
	Kind     EmailKind // OptInConfirmation or Welcome
	ListID   int       // the list whose settings made the email
	FromName string    // the list's SubscriptionOptInFromName or SubscriptionFinalFromName
	From     string    // the list's SubscriptionOptInFromEmail or SubscriptionFinalFromEmail
	To       string    // the subscriber's address
	Subject  string    // the list's SubscriptionOptInSubject or SubscriptionFinalSubject
	Text     string    // the list's SubscriptionOptInPlainBody or SubscriptionFinalPlainBody
	HTML     string    // the list's SubscriptionFinalHTMLBody; "" for an opt-in confirmation
	Time     time.Time // when the fake sent it, by its clock
}

func (st *state) mail(e Email) { st.outbox = append(st.outbox, e) }

// Outbox returns the emails sent so far, oldest first.
func (s *Server) Outbox() []Email {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.state.outbox)
}

// WebhookPolicy tunes webhook delivery.
type WebhookPolicy struct {
	// Timeout bounds each attempt; default 5s.
	Timeout time.Duration
	// Attempts is how many times a delivery is tried; default 3.
	Attempts int
	// Backoff is the wait between attempts; default 10ms.
	Backoff time.Duration
}

// WebhookDelivery is a webhook the fake posted, with how it went.
type WebhookDelivery struct {
	URL        string // the list's WebServiceSubscriptionURL or WebServiceUnsubscriptionURL
	Action     string // "Subscription" or "Unsubscription"
	Body       []byte // the XML document
	Attempts   int    // how many times it was posted, at most WebhookPolicy.Attempts
	StatusCode int    // of the last attempt; 0 when it got no answer
	Err        string // of the last attempt
	Delivered  bool   // a 2xx answer came back
}

// String shows the delivery on one line, then its body as text: %v, %+v and %s print the
// XML document rather than its bytes.
func (d WebhookDelivery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s webhook to %s: ", d.Action, d.URL)
	switch {
	case d.Delivered:
		b.WriteString("delivered")
	case d.Err != "":
		fmt.Fprintf(&b, "not delivered (%s)", d.Err)
	default:
		b.WriteString("not delivered")
	}
	fmt.Fprintf(&b, ", %s, status %d\n%s", plural(d.Attempts, "attempt"), d.StatusCode, d.Body)
	return b.String()
}

// plural writes a count before its noun: "1 attempt", "3 attempts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// webhookJob is a webhook waiting to be posted once the state lock is released.
type webhookJob struct {
	url, action string
	body        []byte
}

// SetWebhookPolicy changes how webhooks are delivered.
func (s *Server) SetWebhookPolicy(p WebhookPolicy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookPolicy = p
}

// Webhooks returns the webhook deliveries so far, oldest first.
func (s *Server) Webhooks() []WebhookDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.webhooks)
}

// webhookDoc is the XML the fake posts, in the shape the real service posts: a
// sendloop_webservice root holding action, action_timestamp (Unix seconds) and subscriber,
// whose children are the keys of the subscriber record. The callback names no list.
type webhookDoc struct {
	XMLName    xml.Name          `xml:"sendloop_webservice"`
	Action     string            `xml:"action"`
	Timestamp  int64             `xml:"action_timestamp"`
	Subscriber webhookSubscriber `xml:"subscriber"`
}

type webhookSubscriber struct {
	Fields []webhookField
}

type webhookField struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// hook queues the webhook for a subscriber event when the list has a URL for it.
func (st *state) hook(url, action string, s *subscriber, now time.Time) {
	if url == "" {
		return
	}
	doc := webhookDoc{Action: action, Timestamp: now.Unix()}
	for _, m := range s.object() {
		doc.Subscriber.Fields = append(doc.Subscriber.Fields, webhookField{XMLName: xml.Name{Local: m.Key}, Value: fmt.Sprint(m.Value)})
	}
	body, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("sendlooptest: webhook document: " + err.Error())
	}
	st.pendingHooks = append(st.pendingHooks, webhookJob{url: url, action: action, body: append([]byte(xml.Header), body...)})
}

// MarshalXML writes the subscriber's keys as child elements.
func (w webhookSubscriber) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	for _, f := range w.Fields {
		if err := e.EncodeElement(f.Value, xml.StartElement{Name: f.XMLName}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// deliverWebhooks posts the queued webhooks, outside the state lock so that a receiver may
// call the fake back, and before the triggering request is answered so that tests see them.
// Deliveries are one at a time: a request whose webhooks another request took waits here
// until they are posted.
func (s *Server) deliverWebhooks() {
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	s.mu.Lock()
	jobs := s.state.pendingHooks
	s.state.pendingHooks = nil
	p := s.webhookPolicy
	s.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	if p.Timeout <= 0 {
		p.Timeout = 5 * time.Second
	}
	if p.Attempts <= 0 {
		p.Attempts = 3
	}
	if p.Backoff <= 0 {
		p.Backoff = 10 * time.Millisecond
	}
	client := &http.Client{Timeout: p.Timeout}
	for _, job := range jobs {
		d := WebhookDelivery{URL: job.url, Action: job.action, Body: job.body}
		for d.Attempts < p.Attempts && !d.Delivered {
			if d.Attempts > 0 {
				time.Sleep(p.Backoff)
			}
			d.Attempts++
			d.StatusCode, d.Err = 0, ""
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, job.url, bytes.NewReader(job.body))
			if err != nil {
				d.Err = err.Error()
				break
			}
			// The XML string goes out labelled as a form, as PHP's curl labels a string body.
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("User-Agent", "sendlooptest-webhook/1")
			resp, err := client.Do(req)
			if err != nil {
				d.Err = err.Error()
				continue
			}
			resp.Body.Close()
			d.StatusCode = resp.StatusCode
			d.Delivered = resp.StatusCode >= 200 && resp.StatusCode < 300
			if !d.Delivered {
				d.Err = "HTTP " + strconv.Itoa(resp.StatusCode)
			}
		}
		s.mu.Lock()
		s.webhooks = append(s.webhooks, d)
		s.mu.Unlock()
	}
}

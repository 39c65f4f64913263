package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/sendlooptest"
)

// The settings `sendloop fake` prints for its control API, which its subcommands read.
const (
	envFakeURL   = "SENDLOOP_FAKE_URL"   // the control API's root, …/_fake
	envFakeKey   = "SENDLOOP_FAKE_KEY"   // its bearer key
	envFakeInbox = "SENDLOOP_FAKE_INBOX" // a one-time URL that logs a browser in to the inbox
)

// fakeClientOptions are the flags of the fake command's client subcommands.
type fakeClientOptions struct {
	to         string // messages --to
	raw        bool   // message --raw
	listID     int    // confirm, event --list
	campaignID int    // event --campaign
}

// fakeSubcommands are the fake command's client subcommands and the flags each takes.
var fakeSubcommands = map[string][]string{
	"messages": {"to"},
	"message":  {"raw"},
	"confirm":  {"list"},
	"delete":   {"list"},
	"event":    {"list", "campaign"},
	"reset":    nil,
	"inbox":    nil,
}

// fakeClient calls the control API of a running fake.
type fakeClient struct {
	base, key string
	hc        *http.Client
}

// newFakeClient reads SENDLOOP_FAKE_URL and SENDLOOP_FAKE_KEY.
func (a *app) newFakeClient() (*fakeClient, error) {
	base, key := strings.TrimSpace(a.getenv(envFakeURL)), strings.TrimSpace(a.getenv(envFakeKey))
	switch {
	case base == "" || key == "":
		return nil, configError("%s and %s are not set: run the commands in the environment `sendloop fake` printed (. ./fake.env)", envFakeURL, envFakeKey)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, configError("%s=%q is not an http URL", envFakeURL, base)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &fakeClient{base: strings.TrimSuffix(base, "/"), key: key, hc: &http.Client{Transport: tr}}, nil
}

// call sends a request and returns the answer's body; a status other than 200 is an error
// with the API's message.
func (c *fakeClient) call(ctx context.Context, method, path string, form url.Values) ([]byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the fake at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the fake's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		e.Error = printable(e.Error)
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return nil, configError("the fake refused %s (%s): %s", envFakeKey, resp.Status, e.Error)
		}
		return nil, fmt.Errorf("the fake answered %s: %s", resp.Status, e.Error)
	}
	return b, nil
}

// runFakeClient runs a client subcommand; args[0] names it.
func runFakeClient(ctx context.Context, a *app, args []string, o fakeClientOptions) error {
	sub, rest := args[0], args[1:]
	want := map[string]int{"messages": 0, "message": 1, "confirm": 1, "delete": 1, "event": 2, "reset": 0, "inbox": 0}[sub]
	if len(rest) != want {
		names := map[string]string{"message": "a message ID", "confirm": "an EMAIL", "delete": "an EMAIL", "event": "a KIND and an EMAIL"}[sub]
		if names == "" {
			return usagef("fake", "fake %s takes no arguments", sub)
		}
		return usagef("fake", "fake %s takes %s", sub, names)
	}
	if (sub == "confirm" || sub == "delete") && o.listID <= 0 {
		return usagef("fake", "fake %s needs --list ID", sub)
	}
	c, err := a.newFakeClient()
	if err != nil {
		return err
	}
	switch sub {
	case "messages":
		return c.messages(ctx, a, o.to)
	case "message":
		return c.message(ctx, a, rest[0], o.raw)
	case "confirm":
		return c.action(ctx, a, http.MethodPost, "/lists/"+strconv.Itoa(o.listID)+"/confirm", url.Values{"email": {rest[0]}},
			fmt.Sprintf("Confirmed %s in list %d", printable(rest[0]), o.listID))
	case "delete":
		return c.action(ctx, a, http.MethodDelete, "/lists/"+strconv.Itoa(o.listID)+"/members/"+url.PathEscape(rest[0]), nil,
			fmt.Sprintf("Deleted %s from list %d", printable(rest[0]), o.listID))
	case "event":
		kind, err := sendlooptest.ParseEventKind(rest[0])
		if err != nil {
			return usagef("fake", "%v", err)
		}
		form := url.Values{"kind": {string(kind)}, "email": {rest[1]}}
		if o.listID > 0 {
			form.Set("list", strconv.Itoa(o.listID))
		}
		if o.campaignID > 0 {
			form.Set("campaign", strconv.Itoa(o.campaignID))
		}
		return c.action(ctx, a, http.MethodPost, "/events", form, fmt.Sprintf("Recorded %s of %s", withArticle(string(kind)), printable(rest[1])))
	case "reset":
		return c.action(ctx, a, http.MethodPost, "/reset", url.Values{}, "The fake is back to its seed")
	default: // inbox
		b, err := c.call(ctx, http.MethodPost, "/inbox/token", url.Values{})
		if err != nil {
			return err
		}
		var v struct{ URL string }
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("reading the fake's answer: %w", err)
		}
		if a.json {
			return writeJSON(a.stdout, orderedObject{{"url", v.URL}})
		}
		_, err = fmt.Fprintln(a.stdout, printable(v.URL))
		return err
	}
}

// messagesAnswer is what the tool reads of the messages API.
type messagesAnswer struct {
	Total    int `json:"total"`
	Dropped  int `json:"dropped"`
	Messages []struct {
		ID        string
		MessageID string
		To        []struct{ Address string }
		Bcc       []struct{ Address string }
		Subject   string
		Created   time.Time
	} `json:"messages"`
}

func (c *fakeClient) messages(ctx context.Context, a *app, to string) error {
	q := url.Values{"limit": {"0"}}
	if to != "" {
		q.Set("to", to)
	}
	b, err := c.call(ctx, http.MethodGet, "/api/v1/messages?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	if a.json {
		// The API's own answer, as Mailpit clients read it.
		_, err := a.stdout.Write(b)
		return err
	}
	var v messagesAnswer
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("reading the fake's answer: %w", err)
	}
	t := newTable(a.stdout, "ID", "TIME", "TO", "SUBJECT", "MESSAGE-ID")
	for _, m := range v.Messages {
		var rcpts []string
		for _, r := range append(m.To, m.Bcc...) {
			rcpts = append(rcpts, r.Address)
		}
		t.row(printable(m.ID), m.Created.UTC().Format(time.DateTime), printable(strings.Join(rcpts, ", ")), printable(m.Subject), printable(m.MessageID))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if v.Dropped > 0 {
		a.note("the fake dropped %s beyond --keep-messages", plural(v.Dropped, "older message"))
	}
	return nil
}

func (c *fakeClient) message(ctx context.Context, a *app, id string, raw bool) error {
	path := "/api/v1/message/" + url.PathEscape(id)
	if raw {
		path += "/raw"
	}
	b, err := c.call(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if raw || a.json {
		_, err := a.stdout.Write(b)
		return err
	}
	var m struct {
		MessageID, Subject, Text, HTML string
		Date                           time.Time
		Envelope                       struct {
			From string
			To   []string
		}
		Sendloop struct{ MergeVars map[string]any }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("reading the fake's answer: %w", err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Message-ID: %s\nDate: %s\nFrom: %s\nTo: %s\nSubject: %s\n", printable(m.MessageID),
		m.Date.UTC().Format(time.RFC1123Z), printable(m.Envelope.From), printable(strings.Join(m.Envelope.To, ", ")), printable(m.Subject))
	if len(m.Sendloop.MergeVars) > 0 {
		vars, _ := marshal(m.Sendloop.MergeVars)
		fmt.Fprintf(&out, "Merge variables: %s\n", printable(string(vars)))
	}
	if m.Text != "" {
		// The text's own line ends are kept; a CR before them is the message's, not the
		// terminal's business.
		text := strings.ReplaceAll(strings.TrimRight(m.Text, "\r\n"), "\r\n", "\n")
		fmt.Fprintf(&out, "\n%s\n", printableLines(text))
	}
	if m.HTML != "" {
		fmt.Fprintf(&out, "\n(HTML part: %s; see it with --json, --raw or in the inbox)\n", plural(len(m.HTML), "byte"))
	}
	_, err = io.WriteString(a.stdout, out.String())
	return err
}

// action posts an action and says what it did, with the webhooks it posted (their URLs
// without the query's values: a receiver's token would land in CI logs). A webhook that
// was not delivered fails the command (exit code 1) after the output: the action was done,
// but a shell test of a receiver must not pass with the receiver down.
func (c *fakeClient) action(ctx context.Context, a *app, method, path string, form url.Values, done string) error {
	b, err := c.call(ctx, method, path, form)
	if err != nil {
		return err
	}
	var v struct {
		Webhooks []struct {
			URL, Action, Error string
			StatusCode         int `json:"status_code"`
			Delivered          bool
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("reading the fake's answer: %w", err)
	}
	failed := 0
	for _, h := range v.Webhooks {
		if !h.Delivered {
			failed++
		}
	}
	if a.json {
		if _, err := a.stdout.Write(b); err != nil {
			return err
		}
	} else {
		var out strings.Builder
		out.WriteString(done + "\n")
		for _, h := range v.Webhooks {
			state := fmt.Sprintf("delivered (HTTP %d)", h.StatusCode)
			if !h.Delivered {
				// The error of Go's client quotes the URL: redacted there too.
				state = "not delivered: " + printable(strings.ReplaceAll(h.Error, h.URL, redactedURL(h.URL)))
			}
			fmt.Fprintf(&out, "%s webhook to %s: %s\n", printable(h.Action), printable(redactedURL(h.URL)), state)
		}
		if _, err := io.WriteString(a.stdout, out.String()); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%s of %d not delivered (the action was done; see the webhook deliveries: GET $%s/webhooks)",
			plural(failed, "webhook"), len(v.Webhooks), envFakeURL)
	}
	return nil
}

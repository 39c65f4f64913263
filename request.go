package sendloop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// commandSpec is what the package knows of a command it sends.
type commandSpec struct {
	// class is the retry class, decided from the command's effect in the specification.
	class transport.Class
	// method and path override the v3 address, POST {base}/api/v3/<command>/<format>: the
	// person operations live elsewhere.
	method, path string
}

// commands is the one table of the commands the package sends. Every typed method finds its
// command here (apiCall.spec refuses one that is missing), Call and CallRaw take a known
// command's class from it, and a test proves that each one has a typed method, a handler in
// sendlooptest and a test.
var commands = map[string]commandSpec{
	"account.info.get": {class: transport.Read},
	// Setting fields to given values: a repeat sets the same values.
	"account.info.update": {class: transport.Idempotent},

	// Each call makes a new list or campaign: a repeat would make a second one.
	"list.create":          {class: transport.OneShot},
	"list.update":          {class: transport.Idempotent},
	"list.get":             {class: transport.Read},
	"list.getlist":         {class: transport.Read},
	"list.settings.get":    {class: transport.Read},
	"list.settings.update": {class: transport.Idempotent},

	"subscriber.browse": {class: transport.Read},
	"subscriber.get":    {class: transport.Read},
	"subscriber.search": {class: transport.Read},
	// Rows already in the list come back as duplicates.
	"subscriber.import": {class: transport.Idempotent},
	// A repeat is answered "already exists" (125) or "not subscribed" (127), which the typed
	// methods settle with a read-back (see ErrOutcomeUnknown).
	"subscriber.subscribe":   {class: transport.Idempotent},
	"subscriber.unsubscribe": {class: transport.Idempotent},
	"subscriber.update":      {class: transport.Idempotent},

	"suppression.list.getlist": {class: transport.Read},
	"suppression.list.get":     {class: transport.Read},
	// An address already suppressed stays suppressed once.
	"suppression.list.add": {class: transport.Idempotent},

	"campaign.create": {class: transport.OneShot},
	"campaign.get":    {class: transport.Read},
	"campaign.update": {class: transport.Idempotent},
	// A repeat is answered "not found" (106), settled with campaign.get.
	"campaign.delete": {class: transport.Idempotent},

	"report.list.overall":             {class: transport.Read},
	"report.campaign.overall":         {class: transport.Read},
	"report.campaign.webbrowserviews": {class: transport.Read},
	"report.campaign.unsubscriptions": {class: transport.Read},
	"report.campaign.opens":           {class: transport.Read},
	"report.campaign.forwards":        {class: transport.Read},
	"report.campaign.openlocations":   {class: transport.Read},
	"report.campaign.emailclients":    {class: transport.Read},
	"report.campaign.bounces":         {class: transport.Read},
	"report.campaign.spamcomplaints":  {class: transport.Read},

	"data.campaign.unsubscriptions": {class: transport.Read},
	"data.campaign.openlocations":   {class: transport.Read},
	"data.campaign.forwards":        {class: transport.Read},
	"data.campaign.browserviews":    {class: transport.Read},
	"data.campaign.bounces":         {class: transport.Read},

	"export.unsubscriptions": {class: transport.Read},
	"export.suppressionlist": {class: transport.Read},
	"export.spamcomplaints":  {class: transport.Read},
	"export.bounces":         {class: transport.Read},
	"system.systemdate.get":  {class: transport.Read},
	"system.timezones.get":   {class: transport.Read},

	// Each track records a session of the person: a repeat would record a second one.
	personTrack:  {class: transport.OneShot, method: http.MethodPost, path: "/api/v4/person.json"},
	personGet:    {class: transport.Read, method: http.MethodGet, path: "/api/v3/person.json"},
	personDelete: {class: transport.Idempotent, method: http.MethodGet, path: "/api/v3/person.json/"},
}

// The person operations, as named in errors, logs and the command table.
const (
	personTrack  = "person.track"
	personGet    = "person.get"
	personDelete = "person.delete"
)

// classOf gives the retry class of a command for Call: the table's for a known command,
// read for names that say so, and one-shot for anything else, so that an unknown command
// that creates something is never sent twice.
func classOf(command string) transport.Class {
	name := strings.ToLower(command)
	if spec, ok := commands[name]; ok {
		return spec.class
	}
	switch {
	case strings.HasPrefix(name, "report."), strings.HasPrefix(name, "data."),
		strings.HasPrefix(name, "export."), strings.HasPrefix(name, "system."):
		return transport.Read
	}
	switch name[strings.LastIndexByte(name, '.')+1:] {
	case "get", "getlist", "browse", "search":
		return transport.Read
	}
	return transport.OneShot
}

// apiCall is one command to send. Every typed method, Call and CallRaw send through
// Client.do (or, for an answer in xml or php, Client.roundTrip).
type apiCall struct {
	command string
	// form holds the parameters; do adds APIKey. A GET (the person reads) sends them in
	// the query and the key as HTTP Basic authentication, never in the URL.
	form url.Values
	// body, when set, is a form body the caller encoded itself, key included
	// (appendKeyParam), for bulk imports.
	body []byte
	// format is the answer's format: json unless CallRaw asks for xml or php.
	format Format
	// secrets of the call's own (a new password) are removed from errors like the key.
	secrets []string
	// class, when set, overrides the table's (Call's WithRetryClass, unknown commands).
	class *transport.Class
}

// request builds the transport request of a call.
func (c *Client) request(call *apiCall) (*transport.Request, error) {
	spec, known := commands[strings.ToLower(call.command)]
	switch {
	case call.class != nil:
		spec.class = *call.class
	case !known:
		// A typed method whose command is not in the table: a bug of this package.
		return nil, fmt.Errorf("sendloop: %s: the command is missing from the command table", call.command)
	}
	format := call.format
	if format == "" {
		format = FormatJSON
	}
	req := &transport.Request{
		Command: call.command,
		Class:   spec.class,
		Method:  http.MethodPost,
		URL:     c.baseURL + "/api/v3/" + call.command + "/" + string(format),
	}
	if spec.path != "" {
		req.Method, req.URL = spec.method, c.baseURL+spec.path
	}
	switch {
	case req.Method == http.MethodGet:
		req.URL += "?" + call.form.Encode()
		req.Header = http.Header{"Authorization": {"Basic " + c.basicCredential()}}
	case call.body != nil:
		req.Body, req.ContentType = call.body, "application/x-www-form-urlencoded"
	default:
		req.Body, req.ContentType = c.encodeForm(call.form), "application/x-www-form-urlencoded"
	}
	return req, nil
}

// roundTrip sends a call and returns the final response, whatever its status.
func (c *Client) roundTrip(ctx context.Context, call *apiCall) (*transport.Response, error) {
	if ctx == nil {
		return nil, errors.New("sendloop: nil context")
	}
	req, err := c.request(call)
	if err != nil {
		return nil, err
	}
	return c.transport.Do(ctx, req)
}

// do sends a call and reads its JSON answer, handing every member other than the
// envelope's own to decode (which may be nil).
func (c *Client) do(ctx context.Context, call *apiCall, decode func(key, value []byte) error) error {
	resp, err := c.roundTrip(ctx, call)
	if err != nil {
		return err
	}
	red := c.transport.Redactor()
	if len(call.secrets) > 0 {
		red = red.With(call.secrets...)
	}
	spec := commands[strings.ToLower(call.command)]
	return c.readAnswer(resp, answer{command: call.command, decode: decode, red: red, status: spec.path != ""})
}

// doForID sends a create whose answer carries the ID of what it made under key, and
// refuses an answer without one: a caller told "0" could neither use it nor safely retry.
func (c *Client) doForID(ctx context.Context, call *apiCall, key string) (int, error) {
	id := 0
	err := c.do(ctx, call, func(k, value []byte) (err error) {
		if string(k) == key {
			id, err = wire.Int(value)
		}
		return err
	})
	if err == nil && id <= 0 {
		err = fmt.Errorf("sendloop: %s: the answer carries no %s", call.command, key)
	}
	if err != nil {
		return 0, err
	}
	return id, nil
}

// encodeForm returns form with the API key added, encoded with sorted keys.
func (c *Client) encodeForm(form url.Values) []byte {
	if form == nil {
		form = url.Values{}
	}
	form.Set("APIKey", c.key())
	return []byte(form.Encode())
}

// appendKeyParam appends the APIKey parameter, for bodies encoded by hand.
func (c *Client) appendKeyParam(b []byte) []byte {
	b = append(b, "APIKey="...)
	return wire.AppendQueryEscape(b, c.key())
}

package sendloop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// apiCall is one command to send; internal/commands holds the table every command is found
// in (a typed method's command missing from it is refused). Every typed method, Call and CallRaw send through
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
	spec, known := commands.Lookup(call.command)
	switch {
	case call.class != nil:
		spec.Class = *call.class
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
		Class:   spec.Class,
		Method:  http.MethodPost,
		URL:     c.baseURL + "/api/v3/" + call.command + "/" + string(format),
	}
	if spec.Path != "" {
		req.Method, req.URL = spec.Method, c.baseURL+spec.Path
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
	spec, _ := commands.Lookup(call.command)
	return c.readAnswer(resp, answer{command: call.command, decode: decode, red: red, status: spec.Path != ""})
}

// doWire is do for a command whose members are read in place by read (see answer.read), in
// one pass over the answer.
func (c *Client) doWire(ctx context.Context, call *apiCall, read func(key []byte, d *wire.Decoder) error) error {
	resp, err := c.roundTrip(ctx, call)
	if err != nil {
		return err
	}
	spec, _ := commands.Lookup(call.command)
	return c.readAnswer(resp, answer{command: call.command, read: read, red: c.transport.Redactor(), status: spec.Path != ""})
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

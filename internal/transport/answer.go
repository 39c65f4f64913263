package transport

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/outcome"
)

// The reading of an answer that the root and legacy clients share: the error for a response
// that is no answer of the service's, and the outcome rule of a write.

// excerptLimit bounds the body excerpt kept in an HTTPError.
const excerptLimit = 200

// HTTPError returns the error for a response that is no answer of the service's: reason and
// an excerpt of the body, with red's secrets removed. A redirect keeps no excerpt: its body
// repeats the target's path and query, which the error must not show.
func (c *Client) HTTPError(red Redactor, command string, resp *Response, reason string) *HTTPError {
	e := &HTTPError{
		Command:    command,
		HTTPStatus: resp.StatusCode,
		Attempts:   resp.Attempts,
		RetryAfter: resp.RetryAfter,
		Reason:     red.Redact(reason),
		pkg:        c.pkg,
	}
	if resp.RedirectOrigin == "" {
		e.Excerpt = Excerpt(red, resp.Body)
	}
	return e
}

// RedirectError is HTTPError for a redirect that was not followed.
func (c *Client) RedirectError(red Redactor, command string, resp *Response) *HTTPError {
	return c.HTTPError(red, command, resp, RedirectReason(resp))
}

// Excerpt returns the start of body, printable, on one line, with secrets removed. Secrets
// go before anything is cut or joined, so that no cut can leave part of one behind.
func Excerpt(red Redactor, body []byte) string {
	text := red.RedactHead(body, 64<<10)
	text = strings.Join(strings.FieldsFunc(strings.ToValidUTF8(text, "\uFFFD"), func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == ' '
	}), " ")
	if len(text) > excerptLimit {
		cut := excerptLimit
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}

// GatewayMayHaveRun reports a one-shot write answered by a gateway's 502 or 504: the service
// behind it may have processed the request.
func (r *Response) GatewayMayHaveRun() bool {
	return r.Class == OneShot &&
		(r.StatusCode == http.StatusBadGateway || r.StatusCode == http.StatusGatewayTimeout)
}

// Outcome applies the outcome rule of writes to err, the error read from resp's answer: a
// one-shot write answered 502 or 504 by a gateway, or a write whose final answer is no
// answer of the service's (an *HTTPError) after an attempt that may have run, has an
// unknown outcome, and the error returned matches outcome.ErrUnknown. Any other err is
// returned as it is. It ends the call's observation (see Ended).
func (c *Client) Outcome(command string, resp *Response, err error) error {
	return c.Ended(resp, c.outcome(command, resp, err))
}

func (c *Client) outcome(command string, resp *Response, err error) error {
	var httpErr *HTTPError
	switch {
	case err == nil:
	case resp.GatewayMayHaveRun():
		return &outcome.Error{Prefix: c.pkg + ": " + command, First: err}
	case resp.Class != Read && resp.EarlierAttemptMayHaveRun && errors.As(err, &httpErr):
		return &outcome.Error{Prefix: c.pkg + ": " + command, First: resp.EarlierFailure, Last: err}
	}
	return err
}

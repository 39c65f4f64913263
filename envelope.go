package sendloop

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// answer says how to read one call's answer.
type answer struct {
	command string
	// decode receives every member other than the envelope's own; it may be nil.
	decode func(key, value []byte) error
	// read, when set instead of decode, reads every member other than the envelope's own in
	// place, in the one pass over the answer (it may leave a member, which is skipped).
	read func(key []byte, d *wire.Decoder) error
	// red removes the client's secrets, and the call's own (a new password), from errors.
	red transport.Redactor
	// status reads a person answer, whose envelope is Status ('Okay') rather than Success.
	status bool
}

// decodeEnvelope reads a v3 JSON answer.
func (c *Client) decodeEnvelope(command string, resp *transport.Response, decode func(key, value []byte) error) error {
	return c.readAnswer(resp, answer{command: command, decode: decode, red: c.transport.Redactor()})
}

// readAnswer reads Success (or Status) and the error members of a JSON answer in one pass
// over it, handing the other members to a.decode. A write whose final answer is no answer of
// the service's (an *HTTPError) after an attempt that may have run, or a one-shot write
// answered 502 or 504 by a gateway, has an unknown outcome: its error matches
// ErrOutcomeUnknown.
func (c *Client) readAnswer(resp *transport.Response, a answer) error {
	return c.transport.Outcome(a.command, resp, c.readAnswerBody(resp, a))
}

func (c *Client) readAnswerBody(resp *transport.Response, a answer) error {
	// A byte-order mark is no part of the JSON; some PHP setups send one.
	resp.Body = bytes.TrimPrefix(resp.Body, []byte("\xef\xbb\xbf"))
	if resp.RedirectOrigin != "" {
		return c.transport.RedirectError(a.red, a.command, resp)
	}
	if !looksLikeJSONObject(resp.Body) {
		return c.httpError(a, resp, "response is not JSON")
	}
	var (
		hasSuccess, success bool
		hasStatus           bool
		status              string
		apiErr              = APIError{Command: a.command, HTTPStatus: resp.StatusCode, Attempts: resp.Attempts,
			EarlierAttemptMayHaveRun: resp.EarlierAttemptMayHaveRun, earlierFailure: resp.EarlierFailure}
		decodeErr error
	)
	// One pass over the answer: the envelope's members and the command's own are read in
	// place (a.read), or as raw values (a.decode) for the decoders that take bytes.
	scanErr := wire.Decode(resp.Body, func(d *wire.Decoder) error {
		return d.Object(func(key []byte) (err error) {
			switch k := string(key); {
			case k == "Success":
				hasSuccess = true
				success, err = d.Bool()
			case k == "Status" && a.status:
				hasStatus = true
				status, err = d.String()
			case k == "ErrorCode":
				var code int
				code, err = d.Int()
				apiErr.Code = ErrorCode(code)
			case k == "ErrorMessage", k == "ErrorText", k == "Message" && a.status:
				apiErr.Message, err = d.String()
			case k == "ErrorFields":
				var raw []byte
				if raw, err = d.Raw(); err == nil {
					apiErr.Fields, err = decodeStrings(raw)
				}
			case decodeErr != nil:
			case a.read != nil:
				// A value the reader cannot take is skipped, so that the envelope's own
				// members are still read.
				mark := d.Offset()
				if rerr := a.read(key, d); rerr != nil {
					decodeErr = fmt.Errorf("%s: %w", key, rerr)
					d.Seek(mark)
					err = d.Skip()
				}
			case a.decode != nil:
				var raw []byte
				if raw, err = d.Raw(); err == nil {
					if derr := a.decode(key, raw); derr != nil {
						decodeErr = fmt.Errorf("%s: %w", key, derr)
					}
				}
			}
			return err
		})
	})
	failed := (hasSuccess && !success) || apiErr.Code != 0 ||
		(hasStatus && !strings.EqualFold(strings.TrimSpace(status), "Okay"))
	switch {
	case scanErr != nil:
		return c.httpError(a, resp, "malformed JSON response: "+scanErr.Error())
	case failed:
		if apiErr.Message == "" && hasStatus {
			apiErr.Message = "Status " + status
		}
		// A server that echoes parameters must not put a secret into an error.
		apiErr.Message = a.red.Redact(apiErr.Message)
		for i, f := range apiErr.Fields {
			apiErr.Fields[i] = a.red.Redact(f)
		}
		return &apiErr
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return c.httpError(a, resp, "unexpected status")
	case decodeErr != nil && a.red.Contains(resp.Body):
		// The value quoted by the decoding error could hold part of a secret.
		return fmt.Errorf("sendloop: %s: decoding response: a malformed value (details withheld: the answer echoes a secret)", a.command)
	case decodeErr != nil:
		return fmt.Errorf("sendloop: %s: decoding response: %w", a.command, decodeErr)
	}
	return nil
}

func looksLikeJSONObject(body []byte) bool {
	for _, b := range body {
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

func decodeStrings(value []byte) ([]string, error) {
	var out []string
	err := wire.ScanArray(value, func(elem []byte) error {
		s, err := wire.String(elem)
		out = append(out, s)
		return err
	})
	return out, err
}

func (c *Client) httpError(a answer, resp *transport.Response, reason string) *HTTPError {
	return c.transport.HTTPError(a.red, a.command, resp, reason)
}

// checkForeignEnvelope recognises a failure in an xml or php response, for CallRaw.
func (c *Client) checkForeignEnvelope(command string, format Format, resp *transport.Response) error {
	return c.transport.Ended(resp, c.readForeignEnvelope(command, format, resp))
}

func (c *Client) readForeignEnvelope(command string, format Format, resp *transport.Response) error {
	a := answer{command: command, red: c.transport.Redactor()}
	if resp.RedirectOrigin != "" {
		return c.transport.RedirectError(a.red, a.command, resp)
	}
	var (
		fields map[string]string
		ok     bool
	)
	if format == FormatXML {
		fields, ok = xmlEnvelope(resp.Body)
	} else {
		fields, ok = phpEnvelope(resp.Body)
	}
	if !ok {
		return c.httpError(a, resp, "response is not "+strings.ToUpper(string(format)))
	}
	success, _ := wire.ParseBool(fields["Success"])
	code, _ := strconv.Atoi(strings.TrimSpace(fields["ErrorCode"]))
	if !success || code != 0 {
		if _, has := fields["Success"]; has || code != 0 {
			return &APIError{Code: ErrorCode(code), Message: a.red.Redact(fields["ErrorMessage"]), Command: command,
				HTTPStatus: resp.StatusCode, Attempts: resp.Attempts}
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.transport.Outcome(command, resp, c.httpError(a, resp, "unexpected status"))
	}
	return nil
}

// xmlEnvelope collects the text of the root element's scalar children.
func xmlEnvelope(body []byte) (map[string]string, bool) {
	dec := xml.NewDecoder(bytes.NewReader(wire.ValidXML(body)))
	fields := map[string]string{}
	depth, sawRoot := 0, false
	var name string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			return fields, sawRoot && depth == 0
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			sawRoot = true
			if depth == 2 {
				name = t.Name.Local
				text.Reset()
			}
		case xml.CharData:
			if depth == 2 {
				text.Write(t)
			}
		case xml.EndElement:
			if depth == 2 {
				fields[name] = strings.TrimSpace(text.String())
			}
			depth--
		}
	}
}

var (
	phpSuccess = regexp.MustCompile(`s:7:"Success";b:([01]);`)
	phpCode    = regexp.MustCompile(`s:9:"ErrorCode";(?:i:(-?\d+)|s:\d+:"(-?\d+)");`)
	phpMessage = regexp.MustCompile(`s:12:"ErrorMessage";s:(\d+):"`)
)

// phpEnvelope reads the envelope members out of a PHP serialize() body.
func phpEnvelope(body []byte) (map[string]string, bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("a:")) {
		return nil, false
	}
	fields := map[string]string{}
	if m := phpSuccess.FindSubmatch(body); m != nil {
		fields["Success"] = string(m[1])
	}
	if m := phpCode.FindSubmatch(body); m != nil {
		fields["ErrorCode"] = string(m[1]) + string(m[2])
	}
	if loc := phpMessage.FindSubmatchIndex(body); loc != nil {
		n, _ := strconv.Atoi(string(body[loc[2]:loc[3]]))
		if start := loc[1]; n >= 0 && start+n <= len(body) {
			fields["ErrorMessage"] = string(wire.AppendValidUTF8(nil, body[start:start+n]))
		}
	}
	return fields, true
}

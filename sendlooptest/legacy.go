package sendlooptest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// The legacy single-endpoint API: /api/index.php in its three input forms, answered in
// XML-RPC, on the same state as the v3 commands.

// LegacyPath is the address of the legacy API under the server's URL.
const LegacyPath = "/api/index.php"

// DefaultMaxMediaSize is the largest image Media.Upload stores unless SetMaxMediaSize says
// otherwise: 1 MiB.
const DefaultMaxMediaSize = 1 << 20

// XML-RPC fault codes the fake answers with where the legacy API has no error code (the
// xmlrpc-epi conventions).
const (
	faultUnknownMethod = -32601 // an unknown command, or one the fake does not simulate
	faultBadParams     = -32602 // a parameter missing or unusable, outside codes 1–9
)

// maxLegacyDays bounds the Days of Chart.ListActivity, ten years.
const maxLegacyDays = 3660

// legacyInput is a legacy request as the fake read it: the key, the command, and the
// other parameters under their bare names in bracket notation (Fields[EmailAddress]).
type legacyInput struct {
	key, command string
	params       url.Values
}

// readLegacy reads the three input forms: FormValue_Message (an Entry > Message document,
// by POST or GET), POST fields prefixed FormValue_, GET fields with bare names. It reports
// false, legacy code 1, for anything else: another method, a POST body that is not
// form-encoded, a POST without prefixed fields, a GET without bare ones, a message that is
// not an Entry > Message document.
func readLegacy(r *http.Request, form url.Values) (legacyInput, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return legacyInput{}, false
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/x-www-form-urlencoded" {
			return legacyInput{}, false
		}
	}
	if doc, ok := form["FormValue_Message"]; ok {
		return parseLegacyMessage(doc[0])
	}
	in := legacyInput{params: url.Values{}}
	for k, v := range form {
		bare, prefixed := strings.CutPrefix(k, "FormValue_")
		switch {
		case r.Method == http.MethodPost && prefixed:
			in.params[bare] = v
		case r.Method == http.MethodGet && !prefixed:
			in.params[k] = v
		}
	}
	if len(in.params) == 0 {
		return legacyInput{}, false
	}
	in.key, in.command = in.params.Get("APIKey"), in.params.Get("Command")
	delete(in.params, "APIKey")
	delete(in.params, "Command")
	return in, true
}

// maxMessageDepth bounds the nesting of a FormValue_Message document.
const maxMessageDepth = 16

// parseLegacyMessage reads an Entry > Message document. Each child of Message is a
// parameter; nested elements are bracket notation (<Fields><EmailAddress> is
// Fields[EmailAddress]); <item key="k"> stands for the name part k and a bare <item> for
// the empty part of a list (Tags[]).
func parseLegacyMessage(doc string) (legacyInput, bool) {
	d := xml.NewDecoder(strings.NewReader(doc))
	in := legacyInput{params: url.Values{}}
	root, err := nextStart(d)
	if err != nil || root.Name.Local != "Entry" {
		return legacyInput{}, false
	}
	msg, err := nextStart(d)
	if err != nil || msg.Name.Local != "Message" {
		return legacyInput{}, false
	}
	if err := readMessageChildren(d, "", in.params, 0); err != nil {
		return legacyInput{}, false
	}
	in.key, in.command = in.params.Get("APIKey"), in.params.Get("Command")
	delete(in.params, "APIKey")
	delete(in.params, "Command")
	return in, true
}

// nextStart returns the next start element, allowing only blanks, comments and processing
// instructions before it.
func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.StartElement{}, errors.New("text where an element belongs")
			}
		case xml.EndElement:
			return xml.StartElement{}, errors.New("no element")
		}
	}
}

// readMessageChildren reads the children of the element just opened, under the name
// prefix, up to its end tag.
func readMessageChildren(d *xml.Decoder, prefix string, out url.Values, depth int) error {
	if depth > maxMessageDepth {
		return errors.New("nested too deep")
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			part := t.Name.Local
			if part == "item" {
				part = ""
				for _, a := range t.Attr {
					if a.Name.Local == "key" {
						part = a.Value
					}
				}
			}
			key := part
			if prefix != "" {
				key = prefix + "[" + part + "]"
			}
			if err := readMessageElement(d, key, out, depth+1); err != nil {
				return err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return errors.New("text between parameters")
			}
		case xml.EndElement:
			return nil
		}
	}
}

// readMessageElement reads one parameter element just opened: its text is the value of
// key, or its children are parameters under key.
func readMessageElement(d *xml.Decoder, key string, out url.Values, depth int) error {
	if depth > maxMessageDepth {
		return errors.New("nested too deep")
	}
	var text []byte
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text = append(text, t...)
		case xml.StartElement:
			if len(bytes.TrimSpace(text)) > 0 {
				return errors.New("mixed content")
			}
			// A container: read this child, then the rest of the children.
			part := t.Name.Local
			if part == "item" {
				part = ""
				for _, a := range t.Attr {
					if a.Name.Local == "key" {
						part = a.Value
					}
				}
			}
			if err := readMessageElement(d, key+"["+part+"]", out, depth+1); err != nil {
				return err
			}
			return readMessageChildren(d, key, out, depth)
		case xml.EndElement:
			out.Add(key, string(text))
			return nil
		}
	}
}

// legacyName gives the command of a legacy request for the request log, faults and
// counters, also when the request cannot be read.
func legacyName(r *http.Request, form url.Values) string {
	if in, ok := readLegacy(r, form); ok {
		return in.command
	}
	for _, k := range []string{"FormValue_Command", "Command"} {
		if v := form.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// legacyFailure is a failed legacy command: a legacy error code (1–9, answered as the
// APIError / APIErrorCode struct) or, where the legacy API has no code, an XML-RPC fault.
type legacyFailure struct {
	code    int
	fault   int
	message string
	status  int // HTTP status; 0 means 200
}

var legacyMessages = map[int]string{
	1: "Connection type is not compatible",
	2: "Invalid API key or user account is not available",
	3: "Subscriber list does not exist or is not available",
	4: "Email address is missing",
	5: "Email address format is illegal",
	6: "Email address already exists in the subscriber list",
	7: "Email address is invalid",
	8: "Email address does not exist in the subscriber list",
	9: "Media exceeds maximum allowed size",
}

func legacyError(code int) *legacyFailure {
	return &legacyFailure{code: code, message: legacyMessages[code]}
}

func legacyFault(code int, format string, args ...any) *legacyFailure {
	return &legacyFailure{fault: code, message: fmt.Sprintf(format, args...)}
}

// legacyCall is one legacy command invocation as its handler sees it.
type legacyCall struct {
	srv    *Server
	st     *state
	params url.Values
	now    time.Time
	ip     string
}

type legacyHandler func(c *legacyCall) (object, *legacyFailure)

type legacyCommand struct {
	name string // as the registry spells it
	run  legacyHandler
}

// legacyHandlers are the legacy commands the fake simulates, by the registry's names.
var legacyHandlers = map[string]legacyHandler{
	cmdtable.LegacySubscriberAdd:         legacySubscriberAdd,
	cmdtable.LegacySubscriberUnsubscribe: legacySubscriberUnsubscribe,
	cmdtable.LegacyChartListActivity:     legacyChartListActivity,
	cmdtable.LegacyMediaUpload:           legacyMediaUpload,
	cmdtable.LegacyMediaBrowse:           legacyMediaBrowse,
	cmdtable.LegacySubscriberGet:         legacySubscriberGet,
	cmdtable.LegacySubscribersGet:        legacySubscribersGet,
	cmdtable.LegacySubscriberUpdate:      legacySubscriberUpdate,
	cmdtable.LegacySubscriberDelete:      legacySubscriberDelete,
}

// legacyCommands are the registry's legacy commands that the fake simulates, and
// legacyListed those it does not (the functions the service lists without detail): they
// answer a fault saying so. Both are keyed by lower-case name.
var legacyCommands, legacyListed = legacyDispatch()

func legacyDispatch() (map[string]legacyCommand, map[string]bool) {
	simulated, listed := map[string]legacyCommand{}, map[string]bool{}
	for _, spec := range cmdtable.All() {
		if spec.API != cmdtable.Legacy {
			continue
		}
		key := strings.ToLower(spec.Name)
		if run, ok := legacyHandlers[spec.Name]; ok {
			simulated[key] = legacyCommand{name: spec.Name, run: run}
		} else {
			listed[key] = true
		}
	}
	return simulated, listed
}

func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request, form url.Values, fault *Fault) {
	in, readable := readLegacy(r, form)
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	s.mu.Lock()
	answer, failed := s.runLegacy(in, readable, ip, fault)
	s.mu.Unlock()
	if fault != nil && fault.Reset == ResetAfterExecution {
		resetConnection(w)
		return
	}
	status := http.StatusOK
	var body []byte
	switch {
	case failed == nil:
		body = appendXMLRPCResponse(nil, answer)
	case failed.code != 0:
		body = appendXMLRPCResponse(nil, object{{"APIError", failed.message}, {"APIErrorCode", strconv.Itoa(failed.code)}})
	default:
		body = appendXMLRPCFault(nil, failed.fault, failed.message)
	}
	if failed != nil && failed.status != 0 {
		status = failed.status
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// runLegacy executes a legacy request; the caller holds s.mu. Checks run in this order:
// input form (1), API key and client address (2), command (fault), injected error code,
// then the command's own checks.
func (s *Server) runLegacy(in legacyInput, readable bool, ip string, fault *Fault) (object, *legacyFailure) {
	if !readable {
		return nil, legacyError(1)
	}
	if in.key == "" || in.key != s.APIKey || (len(s.allowedIPs) > 0 && !slices.Contains(s.allowedIPs, ip)) {
		return nil, legacyError(2)
	}
	name := strings.ToLower(strings.TrimSpace(in.command))
	cmd, known := legacyCommands[name]
	switch {
	case !known && legacyListed[name]:
		return nil, legacyFault(faultUnknownMethod, "%s is not simulated by sendlooptest", in.command)
	case !known && in.command == "":
		return nil, legacyFault(faultUnknownMethod, "no Command given")
	case !known:
		return nil, legacyFault(faultUnknownMethod, "unknown command %q", in.command)
	}
	if fault != nil && fault.ErrorCode != 0 {
		return nil, &legacyFailure{code: fault.ErrorCode, message: "Injected error", status: fault.Status}
	}
	s.countExecution(cmd.name)
	return cmd.run(&legacyCall{srv: s, st: s.state, params: in.params, now: s.now(), ip: ip})
}

// list reads ListID: 3 when it names no list.
func (c *legacyCall) list() (*list, *legacyFailure) {
	id, err := strconv.Atoi(strings.TrimSpace(c.params.Get("ListID")))
	if err != nil {
		return nil, legacyError(3)
	}
	l := c.st.lists.get(id)
	if l == nil {
		return nil, legacyError(3)
	}
	return l, nil
}

// email reads an address parameter: 4 when missing, 5 when it is no address.
func (c *legacyCall) email(name string) (string, *legacyFailure) {
	email := strings.TrimSpace(c.params.Get(name))
	switch {
	case email == "":
		return "", legacyError(4)
	case !validEmail(email):
		return "", legacyError(5)
	}
	return email, nil
}

// required reads a parameter the legacy API has no code for: a fault when it is missing.
func (c *legacyCall) required(name string) (string, *legacyFailure) {
	v := strings.TrimSpace(c.params.Get(name))
	if v == "" {
		return "", legacyFault(faultBadParams, "missing parameter %s", name)
	}
	return v, nil
}

// fields reads Fields[CustomField<id>]: a fault for a malformed name.
func (c *legacyCall) fields() (map[int]string, *legacyFailure) {
	fields, valid := fieldsParam(c.params, "Fields")
	if !valid {
		return nil, legacyFault(faultBadParams, "a Fields[CustomField<id>] parameter has no numeric ID")
	}
	return fields, nil
}

// legacy maps a shared subscription failure to the legacy answer.
func (f failure) legacy() *legacyFailure {
	switch f {
	case failEmailMissing:
		return legacyError(4)
	case failEmailFormat:
		return legacyError(5)
	case failEmailExists:
		return legacyError(6)
	case failEmailRefused:
		return legacyError(7)
	case failNotInList:
		return legacyError(8)
	case failUnknownField:
		return legacyFault(faultBadParams, "a custom field does not exist in the list")
	}
	return nil
}

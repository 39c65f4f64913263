package sendlooptest

import (
	"bytes"
	"encoding/base64"
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

type legacyCommand struct {
	name string
	run  func(c *legacyCall) (object, *legacyFailure)
}

// legacyCommands are the commands the fake simulates, by lower-case name.
var legacyCommands = legacyTable(
	legacyCommand{"Subscriber.Add", legacySubscriberAdd},
	legacyCommand{"Subscriber.Unsubscribe", legacySubscriberUnsubscribe},
	legacyCommand{"Chart.ListActivity", legacyChartListActivity},
	legacyCommand{"Media.Upload", legacyMediaUpload},
	legacyCommand{"Media.Browse", legacyMediaBrowse},
	legacyCommand{"Subscriber.Get", legacySubscriberGet},
	legacyCommand{"Subscribers.Get", legacySubscribersGet},
	legacyCommand{"Subscriber.Update", legacySubscriberUpdate},
	legacyCommand{"Subscriber.Delete", legacySubscriberDelete},
)

func legacyTable(all ...legacyCommand) map[string]legacyCommand {
	out := make(map[string]legacyCommand, len(all))
	for _, c := range all {
		out[strings.ToLower(c.name)] = c
	}
	return out
}

// legacyListed are the function names the service lists without detail that the fake does
// not simulate: they answer a fault saying so.
var legacyListed = func() map[string]bool {
	names := map[string]bool{}
	for _, f := range []string{"Advisory", "EmailPath", "OpensOverall", "OpensDetail", "ClicksOverall",
		"ClicksDetail", "UnsubscriptionsOverall", "UnsubscriptionsDetail", "BrowserViewsOverall",
		"BrowserViewsDetail", "ForwardsOverall", "ForwardsDetail", "BounceOverall", "BounceDetail", "SpamComplains"} {
		names[strings.ToLower("Report.Campaign."+f)] = true
	}
	for _, f := range []string{"Advisory", "Performance", "BounceOverall", "BounceDetails", "Opens", "Clicks",
		"Forwards", "BrowserViews", "Activities", "EmailServices"} {
		names[strings.ToLower("Report.List."+f)] = true
	}
	return names
}()

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

// legacyStatus spells a subscription state as the legacy API does.
func legacyStatus(status string) string {
	if status == statusPending {
		return "Waiting For Opt-In Confirmation"
	}
	return status
}

func legacySubscriberAdd(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	email, f := c.email("Fields[EmailAddress]")
	if f != nil {
		return nil, f
	}
	ip, f := c.required("SubscriptionIP")
	if f != nil {
		return nil, f
	}
	fields, f := c.fields()
	if f != nil {
		return nil, f
	}
	s, fl := c.st.subscribe(l, email, ip, fields, c.now, false)
	if fl != ok {
		return nil, fl.legacy()
	}
	return object{{"Status", legacyStatus(s.Status)}, {"SubscriberID", strconv.Itoa(s.ID)},
		{"RedirectURL", c.srv.URL + "/subscribe/" + strconv.Itoa(l.ID) + "/thanks"}}, nil
}

func legacySubscriberUnsubscribe(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	email, f := c.email("EmailAddress")
	if f != nil {
		return nil, f
	}
	ip, f := c.required("UnsubscriptionIP")
	if f != nil {
		return nil, f
	}
	if _, fl := c.st.unsubscribe(l, email, ip, c.now); fl != ok {
		return nil, fl.legacy()
	}
	return object{{"Status", statusUnsubscribed},
		{"RedirectURL", c.srv.URL + "/unsubscribe/" + strconv.Itoa(l.ID) + "/thanks"}}, nil
}

// member finds the subscriber named by EmailAddress: 4, 5, or 8 when the list lacks it.
func (c *legacyCall) member(l *list) (*subscriber, *legacyFailure) {
	email, f := c.email("EmailAddress")
	if f != nil {
		return nil, f
	}
	s := l.member(email)
	if s == nil {
		return nil, legacyError(8)
	}
	return s, nil
}

// legacyRecord is a subscriber record with the legacy spelling of its state.
func legacyRecord(s *subscriber) object {
	o := s.object()
	for i := range o {
		if o[i].Key == "SubscriptionStatus" {
			o[i].Value = legacyStatus(s.Status)
		}
	}
	return o
}

func legacySubscriberGet(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	return legacyRecord(s), nil
}

func legacySubscribersGet(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	records := make([]object, 0, len(l.members))
	for _, s := range l.members {
		records = append(records, legacyRecord(s))
	}
	return object{{"Subscribers", records}}, nil
}

func legacySubscriberUpdate(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	fields, f := c.fields()
	if f != nil {
		return nil, f
	}
	if fl := l.checkFields(fields); fl != ok {
		return nil, fl.legacy()
	}
	for id, v := range fields {
		s.Fields[id] = v
	}
	return object{{"Status", "Completed"}, {"SubscriberID", strconv.Itoa(s.ID)}}, nil
}

func legacySubscriberDelete(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	l.members = slices.DeleteFunc(l.members, func(m *subscriber) bool { return m == s })
	delete(l.byEmail, strings.ToLower(s.Email))
	return object{{"Status", "Completed"}}, nil
}

func legacyChartListActivity(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	startText, f := c.required("Start")
	if f != nil {
		return nil, f
	}
	start, err := time.Parse(dateLayout, startText)
	if err != nil {
		return nil, legacyFault(faultBadParams, "Start must be a date YYYY-MM-DD")
	}
	daysText, f := c.required("Days")
	if f != nil {
		return nil, f
	}
	days, err := strconv.Atoi(daysText)
	if err != nil || days < 1 || days > maxLegacyDays {
		return nil, legacyFault(faultBadParams, "Days must be a whole number from 1 to %d", maxLegacyDays)
	}
	return object{{"Chart", listActivityChart(l, start, days)}}, nil
}

// listActivityChart draws the subscriptions and unsubscriptions recorded per day. A
// subscriber record keeps its latest subscription and unsubscription dates only, so an
// address that came back counts on the day it last subscribed.
func listActivityChart(l *list, start time.Time, days int) string {
	subs, unsubs := map[string]int{}, map[string]int{}
	for _, s := range l.members {
		subs[s.SubscriptionDate]++
		if s.UnsubscriptionDate != zeroDate {
			unsubs[s.UnsubscriptionDate]++
		}
	}
	labels := make([]string, days)
	for i := range labels {
		labels[i] = start.AddDate(0, 0, i).Format(dateLayout)
	}
	var b bytes.Buffer
	b.WriteString("<data><tooltip>")
	xmlText(&b, fmt.Sprintf("Activity of list %s from %s, %d days", l.Name, labels[0], days))
	b.WriteString("</tooltip><xaxis>")
	for _, day := range labels {
		b.WriteString("<xaxislabel>" + day + "</xaxislabel>")
	}
	b.WriteString("</xaxis><yaxis>Subscribers</yaxis><series>")
	for _, set := range []struct {
		label, noun string
		counts      map[string]int
	}{{"Subscription", "subscription", subs}, {"Unsubscription", "unsubscription", unsubs}} {
		b.WriteString(`<set label="` + set.label + `">`)
		for _, day := range labels {
			n := set.counts[day]
			noun := set.noun
			if n != 1 {
				noun += "s"
			}
			fmt.Fprintf(&b, "<serie><value>%d</value><tooltip>%d %s on %s</tooltip></serie>", n, n, noun, day)
		}
		b.WriteString("</set>")
	}
	b.WriteString("</series></data>")
	return b.String()
}

// mediaLibrary is the account's media library, kept for the legacy Media commands.
type mediaLibrary struct {
	items   []*mediaItem
	nextID  int
	maxSize int64 // 0: DefaultMaxMediaSize
}

type mediaItem struct {
	ID       int
	Type     string
	Data     []byte
	Tags     []string
	Uploaded time.Time
}

func (s *Server) mediaURL(m *mediaItem) string {
	return s.URL + "/media/" + strconv.Itoa(m.ID) + "." + mediaExtension(m.Type)
}

// mediaExtension names the file extension of an image type.
func mediaExtension(mediaType string) string {
	sub := strings.TrimPrefix(mediaType, "image/")
	switch sub {
	case "jpeg", "pjpeg":
		return "jpg"
	case "svg+xml":
		return "svg"
	case "x-icon", "vnd.microsoft.icon":
		return "ico"
	}
	ext := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, sub)
	if ext == "" {
		return "img"
	}
	return ext
}

func legacyMediaUpload(c *legacyCall) (object, *legacyFailure) {
	if _, f := c.required("MediaData"); f != nil {
		return nil, f
	}
	// Line breaks are dropped; spaces are '+' signs that a form decoder turned into spaces
	// (untrimmed: the last character may be one).
	raw := c.params.Get("MediaData")
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '\r', '\n', '\t':
			return -1
		case ' ':
			return '+'
		}
		return r
	}, raw)
	data, err := base64.StdEncoding.DecodeString(clean)
	if err != nil || len(data) == 0 {
		return nil, legacyFault(faultBadParams, "MediaData is not base64")
	}
	typeText, f := c.required("MediaType")
	if f != nil {
		return nil, f
	}
	mt, _, err := mime.ParseMediaType(typeText)
	if err != nil || !strings.HasPrefix(mt, "image/") || mt == "image/" {
		return nil, legacyFault(faultBadParams, "MediaType must be an image type")
	}
	lib := &c.st.media
	limit := lib.maxSize
	if limit <= 0 {
		limit = DefaultMaxMediaSize
	}
	if int64(len(data)) > limit {
		return nil, legacyError(9)
	}
	var tags []string
	for _, t := range strings.Split(c.params.Get("Tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	lib.nextID++
	item := &mediaItem{ID: lib.nextID, Type: mt, Data: data, Tags: tags, Uploaded: c.now}
	lib.items = append(lib.items, item)
	return object{{"Status", "Completed"}, {"MediaID", strconv.Itoa(item.ID)}}, nil
}

func legacyMediaBrowse(c *legacyCall) (object, *legacyFailure) {
	out := object{{"Status", "Completed"}}
	for i, m := range c.st.media.items {
		out = append(out, member{"MediaURL" + strconv.Itoa(i+1), c.srv.mediaURL(m)})
	}
	return out, nil
}

// SetMaxMediaSize sets the largest image, in bytes, that Media.Upload stores; larger ones
// get legacy error 9. n <= 0 restores DefaultMaxMediaSize.
func (s *Server) SetMaxMediaSize(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.media.maxSize = max(n, 0)
}

// MediaItem is an image of the media library.
type MediaItem struct {
	ID        int
	URL       string // under the server's URL; the fake does not serve it
	MediaType string
	Data      []byte
	Tags      []string
	Uploaded  time.Time
}

// MediaItems returns the media library, oldest first.
func (s *Server) MediaItems() []MediaItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]MediaItem, 0, len(s.state.media.items))
	for _, m := range s.state.media.items {
		out = append(out, MediaItem{ID: m.ID, URL: s.mediaURL(m), MediaType: m.Type,
			Data: slices.Clone(m.Data), Tags: slices.Clone(m.Tags), Uploaded: m.Uploaded})
	}
	return out
}

// appendXMLRPCResponse writes a methodResponse whose one param is the struct v.
func appendXMLRPCResponse(b []byte, v object) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<methodResponse><params><param><value>"...)
	b = appendXMLRPC(b, v)
	return append(b, "</value></param></params></methodResponse>\n"...)
}

// appendXMLRPCFault writes a methodResponse holding a fault.
func appendXMLRPCFault(b []byte, code int, message string) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<methodResponse><fault><value>"...)
	b = appendXMLRPC(b, object{{"faultCode", code}, {"faultString", message}})
	return append(b, "</value></fault></methodResponse>\n"...)
}

// appendXMLRPC writes the content of a <value>: string, int, bool, float64, object,
// []object or []string.
func appendXMLRPC(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		b = append(b, "<string>"...)
		b = appendXMLText(b, v)
		return append(b, "</string>"...)
	case int:
		return append(strconv.AppendInt(append(b, "<int>"...), int64(v), 10), "</int>"...)
	case bool:
		if v {
			return append(b, "<boolean>1</boolean>"...)
		}
		return append(b, "<boolean>0</boolean>"...)
	case float64:
		return append(strconv.AppendFloat(append(b, "<double>"...), v, 'f', -1, 64), "</double>"...)
	case object:
		b = append(b, "<struct>"...)
		for _, m := range v {
			b = append(b, "<member><name>"...)
			b = appendXMLText(b, m.Key)
			b = append(b, "</name><value>"...)
			b = appendXMLRPC(b, m.Value)
			b = append(b, "</value></member>"...)
		}
		return append(b, "</struct>"...)
	case []object:
		b = append(b, "<array><data>"...)
		for _, o := range v {
			b = append(appendXMLRPC(append(b, "<value>"...), o), "</value>"...)
		}
		return append(b, "</data></array>"...)
	case []string:
		b = append(b, "<array><data>"...)
		for _, s := range v {
			b = append(appendXMLRPC(append(b, "<value>"...), s), "</value>"...)
		}
		return append(b, "</data></array>"...)
	}
	panic(fmt.Sprintf("sendlooptest: cannot encode %T in XML-RPC", v))
}

func appendXMLText(b []byte, s string) []byte {
	var buf bytes.Buffer
	xmlText(&buf, s)
	return append(b, buf.Bytes()...)
}

func xmlText(buf *bytes.Buffer, s string) { _ = xml.EscapeText(buf, []byte(s)) }

package sendlooptest

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/internal/address"
)

// Subscription states, as the v3 API writes them.
const (
	statusSubscribed   = "Subscribed"
	statusPending      = "Confirmation Pending"
	statusUnsubscribed = "Unsubscribed"
)

// subscriber is a list member. Dates and IPs keep their wire form.
type subscriber struct {
	ID                                   int
	list                                 *list
	Email                                string
	BounceType                           string
	Status                               string
	SubscriptionDate, SubscriptionIP     string
	UnsubscriptionDate, UnsubscriptionIP string
	OptInDate                            string
	Fields                               map[int]string
	Score, ScoreLastUpdate               string
}

// failure is why a subscription operation was refused, shared by the v3 and legacy answers.
type failure int

const (
	ok failure = iota
	failEmailMissing
	failEmailFormat
	failEmailRefused // suppressed
	failEmailExists
	failNotInList
	failUnknownField
)

// v3 maps a failure to the v3 error the fake answers with.
func (f failure) v3(field string) *apiError {
	switch f {
	case failEmailMissing:
		return &apiError{code: 105, message: "Required parameter(s) missing", fields: []string{field}}
	case failEmailFormat:
		return &apiError{code: 111, message: "Invalid email address format", fields: []string{field}}
	case failEmailRefused:
		return &apiError{code: 114, message: "Invalid email address", fields: []string{field}}
	case failEmailExists:
		return &apiError{code: 125, message: "Email address already exists in the list", fields: []string{field}}
	case failNotInList:
		return &apiError{code: 127, message: "No subscriber record for the email address and list ID", fields: []string{field}}
	case failUnknownField:
		return &apiError{code: 135, message: "Custom field not found", fields: []string{"Fields"}}
	}
	return nil
}

// validEmail is the SDK's own check, plus a dot in the domain: the service refuses
// addresses at a bare host name.
func validEmail(s string) bool {
	return address.Valid(s) && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

func (l *list) member(email string) *subscriber { return l.byEmail[strings.ToLower(email)] }

func (l *list) field(id int) *customField {
	for _, f := range l.Fields {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// checkFields refuses values for fields the list does not have.
func (l *list) checkFields(fields map[int]string) failure {
	for id := range fields {
		if l.field(id) == nil {
			return failUnknownField
		}
	}
	return ok
}

// subscribe adds email to l, or re-subscribes it after an unsubscription. Double opt-in
// lists hold the address as Confirmation Pending and mail a confirmation request; imports
// subscribe at once. A new subscriber takes ownership of fields.
func (st *state) subscribe(l *list, email, ip string, fields map[int]string, now time.Time, imported bool) (*subscriber, failure) {
	email = strings.TrimSpace(email)
	switch {
	case email == "":
		return nil, failEmailMissing
	case !validEmail(email):
		return nil, failEmailFormat
	case st.suppressed(l.ID, email):
		return nil, failEmailRefused
	}
	if f := l.checkFields(fields); f != ok {
		return nil, f
	}
	s := l.member(email)
	if s != nil && s.Status != statusUnsubscribed {
		return s, failEmailExists
	}
	today := st.day(now)
	if s == nil {
		st.nextSubscriberID++
		// The callers hand over a map of their own: a new subscriber keeps it.
		if fields == nil {
			fields = map[int]string{}
		}
		s = &subscriber{ID: st.nextSubscriberID, list: l, Email: email, BounceType: "Not Bounced",
			Fields: fields, Score: "0", ScoreLastUpdate: zeroDateTime}
		l.members = append(l.members, s)
		l.byEmail[strings.ToLower(email)] = s
	} else {
		for id, v := range fields {
			s.Fields[id] = v
		}
	}
	s.SubscriptionDate, s.SubscriptionIP = today, ip
	s.UnsubscriptionDate, s.UnsubscriptionIP = zeroDate, "0.0.0.0"
	if l.OptInMode == "Double" && !imported {
		s.Status, s.OptInDate = statusPending, zeroDate
		st.mail(Email{Kind: OptInConfirmation, ListID: l.ID, FromName: l.Settings["SubscriptionOptInFromName"],
			From: l.Settings["SubscriptionOptInFromEmail"], To: email, Subject: l.Settings["SubscriptionOptInSubject"],
			Text: l.Settings["SubscriptionOptInPlainBody"], Time: now})
		return s, ok
	}
	s.Status, s.OptInDate = statusSubscribed, today
	return s, ok
}

// confirm completes a double opt-in: the subscription webhook is posted and, when the list
// says so, the welcome email sent.
func (st *state) confirm(l *list, email string, now time.Time) (*subscriber, failure) {
	s := l.member(email)
	if s == nil || s.Status != statusPending {
		return s, failNotInList
	}
	s.Status, s.OptInDate = statusSubscribed, now.Format(dateLayout)
	st.hook(l.Settings["WebServiceSubscriptionURL"], "Subscription", s, now)
	if l.Settings["SubscriptionFinalAction"] == "Send Email" {
		st.mail(Email{Kind: Welcome, ListID: l.ID, FromName: l.Settings["SubscriptionFinalFromName"],
			From: l.Settings["SubscriptionFinalFromEmail"], To: s.Email, Subject: l.Settings["SubscriptionFinalSubject"],
			Text: l.Settings["SubscriptionFinalPlainBody"], HTML: l.Settings["SubscriptionFinalHTMLBody"], Time: now})
	}
	return s, ok
}

// unsubscribe takes email out of l and posts the unsubscription webhook.
func (st *state) unsubscribe(l *list, email, ip string, now time.Time) (*subscriber, failure) {
	s := l.member(strings.TrimSpace(email))
	if s == nil || s.Status == statusUnsubscribed {
		return s, failNotInList
	}
	s.Status = statusUnsubscribed
	s.UnsubscriptionDate, s.UnsubscriptionIP = now.Format(dateLayout), ip
	st.hook(l.Settings["WebServiceUnsubscriptionURL"], "Unsubscription", s, now)
	return s, ok
}

// fieldsParam collects Fields[CustomField<id>] (or, with prefix "", CustomField<id>) values.
func fieldsParam(form map[string][]string, prefix string) (map[int]string, bool) {
	fields := map[int]string{}
	for key, v := range form {
		name := key
		if prefix != "" {
			inner, found := strings.CutPrefix(key, prefix+"[")
			if !found || !strings.HasSuffix(inner, "]") {
				continue
			}
			name = strings.TrimSuffix(inner, "]")
		}
		idText, found := strings.CutPrefix(name, "CustomField")
		if !found {
			continue
		}
		id, err := strconv.Atoi(idText)
		if err != nil || id < 0 {
			return nil, false
		}
		fields[id] = v[0]
	}
	return fields, true
}

// subscribersHandlers are the handlers of subscribers commands; dispatch pairs them with the command table.
var subscribersHandlers = map[string]handler{
	"subscriber.subscribe":   subscriberSubscribe,
	"subscriber.unsubscribe": subscriberUnsubscribe,
	"subscriber.get":         subscriberGet,
	"subscriber.update":      subscriberUpdate,
	"subscriber.search":      subscriberSearch,
	"subscriber.browse":      subscriberBrowse,
	"subscriber.import":      subscriberImport,
}

func subscriberSubscribe(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	fields, valid := fieldsParam(c.form, "Fields")
	if !valid {
		return nil, failUnknownField.v3("Fields")
	}
	s, f := c.st.subscribe(l, c.form.Get("EmailAddress"), c.form.Get("SubscriptionIP"), fields, c.now, false)
	if f != ok {
		return nil, f.v3("EmailAddress")
	}
	return object{{"SubscriberID", strconv.Itoa(s.ID)}, {"SubscriptionStatus", s.Status},
		{"RedirectURL", c.srv.URL + "/subscribe/" + strconv.Itoa(l.ID) + "/thanks"}}, nil
}

// subscriberUnsubscribe takes the address out of every list that holds it: the command has
// no ListID.
func subscriberUnsubscribe(c *call) (object, *apiError) {
	email := c.form.Get("EmailAddress")
	done := false
	for _, l := range c.st.lists.sorted() {
		if _, f := c.st.unsubscribe(l, email, c.ip, c.now); f == ok {
			done = true
		}
	}
	if !done {
		return nil, failNotInList.v3("EmailAddress")
	}
	return nil, nil
}

// findSubscriber reads SubscriberID or EmailAddress; with both, SubscriberID identifies.
func (c *call) findSubscriber(l *list) (*subscriber, *apiError) {
	idText, email := strings.TrimSpace(c.form.Get("SubscriberID")), strings.TrimSpace(c.form.Get("EmailAddress"))
	switch {
	case idText != "":
		id, _ := strconv.Atoi(idText)
		for _, s := range l.members {
			if s.ID == id {
				return s, nil
			}
		}
	case email != "":
		if s := l.member(email); s != nil {
			return s, nil
		}
	default:
		return nil, &apiError{code: 105, message: "Required parameter(s) missing", fields: []string{"SubscriberID", "EmailAddress"}}
	}
	return nil, failNotInList.v3("EmailAddress")
}

func subscriberGet(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	s, apiErr := c.findSubscriber(l)
	if apiErr != nil {
		return nil, apiErr
	}
	return object{{"Subscriber", append(s.object(), member{"Score", s.Score}, member{"ScoreLastUpdate", s.ScoreLastUpdate})}}, nil
}

// subscriberUpdate changes custom fields and, when the subscriber is named by SubscriberID,
// its address (EmailAddress then holds the new one).
func subscriberUpdate(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	s, apiErr := c.findSubscriber(l)
	if apiErr != nil {
		return nil, apiErr
	}
	fields, valid := fieldsParam(c.form, "Fields")
	if !valid || l.checkFields(fields) != ok {
		return nil, failUnknownField.v3("Fields")
	}
	newEmail := strings.TrimSpace(c.form.Get("EmailAddress"))
	if c.form.Get("SubscriberID") != "" && newEmail != "" && !strings.EqualFold(newEmail, s.Email) {
		if !validEmail(newEmail) {
			return nil, failEmailFormat.v3("EmailAddress")
		}
		if l.member(newEmail) != nil {
			return nil, failEmailExists.v3("EmailAddress")
		}
		delete(l.byEmail, strings.ToLower(s.Email))
		s.Email = newEmail
		l.byEmail[strings.ToLower(newEmail)] = s
	}
	for id, v := range fields {
		s.Fields[id] = v
	}
	return nil, nil
}

// object is the subscriber record as browse and get write it: every custom field of the
// list appears, empty when unset.
func (s *subscriber) object() object {
	o := object{{"SubscriberID", strconv.Itoa(s.ID)}, {"EmailAddress", s.Email}, {"BounceType", s.BounceType},
		{"SubscriptionStatus", s.Status}, {"SubscriptionDate", s.SubscriptionDate},
		{"SubscriptionIP", s.SubscriptionIP}, {"UnsubscriptionDate", s.UnsubscriptionDate},
		{"UnsubscriptionIP", s.UnsubscriptionIP}, {"OptInDate", s.OptInDate}}
	for _, f := range s.list.Fields {
		o = append(o, member{"CustomField" + strconv.Itoa(f.ID), s.Fields[f.ID]})
	}
	return o
}

func subscriberSearch(c *call) (object, *apiError) {
	needle := strings.ToLower(strings.TrimSpace(c.form.Get("EmailAddress")))
	results := []object{}
	for _, l := range c.st.lists.sorted() {
		addresses, details := object{}, object{}
		for _, s := range l.members {
			if !strings.Contains(strings.ToLower(s.Email), needle) {
				continue
			}
			id := strconv.Itoa(s.ID)
			addresses = append(addresses, member{id, s.Email})
			d := object{{"SubscriptionStatus", s.Status}, {"BounceType", s.BounceType}}
			for _, f := range l.Fields {
				d = append(d, member{"CustomField" + strconv.Itoa(f.ID), s.Fields[f.ID]})
			}
			details = append(details, member{id, d})
		}
		if len(addresses) > 0 {
			results = append(results, object{{"ListID", l.ID}, {"ListName", l.Name},
				{"Subscribers", addresses}, {"SubscriberDetails", details}})
		}
	}
	return object{{"SearchResults", results}}, nil
}

// browsePageSize is the number of records subscriber.browse returns per call.
const browsePageSize = 100

func subscriberBrowse(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	page := 0
	if v := strings.TrimSpace(c.form.Get("StartIndex")); v != "" {
		var err error
		if page, err = strconv.Atoi(v); err != nil || page < 0 {
			return nil, invalidValue("StartIndex")
		}
	}
	var seg *segment
	if v := strings.TrimSpace(c.form.Get("SegmentID")); v != "" && v != "0" {
		id, err := strconv.Atoi(v)
		if err != nil || id < 0 {
			return nil, &apiError{code: 121, message: "Invalid segment ID", fields: []string{"SegmentID"}}
		}
		if seg = l.Segments[id]; seg == nil {
			return nil, &apiError{code: 136, message: "Segment not found", fields: []string{"SegmentID"}}
		}
	}
	out := []object{}
	skip := page * browsePageSize
	for _, s := range l.members {
		if seg != nil && s.Fields[seg.FieldID] != seg.Value {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, s.object())
		if len(out) == browsePageSize {
			break
		}
	}
	return object{{"Subscribers", out}}, nil
}

// subscriberImport subscribes Subscribers[<n>][EmailAddress] rows at once (no opt-in
// email), counting addresses already in the list, or twice in the batch, as duplicates
// and refused rows as failures.
func subscriberImport(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	rows := importRows(c.form)
	if len(rows) == 0 {
		return nil, &apiError{code: 105, message: "Required parameter(s) missing", fields: []string{"Subscribers"}}
	}
	var imported, duplicate, failed int
	seen := make(map[string]bool, len(rows))
	for _, row := range rows {
		if row.badField {
			failed++
			continue
		}
		email := strings.ToLower(strings.TrimSpace(row.email))
		if email != "" && seen[email] {
			duplicate++
			continue
		}
		switch _, f := c.st.subscribe(l, row.email, c.ip, row.fields, c.now, true); f {
		case ok:
			seen[email] = true
			imported++
		case failEmailExists:
			seen[email] = true
			duplicate++
		default:
			failed++
		}
	}
	return object{{"TotalImported", imported}, {"TotalDuplicate", duplicate}, {"TotalFailed", failed}}, nil
}

// importRow is one Subscribers[<n>] row of an import.
type importRow struct {
	email    string
	fields   map[int]string
	badField bool // a key that is neither EmailAddress nor CustomField<id>
}

// importRows reads Subscribers[<n>][<key>] parameters into rows, by ascending n, in one
// pass over the form.
func importRows(form map[string][]string) []*importRow {
	byIndex := map[int]*importRow{}
	for key, v := range form {
		rest, found := strings.CutPrefix(key, "Subscribers[")
		if !found {
			continue
		}
		idx, field, found := strings.Cut(rest, "][")
		n, err := strconv.Atoi(idx)
		if !found || err != nil || !strings.HasSuffix(field, "]") {
			continue
		}
		row := byIndex[n]
		if row == nil {
			row = &importRow{}
			byIndex[n] = row
		}
		switch field = field[:len(field)-1]; {
		case field == "EmailAddress":
			row.email = v[0]
		case strings.HasPrefix(field, "CustomField"):
			id, err := strconv.Atoi(field[len("CustomField"):])
			if err != nil || id < 0 {
				row.badField = true
				continue
			}
			if row.fields == nil {
				row.fields = map[int]string{}
			}
			row.fields[id] = v[0]
		default:
			row.badField = true
		}
	}
	keys := make([]int, 0, len(byIndex))
	for n := range byIndex {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	rows := make([]*importRow, len(keys))
	for i, n := range keys {
		rows[i] = byIndex[n]
	}
	return rows
}

// Confirm confirms a pending double opt-in subscription, as the address owner would by
// following the confirmation email: the subscriber becomes Subscribed, the subscription
// webhook is posted (before Confirm returns) and the welcome email sent when the list's
// SubscriptionFinalAction is 'Send Email'.
func (s *Server) Confirm(listID int, email string) error {
	s.mu.Lock()
	l := s.state.lists.get(listID)
	if l == nil {
		s.mu.Unlock()
		return fmt.Errorf("sendlooptest: no list %d", listID)
	}
	_, f := s.state.confirm(l, email, s.now())
	s.mu.Unlock()
	s.deliverWebhooks()
	if f != ok {
		return fmt.Errorf("sendlooptest: %s has no pending subscription to list %d", email, listID)
	}
	return nil
}

// SubscriberStatus returns the state of email in a list, and whether the list holds it.
func (s *Server) SubscriberStatus(listID int, email string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return "", false
	}
	sub := l.member(email)
	if sub == nil {
		return "", false
	}
	return sub.Status, true
}

// SubscriberCount returns how many records a list holds, in any state.
func (s *Server) SubscriberCount(listID int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.state.lists.get(listID); l != nil {
		return len(l.members)
	}
	return 0
}

// SetBounce sets the bounce state of an address in a list ('Hard', 'Soft' or 'Not
// Bounced'); the specification shows no command that does.
func (s *Server) SetBounce(listID int, email, bounceType string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil || l.member(email) == nil {
		return fmt.Errorf("sendlooptest: %s is not in list %d", email, listID)
	}
	if !slices.Contains([]string{"Hard", "Soft", "Not Bounced"}, bounceType) {
		return fmt.Errorf("sendlooptest: unknown bounce type %q", bounceType)
	}
	l.member(email).BounceType = bounceType
	return nil
}

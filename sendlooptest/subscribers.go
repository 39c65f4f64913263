package sendlooptest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop/internal/address"
	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// Subscription states, as the v3 API writes them.
const (
	statusSubscribed   = "Subscribed"
	statusPending      = "Confirmation Pending"
	statusUnsubscribed = "Unsubscribed"
)

// subscriber is a list member, stored compactly (members.go): its state, dates and IPs
// are shared with other members through memberState, which is replaced, never written
// through; its custom fields are packed.
type subscriber struct {
	*memberState
	list   *list
	ID     int
	Email  string
	Fields fieldSet
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

func (l *list) member(email string) *subscriber { return l.byEmail[emailKey(email)] }

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

// checkFieldSet is checkFields for packed values.
func (l *list) checkFieldSet(fields fieldSet) failure {
	for id := range fields.all() {
		if l.field(id) == nil {
			return failUnknownField
		}
	}
	return ok
}

// subscribe adds email to l, or re-subscribes it after an unsubscription. Double opt-in
// lists hold the address as Confirmation Pending and mail a confirmation request; imports
// subscribe at once.
func (st *state) subscribe(l *list, email, ip string, fields map[int]string, now time.Time, imported bool) (*subscriber, failure) {
	if fields == nil {
		fields = map[int]string{}
	}
	return st.join(l, strings.TrimSpace(email), ip, fields, "", now, imported)
}

// join is subscribe for an address already trimmed, with the fields as a map or packed
// (packed, when fields is nil).
func (st *state) join(l *list, email, ip string, fields map[int]string, packed fieldSet, now time.Time, imported bool) (*subscriber, failure) {
	switch {
	case email == "":
		return nil, failEmailMissing
	case !validEmail(email):
		return nil, failEmailFormat
	case st.suppressed(l.ID, email):
		return nil, failEmailRefused
	}
	if fields != nil {
		if f := l.checkFields(fields); f != ok {
			return nil, f
		}
	} else if f := l.checkFieldSet(packed); f != ok {
		return nil, f
	}
	key := emailKey(email)
	s := l.byEmail[key]
	if s != nil && s.Status != statusUnsubscribed {
		return s, failEmailExists
	}
	today := st.day(now)
	if s == nil {
		st.nextSubscriberID++
		s = st.newSubscriber()
		s.ID, s.list, s.Email = st.nextSubscriberID, l, email
		if fields != nil {
			s.Fields = packFields(fields)
		} else {
			s.Fields = packed
		}
		l.members = append(l.members, s)
		l.changes++
		l.byEmail[key] = s
	} else if fields != nil {
		s.setFields(fields)
	} else if packed != "" {
		merged := map[int]string{}
		for id, v := range packed.all() {
			merged[id] = v
		}
		s.setFields(merged)
	}
	bounce := "Not Bounced"
	if s.memberState != nil {
		bounce = s.BounceType
	}
	ms := memberState{BounceType: bounce, SubscriptionDate: today, SubscriptionIP: ip,
		UnsubscriptionDate: zeroDate, UnsubscriptionIP: "0.0.0.0", Status: statusSubscribed, OptInDate: today}
	if l.OptInMode == "Double" && !imported {
		ms.Status, ms.OptInDate = statusPending, zeroDate
		s.memberState = st.intern(ms)
		st.mail(Email{Kind: OptInConfirmation, ListID: l.ID, FromName: l.Settings["SubscriptionOptInFromName"],
			From: l.Settings["SubscriptionOptInFromEmail"], To: email, Subject: l.Settings["SubscriptionOptInSubject"],
			Text: l.Settings["SubscriptionOptInPlainBody"], Time: now})
		return s, ok
	}
	s.memberState = st.intern(ms)
	return s, ok
}

// confirm completes a double opt-in: the subscription webhook is posted and, when the list
// says so, the welcome email sent.
func (st *state) confirm(l *list, email string, now time.Time) (*subscriber, failure) {
	s := l.member(email)
	if s == nil || s.Status != statusPending {
		return s, failNotInList
	}
	ms := *s.memberState
	ms.Status, ms.OptInDate = statusSubscribed, now.Format(dateLayout)
	s.memberState = st.intern(ms)
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
	ms := *s.memberState
	ms.Status = statusUnsubscribed
	ms.UnsubscriptionDate, ms.UnsubscriptionIP = now.Format(dateLayout), ip
	s.memberState = st.intern(ms)
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
	cmdtable.SubscriberSubscribe:   subscriberSubscribe,
	cmdtable.SubscriberUnsubscribe: subscriberUnsubscribe,
	cmdtable.SubscriberGet:         subscriberGet,
	cmdtable.SubscriberUpdate:      subscriberUpdate,
	cmdtable.SubscriberSearch:      subscriberSearch,
	cmdtable.SubscriberBrowse:      subscriberBrowse,
	cmdtable.SubscriberImport:      subscriberImport,
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
	return object{{"Subscriber", append(s.object(), member{"Score", "0"}, member{"ScoreLastUpdate", zeroDateTime})}}, nil
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
		delete(l.byEmail, emailKey(s.Email))
		s.Email = newEmail
		l.byEmail[emailKey(newEmail)] = s
	}
	s.setFields(fields)
	return nil, nil
}

// object is the subscriber record as browse and get write it: every custom field of the
// list appears, empty when unset.
func (s *subscriber) object() object {
	ids := make([]int, len(s.list.Fields))
	for i, f := range s.list.Fields {
		ids[i] = f.ID
	}
	return s.record(ids)
}

// record is object with the list's custom field IDs given (subscriberPage's copy of them).
// subscriberPage.appendJSON writes the same members in the same order.
func (s *subscriber) record(fieldIDs []int) object {
	o := object{{"SubscriberID", strconv.Itoa(s.ID)}, {"EmailAddress", s.Email}, {"BounceType", s.BounceType},
		{"SubscriptionStatus", s.Status}, {"SubscriptionDate", s.SubscriptionDate},
		{"SubscriptionIP", s.SubscriptionIP}, {"UnsubscriptionDate", s.UnsubscriptionDate},
		{"UnsubscriptionIP", s.UnsubscriptionIP}, {"OptInDate", s.OptInDate}}
	for _, id := range fieldIDs {
		o = append(o, member{"CustomField" + strconv.Itoa(id), s.Fields.get(id)})
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
				d = append(d, member{"CustomField" + strconv.Itoa(f.ID), s.Fields.get(f.ID)})
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
	if seg == nil {
		// Without a segment, the page starts at its index: no walk from the start.
		start := len(l.members)
		if page <= len(l.members)/browsePageSize { // else page*browsePageSize may overflow
			start = page * browsePageSize
		}
		end := min(len(l.members), start+browsePageSize)
		return object{{"Subscribers", newSubscriberPage(l, l.members[start:end])}}, nil
	}
	if page > len(l.members)/browsePageSize { // no such page; page*browsePageSize may overflow
		return object{{"Subscribers", newSubscriberPage(l, nil)}}, nil
	}
	// The page after the last one served resumes where it ended, unless the members changed.
	start, skip := 0, page*browsePageSize
	if cur := seg.cursor; cur.changes == l.changes && cur.page == page {
		start, skip = cur.pos, 0
	}
	var out []*subscriber
	i := start
	for ; i < len(l.members) && len(out) < browsePageSize; i++ {
		s := l.members[i]
		if s.Fields.get(seg.FieldID) != seg.Value {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, s)
	}
	seg.cursor = segmentCursor{changes: l.changes, page: page + 1, pos: i}
	return object{{"Subscribers", newSubscriberPage(l, out)}}, nil
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
		return noList(listID)
	}
	_, f := s.state.confirm(l, email, s.now())
	s.mu.Unlock()
	s.deliverWebhooks()
	if f != ok {
		return fmt.Errorf("sendlooptest: %s has no pending subscription to list %d", email, listID)
	}
	return nil
}

// DeleteMember removes email from a list, as the legacy API's Subscriber.Delete does: the
// record is gone, not unsubscribed, and no webhook is posted. A list or a member that does
// not exist is an error.
func (s *Server) DeleteMember(listID int, email string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return noList(listID)
	}
	sub := l.member(email)
	if sub == nil {
		return &missingError{fmt.Sprintf("sendlooptest: %s is not in list %d", strings.TrimSpace(email), listID)}
	}
	l.members = slices.DeleteFunc(l.members, func(m *subscriber) bool { return m == sub })
	l.changes++
	delete(l.byEmail, emailKey(sub.Email))
	return nil
}

// missingError is the error of a list, campaign or member that does not exist, which the
// control API answers 404 (a conflict is 409).
type missingError struct{ msg string }

func (e *missingError) Error() string { return e.msg }

// noList is the error of a list ID that names no list.
func noList(id int) error { return &missingError{fmt.Sprintf("sendlooptest: no list %d", id)} }

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
	l.member(email).setBounce(s.state, bounceType)
	return nil
}

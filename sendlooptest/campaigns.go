package sendlooptest

import (
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// Campaign states the fake uses: a new campaign is a Draft, SimulateSend makes it Sent.
const (
	campaignDraft = "Draft"
	campaignSent  = "Sent"
)

// campaign is an email campaign with its targets and, once SimulateSend ran, its delivery.
type campaign struct {
	ID                                                int
	Version                                           int
	Status                                            string
	Name, FromName, FromEmail, ReplyToName            string
	ReplyToEmail, Subject                             string
	PlainContent, HTMLContent, HTMLContentWithIguana  string
	Iguana, ECommerceTracking, GoogleAnalyticsEnabled bool
	GoogleAnalyticsDomains                            []string
	CustomerIDs                                       []int
	Lists                                             []int // whole target lists
	Segments                                          []int // target segments, by segment ID
	ScheduleType, SendDate, SendTime, SendTimeZone    string

	deliveredAt time.Time     // zero until SimulateSend
	recipients  []*subscriber // who it was delivered to, in delivery order
}

// campaigns holds the account's campaigns.
type campaigns struct {
	byID   map[int]*campaign
	nextID int
}

// campaignsHandlers are the handlers of campaigns commands; dispatch pairs them with the command table.
var campaignsHandlers = map[string]handler{
	// campaign.create's required parameters depend on its Version: the handler checks them.
	cmdtable.CampaignCreate: campaignCreate,
	cmdtable.CampaignGet:    campaignGet,
	cmdtable.CampaignUpdate: campaignUpdate,
	cmdtable.CampaignDelete: campaignDelete,
}

func missingParams(fields ...string) *apiError {
	return &apiError{code: 105, message: "Required parameter(s) missing", fields: fields}
}

func notFound(field string) *apiError {
	return &apiError{code: 106, message: "Requested data not found", fields: []string{field}}
}

// findCampaign reads CampaignID: 106 when no such campaign exists.
func (c *call) findCampaign() (*campaign, *apiError) {
	id, err := strconv.Atoi(strings.TrimSpace(c.form.Get("CampaignID")))
	if err != nil {
		return nil, notFound("CampaignID")
	}
	camp := c.st.campaigns.byID[id]
	if camp == nil {
		return nil, notFound("CampaignID")
	}
	return camp, nil
}

// campaignFormArray returns the values of an array parameter, however it is spelled:
// Name[]=a, Name[0]=a (in index order) or a bare Name=a. Blank values are dropped.
func campaignFormArray(form map[string][]string, name string) []string {
	type indexed struct {
		n int
		v []string
	}
	var out []string
	var numbered []indexed
	for key, vals := range form {
		switch {
		case key == name || key == name+"[]":
			out = append(out, vals...)
		case strings.HasPrefix(key, name+"[") && strings.HasSuffix(key, "]"):
			n, err := strconv.Atoi(key[len(name)+1 : len(key)-1])
			if err == nil {
				numbered = append(numbered, indexed{n, vals})
			}
		}
	}
	sort.Slice(numbered, func(i, j int) bool { return numbered[i].n < numbered[j].n })
	for _, e := range numbered {
		out = append(out, e.v...)
	}
	kept := out[:0]
	for _, v := range out {
		if v = strings.TrimSpace(v); v != "" {
			kept = append(kept, v)
		}
	}
	return kept
}

// campaignFormIDs parses an array of positive IDs; ok is false when one is not.
func campaignFormIDs(form map[string][]string, name string) (ids []int, ok bool) {
	for _, v := range campaignFormArray(form, name) {
		id, err := strconv.Atoi(v)
		if err != nil || id <= 0 {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// campaignFormBool reads an optional boolean: 1/0, true/false, yes/no, on/off.
func campaignFormBool(form map[string][]string, name string) (value, ok bool) {
	v, present := form[name]
	if !present {
		return false, true
	}
	switch strings.ToLower(strings.TrimSpace(v[0])) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off", "":
		return false, true
	}
	return false, false
}

// emailInName matches an address inside a name: an address character, '@', and a run of
// address characters holding a dot with one before it and a non-dot after it. "Ann @ Acme",
// "@handle" and "ann@localhost" do not match. The SDK checks names with the same rule.
var emailInName = regexp.MustCompile(`[^\x00-\x20\x7f@<>()\[\],;:"']@[^\x00-\x20\x7f@<>()\[\],;:"']+\.[^\x00-\x20\x7f@<>()\[\],;:"'.]`)

// checkNames refuses an email address inside FromName or ReplyToName (137).
func checkNames(form map[string][]string) *apiError {
	var fields []string
	for _, name := range []string{"FromName", "ReplyToName"} {
		if v, ok := form[name]; ok && emailInName.MatchString(v[0]) {
			fields = append(fields, name)
		}
	}
	if len(fields) > 0 {
		return &apiError{code: 137, message: "Email address cannot be used in from/reply-to name fields", fields: fields}
	}
	return nil
}

// checkAddresses refuses a malformed FromEmail or ReplyToEmail (111).
func checkAddresses(form map[string][]string) *apiError {
	for _, name := range []string{"FromEmail", "ReplyToEmail"} {
		if v, ok := form[name]; ok && !validEmail(v[0]) {
			return &apiError{code: 111, message: "Invalid email address format", fields: []string{name}}
		}
	}
	return nil
}

// findSegment returns the list holding segment id, or nil.
func (st *state) findSegment(id int) *list {
	for _, l := range st.lists.sorted() {
		if l.Segments[id] != nil {
			return l
		}
	}
	return nil
}

// checkTargets refuses unknown lists (139) and segments (140).
func (st *state) checkTargets(lists, segments []int) *apiError {
	for _, id := range lists {
		if st.lists.get(id) == nil {
			return &apiError{code: 139, message: "One of the provided subscriber lists not found", fields: []string{"TargetListIDs"}}
		}
	}
	for _, id := range segments {
		if st.findSegment(id) == nil {
			return &apiError{code: 140, message: "One of the provided segments not found", fields: []string{"TargetSegmentIDs"}}
		}
	}
	return nil
}

// recipientsParam reads version 2 Recipients: list IDs and <list_id>-<segment_id> pairs.
func (st *state) recipientsParam(form map[string][]string) (lists, segments []int, apiErr *apiError) {
	for _, v := range campaignFormArray(form, "Recipients") {
		listText, segText, isSegment := strings.Cut(v, "-")
		listID, err := strconv.Atoi(listText)
		segID := 0
		if err == nil && isSegment {
			segID, err = strconv.Atoi(segText)
		}
		if err != nil || listID <= 0 || (isSegment && segID <= 0) {
			return nil, nil, invalidValue("Recipients")
		}
		l := st.lists.get(listID)
		if l == nil {
			return nil, nil, &apiError{code: 139, message: "One of the provided subscriber lists not found", fields: []string{"Recipients"}}
		}
		if !isSegment {
			lists = append(lists, listID)
			continue
		}
		if l.Segments[segID] == nil {
			return nil, nil, &apiError{code: 140, message: "One of the provided segments not found", fields: []string{"Recipients"}}
		}
		segments = append(segments, segID)
	}
	return lists, segments, nil
}

// forbiddenContent matches what 145 refuses in HTML: scripts, Flash and Java.
var forbiddenContent = regexp.MustCompile(`(?i)<\s*(script|object|embed|applet)\b|javascript:`)

// anchor matches an HTML link: its href (in any quoting) and its inner HTML.
var anchor = regexp.MustCompile(`(?is)<a\s[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^>]*>(.*?)</a\s*>`)

var (
	htmlTag    = regexp.MustCompile(`(?s)<[^>]*>`)
	plainUnsub = regexp.MustCompile(`(?i)%link:unsubscribe%|https?://\S*unsubscribe`)
)

// checkUnsubscribeLink applies 144 and 146 to the content: see the package documentation for
// what counts as an unsubscription link.
func checkUnsubscribeLink(htmlContent, plainContent string) *apiError {
	if strings.TrimSpace(htmlContent) != "" {
		found, longEnough := false, false
		for _, m := range anchor.FindAllStringSubmatch(htmlContent, -1) {
			href := m[1] + m[2] + m[3]
			if !strings.Contains(strings.ToLower(href), "unsubscribe") {
				continue
			}
			found = true
			text := strings.Join(strings.Fields(html.UnescapeString(htmlTag.ReplaceAllString(m[4], " "))), " ")
			if utf8.RuneCountInString(text) > 3 {
				longEnough = true
			}
		}
		switch {
		case !found:
			return &apiError{code: 144, message: "Unsubscription link is missing in email content", fields: []string{"HTMLContent"}}
		case !longEnough:
			return &apiError{code: 146, message: "Unsubscription link text must be longer than 3 characters", fields: []string{"HTMLContent"}}
		}
	}
	if strings.TrimSpace(plainContent) != "" && !plainUnsub.MatchString(plainContent) {
		return &apiError{code: 144, message: "Unsubscription link is missing in email content", fields: []string{"PlainContent"}}
	}
	return nil
}

// campaignCreate makes a Draft campaign from either request shape. Checks run in the order
// the package documentation gives.
func campaignCreate(c *call) (object, *apiError) {
	f := c.form
	version := 1
	switch v := strings.TrimSpace(f.Get("Version")); v {
	case "", "1":
	case "2":
		version = 2
	default:
		return nil, invalidValue("Version")
	}
	nameField := "CampaignName"
	if version == 2 {
		nameField = "Name"
	}
	var absent []string
	for _, p := range []string{nameField, "FromName", "FromEmail", "ReplyToName", "ReplyToEmail", "Subject"} {
		if strings.TrimSpace(f.Get(p)) == "" {
			absent = append(absent, p)
		}
	}
	if len(absent) > 0 {
		return nil, missingParams(absent...)
	}
	if strings.TrimSpace(f.Get("PlainContent")) == "" && strings.TrimSpace(f.Get("HTMLContent")) == "" {
		return nil, missingParams("PlainContent", "HTMLContent")
	}
	if apiErr := checkNames(f); apiErr != nil {
		return nil, apiErr
	}
	if apiErr := checkAddresses(f); apiErr != nil {
		return nil, apiErr
	}
	camp := &campaign{Version: version, Status: campaignDraft, Name: f.Get(nameField), FromName: f.Get("FromName"),
		FromEmail: strings.TrimSpace(f.Get("FromEmail")), ReplyToName: f.Get("ReplyToName"),
		ReplyToEmail: strings.TrimSpace(f.Get("ReplyToEmail")), Subject: f.Get("Subject"),
		PlainContent: f.Get("PlainContent"), HTMLContent: f.Get("HTMLContent"),
		HTMLContentWithIguana: f.Get("HTMLContentWithIguana"),
		ScheduleType:          "Not Scheduled", SendDate: zeroDate, SendTime: "00:00:00", SendTimeZone: systemTimeZone}
	if version == 1 {
		lists, okLists := campaignFormIDs(f, "TargetListIDs")
		segments, okSegments := campaignFormIDs(f, "TargetSegmentIDs")
		switch {
		case !okLists:
			return nil, invalidValue("TargetListIDs")
		case !okSegments:
			return nil, invalidValue("TargetSegmentIDs")
		case len(lists) == 0 && len(segments) == 0:
			return nil, &apiError{code: 138, message: "At least TargetListIDs or TargetSegmentIDs (or both) must be sent",
				fields: []string{"TargetListIDs", "TargetSegmentIDs"}}
		}
		if apiErr := c.st.checkTargets(lists, segments); apiErr != nil {
			return nil, apiErr
		}
		camp.Lists, camp.Segments = lists, segments
		camp.GoogleAnalyticsDomains = campaignFormArray(f, "GoogleAnalyticsDomainsToTrack")
		camp.GoogleAnalyticsEnabled = len(camp.GoogleAnalyticsDomains) > 0
	} else {
		if len(campaignFormArray(f, "Recipients")) == 0 {
			return nil, &apiError{code: 138, message: "At least TargetListIDs or TargetSegmentIDs (or both) must be sent",
				fields: []string{"Recipients"}}
		}
		lists, segments, apiErr := c.st.recipientsParam(f)
		if apiErr != nil {
			return nil, apiErr
		}
		camp.Lists, camp.Segments = lists, segments
		for name, dst := range map[string]*bool{"Iguana": &camp.Iguana, "GoogleAnalyticsTracking": &camp.GoogleAnalyticsEnabled,
			"ECommerceTracking": &camp.ECommerceTracking} {
			v, valid := campaignFormBool(f, name)
			if !valid {
				return nil, invalidValue(name)
			}
			*dst = v
		}
	}
	customers, valid := campaignFormIDs(f, "CustomerIDs")
	if !valid {
		return nil, &apiError{code: 141, message: "Invalid customer ID", fields: []string{"CustomerIDs"}}
	}
	camp.CustomerIDs = customers
	if forbiddenContent.MatchString(camp.HTMLContent) {
		return nil, &apiError{code: 145, message: "HTML content contains script, flash or java", fields: []string{"HTMLContent"}}
	}
	if apiErr := checkUnsubscribeLink(camp.HTMLContent, camp.PlainContent); apiErr != nil {
		return nil, apiErr
	}
	cs := &c.st.campaigns
	if cs.byID == nil {
		cs.byID = map[int]*campaign{}
	}
	cs.nextID++
	camp.ID = cs.nextID
	cs.byID[camp.ID] = camp
	return object{{"CampaignID", camp.ID}}, nil
}

func campaignGet(c *call) (object, *apiError) {
	camp, apiErr := c.findCampaign()
	if apiErr != nil {
		return nil, apiErr
	}
	return object{{"Campaign", c.st.campaignObject(camp)}}, nil
}

// campaignObject writes the Campaign record; its counts come from the recorded activity.
func (st *state) campaignObject(camp *campaign) object {
	n := st.campaignCounts(camp)
	ga := "Disabled"
	if camp.GoogleAnalyticsEnabled {
		ga = "Enabled"
	}
	itoa := strconv.Itoa
	return object{
		{"CampaignID", itoa(camp.ID)}, {"CampaignStatus", camp.Status}, {"CampaignName", camp.Name},
		{"FromName", camp.FromName}, {"FromEmail", camp.FromEmail}, {"ReplyToName", camp.ReplyToName},
		{"ReplyToEmail", camp.ReplyToEmail}, {"FetchURL", ""}, {"Subject", camp.Subject},
		{"PlainContent", camp.PlainContent}, {"HTMLContent", camp.HTMLContent},
		{"ScheduleType", camp.ScheduleType}, {"SendDate", camp.SendDate}, {"SendTime", camp.SendTime},
		{"SendTimeZone", camp.SendTimeZone},
		{"TotalRecipients", itoa(len(camp.recipients))}, {"TotalSent", itoa(len(camp.recipients))}, {"TotalFailed", "0"},
		{"TotalOpens", itoa(n.total[EventOpen])}, {"UniqueOpens", itoa(n.unique[EventOpen])},
		{"TotalClicks", itoa(n.total[EventClick])}, {"UniqueClicks", itoa(n.unique[EventClick])},
		{"TotalForwards", itoa(n.total[EventForward])}, {"UniqueForwards", itoa(n.unique[EventForward])},
		{"TotalViewsOnBrowser", itoa(n.total[EventBrowserView])}, {"UniqueViewsOnBrowser", itoa(n.unique[EventBrowserView])},
		{"TotalUnsubscriptions", itoa(n.total[EventUnsubscription])},
		{"TotalHardBounces", itoa(n.unique[EventHardBounce])}, {"TotalSoftBounces", itoa(n.unique[EventSoftBounce])},
		{"GoogleAnalyticsEnable", ga}, {"GoogleAnalyticsDomains", strings.Join(camp.GoogleAnalyticsDomains, ",")},
		{"PublicTinyContentLink", fmt.Sprintf("https://sendloop.test/c/%d", camp.ID)},
		// Members the real service sends beyond the specification's table: the target lists
		// (IDs as strings), the end of the delivery, and false for a missing thumbnail.
		{"Lists", idStrings(camp.Lists)}, {"SendProcessFinishedOn", finishedOn(camp.deliveredAt)},
		{"ThumbnailURL", false},
	}
}

func idStrings(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

func finishedOn(delivered time.Time) string {
	if delivered.IsZero() {
		return zeroDateTime
	}
	return delivered.UTC().Format(dateTimeLayout)
}

// campaignUpdate changes the parameters present, all or nothing.
func campaignUpdate(c *call) (object, *apiError) {
	camp, apiErr := c.findCampaign()
	if apiErr != nil {
		return nil, apiErr
	}
	f := c.form
	for _, name := range []string{"CampaignName", "FromName", "FromEmail", "ReplyToName", "ReplyToEmail", "Subject"} {
		if v, ok := f[name]; ok && strings.TrimSpace(v[0]) == "" {
			return nil, invalidValue(name)
		}
	}
	if apiErr := checkNames(f); apiErr != nil {
		return nil, apiErr
	}
	if apiErr := checkAddresses(f); apiErr != nil {
		return nil, apiErr
	}
	lists, okLists := campaignFormIDs(f, "TargetListIDs")
	segments, okSegments := campaignFormIDs(f, "TargetSegmentIDs")
	switch {
	case !okLists:
		return nil, invalidValue("TargetListIDs")
	case !okSegments:
		return nil, invalidValue("TargetSegmentIDs")
	}
	if apiErr := c.st.checkTargets(lists, segments); apiErr != nil {
		return nil, apiErr
	}
	customers, valid := campaignFormIDs(f, "CustomerIDs")
	if !valid {
		return nil, &apiError{code: 141, message: "Invalid customer ID", fields: []string{"CustomerIDs"}}
	}
	for name, dst := range map[string]*string{"CampaignName": &camp.Name, "FromName": &camp.FromName,
		"FromEmail": &camp.FromEmail, "ReplyToName": &camp.ReplyToName, "ReplyToEmail": &camp.ReplyToEmail,
		"Subject": &camp.Subject} {
		if v, ok := f[name]; ok {
			*dst = strings.TrimSpace(v[0])
		}
	}
	if len(lists) > 0 {
		camp.Lists = lists
	}
	if len(segments) > 0 {
		camp.Segments = segments
	}
	if len(customers) > 0 {
		camp.CustomerIDs = customers
	}
	return nil, nil
}

// campaignDelete removes a campaign. Its recorded activity stays: exports still list it.
func campaignDelete(c *call) (object, *apiError) {
	camp, apiErr := c.findCampaign()
	if apiErr != nil {
		return nil, apiErr
	}
	delete(c.st.campaigns.byID, camp.ID)
	return nil, nil
}

// CampaignStatus returns a campaign's status ("Draft", or "Sent" after SimulateSend), and
// whether the campaign exists.
func (s *Server) CampaignStatus(campaignID int) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	camp := s.state.campaigns.byID[campaignID]
	if camp == nil {
		return "", false
	}
	return camp.Status, true
}

// CampaignCount returns how many campaigns the account holds.
func (s *Server) CampaignCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state.campaigns.byID)
}

package sendlooptest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// list is a subscriber list with its settings, custom fields, segments and subscribers.
type list struct {
	ID          int
	Name        string
	OptInMode   string // "Single" or "Double"
	OptOutScope string
	CreatedOn   string
	Settings    map[string]string // the list settings, by wire name
	Fields      []*customField
	Segments    map[int]*segment
	members     []*subscriber          // by ascending SubscriberID: browse pages are stable
	changes     uint64                 // bumped when a member is added or removed or its fields change
	byEmail     map[string]*subscriber // by lower-cased address
}

// customField is a list's custom field; the specification shows no command to make one, so
// tests define them with Server.DefineCustomField.
type customField struct {
	ID                                                     int
	FieldName, FieldType, FieldDataType, FieldDefaultValue string
	FieldOptions                                           string
}

// segment selects the subscribers whose custom field holds a value.
type segment struct {
	ID      int
	Name    string
	FieldID int
	Value   string

	// cursor is where the last browse page of the segment ended, so that the next page
	// resumes there instead of walking the list from its start (which made reading a whole
	// segment quadratic); it holds only while the list's members are unchanged.
	cursor segmentCursor
}

// segmentCursor is the position in list.members after a segment's page.
type segmentCursor struct {
	changes uint64 // list.changes when it was taken
	page    int    // the page it starts
	pos     int    // the index in list.members to resume at
}

// listSettingNames are the list settings, in the order the service lists them.
var listSettingNames = []string{
	"SubscriptionOptInFromName", "SubscriptionOptInFromEmail", "SubscriptionOptInSubject",
	"SubscriptionOptInPlainBody", "SubscriptionFinalAction", "SubscriptionFinalFromName",
	"SubscriptionFinalFromEmail", "SubscriptionFinalSubject", "SubscriptionFinalHTMLBody",
	"SubscriptionFinalPlainBody", "WebServiceSubscriptionURL", "WebServiceUnsubscriptionURL",
}

// lists holds the account's lists.
type lists struct {
	byID        map[int]*list
	nextID      int
	nextFieldID int
	nextSegID   int
}

func (ls *lists) get(id int) *list {
	return ls.byID[id]
}

// sorted returns the lists by ascending ID.
func (ls *lists) sorted() []*list {
	out := make([]*list, 0, len(ls.byID))
	for _, l := range ls.byID {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *list) int { return a.ID - b.ID })
	return out
}

// listsHandlers are the handlers of lists commands; dispatch pairs them with the command table.
var listsHandlers = map[string]handler{
	cmdtable.ListCreate:         listCreate,
	cmdtable.ListUpdate:         listUpdate,
	cmdtable.ListGet:            listGet,
	cmdtable.ListGetList:        listGetList,
	cmdtable.ListSettingsGet:    listSettingsGet,
	cmdtable.ListSettingsUpdate: listSettingsUpdate,
}

func optInMode(v string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "single":
		return "Single", true
	case "double":
		return "Double", true
	}
	return "", false
}

// listCreate makes a list; as a one-shot write each execution creates another one.
func listCreate(c *call) (object, *apiError) {
	mode, ok := optInMode(c.form.Get("OptInMode"))
	if !ok {
		return nil, invalidValue("OptInMode")
	}
	l := c.st.newList(c.form.Get("Name"), mode, c.now)
	return object{{"ListID", l.ID}}, nil
}

func (st *state) newList(name, mode string, now time.Time) *list {
	ls := &st.lists
	if ls.byID == nil {
		ls.byID = map[int]*list{}
	}
	ls.nextID++
	l := &list{ID: ls.nextID, Name: name, OptInMode: mode, OptOutScope: "This list",
		CreatedOn: now.Format(dateTimeLayout), Settings: defaultSettings(name, st.account),
		Segments: map[int]*segment{}, byEmail: map[string]*subscriber{}}
	ls.byID[l.ID] = l
	return l
}

func defaultSettings(name string, a account) map[string]string {
	return map[string]string{
		"SubscriptionOptInFromName":   a.FirstName + " " + a.LastName,
		"SubscriptionOptInFromEmail":  a.Email,
		"SubscriptionOptInSubject":    "Please confirm your subscription to " + name,
		"SubscriptionOptInPlainBody":  "Please confirm your subscription by visiting %Link:Confirm%",
		"SubscriptionFinalAction":     "Nothing",
		"SubscriptionFinalFromName":   a.FirstName + " " + a.LastName,
		"SubscriptionFinalFromEmail":  a.Email,
		"SubscriptionFinalSubject":    "Welcome to " + name,
		"SubscriptionFinalHTMLBody":   "<p>Welcome!</p>",
		"SubscriptionFinalPlainBody":  "Welcome!",
		"WebServiceSubscriptionURL":   "",
		"WebServiceUnsubscriptionURL": "",
	}
}

// findList reads the ListID parameter: 105 when absent is handled by register, 118 when no
// such list exists.
func (c *call) findList() (*list, *apiError) {
	id, err := strconv.Atoi(strings.TrimSpace(c.form.Get("ListID")))
	if err != nil {
		return nil, &apiError{code: 118, message: "Invalid List ID; list not found", fields: []string{"ListID"}}
	}
	l := c.st.lists.get(id)
	if l == nil {
		return nil, &apiError{code: 118, message: "Invalid List ID; list not found", fields: []string{"ListID"}}
	}
	return l, nil
}

func listUpdate(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	mode := l.OptInMode
	if v, ok := c.form["OptInMode"]; ok {
		var valid bool
		if mode, valid = optInMode(v[0]); !valid {
			return nil, invalidValue("OptInMode")
		}
	}
	if v, ok := c.form["Name"]; ok {
		if strings.TrimSpace(v[0]) == "" {
			return nil, invalidValue("Name")
		}
		l.Name = v[0]
	}
	l.OptInMode = mode
	return nil, nil
}

func (l *list) object() object {
	return object{{"ListID", strconv.Itoa(l.ID)}, {"Name", l.Name}, {"OptInMode", l.OptInMode},
		{"OptOutScope", l.OptOutScope}, {"CreatedOn", l.CreatedOn}}
}

func listGet(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	out := object{{"List", l.object()}}
	if c.form.Get("GetCustomFields") == "1" {
		fields := make([]object, 0, len(l.Fields))
		for _, f := range l.Fields {
			fields = append(fields, object{{"CustomFieldID", strconv.Itoa(f.ID)}, {"FieldName", f.FieldName},
				{"FieldType", f.FieldType}, {"FieldDataType", f.FieldDataType},
				{"FieldDefaultValue", f.FieldDefaultValue}, {"FieldOptions", f.FieldOptions}})
		}
		out = append(out, member{"CustomFields", fields})
	}
	return out, nil
}

// activityDays is how many days of SubscriptionActivity list.getlist reports.
const activityDays = 7

func listGetList(c *call) (object, *apiError) {
	all := c.st.lists.sorted()
	out := make([]object, 0, len(all))
	for _, l := range all {
		counts := map[string]int{}
		active := 0
		for _, s := range l.members {
			if s.Status == statusSubscribed {
				active++
			}
			counts[s.SubscriptionDate]++
		}
		activity := object{}
		for d := activityDays - 1; d >= 0; d-- {
			day := c.now.AddDate(0, 0, -d).Format(dateLayout)
			if n := counts[day]; n > 0 {
				activity = append(activity, member{day, n})
			}
		}
		out = append(out, append(l.object(), member{"SubscriptionActivity", activity},
			member{"ActiveSubscribers", strconv.Itoa(active)}))
	}
	return object{{"Lists", out}}, nil
}

func listSettingsGet(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	settings := make(object, 0, len(listSettingNames))
	for _, name := range listSettingNames {
		settings = append(settings, member{name, l.Settings[name]})
	}
	return object{{"ListSettings", settings}}, nil
}

func listSettingsUpdate(c *call) (object, *apiError) {
	l, apiErr := c.findList()
	if apiErr != nil {
		return nil, apiErr
	}
	changes := map[string]string{}
	for _, name := range listSettingNames {
		if v, ok := c.form[name]; ok {
			changes[name] = v[0]
		}
	}
	if action, ok := changes["SubscriptionFinalAction"]; ok && action != "Nothing" && action != "Send Email" {
		return nil, invalidValue("SubscriptionFinalAction")
	}
	for _, name := range []string{"SubscriptionOptInFromEmail", "SubscriptionFinalFromEmail"} {
		if v, ok := changes[name]; ok && v != "" && !validEmail(v) {
			return nil, &apiError{code: 111, message: "Invalid email address format", fields: []string{name}}
		}
	}
	for _, name := range []string{"WebServiceSubscriptionURL", "WebServiceUnsubscriptionURL"} {
		if v, ok := changes[name]; ok && v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			return nil, invalidValue(name)
		}
	}
	for name, v := range changes {
		l.Settings[name] = v
	}
	return nil, nil
}

func invalidValue(field string) *apiError {
	return &apiError{code: 116, message: "Invalid parameter value provided", fields: []string{field}}
}

// CustomField describes a custom field for DefineCustomField.
type CustomField struct {
	Name         string // the field's name, unique within its list
	Type         string // e.g. "Single line"; default "Single line"
	DataType     string // e.g. "Text", "Number", "Date"; default "Text"
	DefaultValue string // what a subscriber without a value shows; "" for none
	Options      string // for choice fields, as the service writes them
}

// DefineCustomField adds a custom field to a list and returns its ID. The specification
// shows no command for it, so tests and examples define fields here.
func (s *Server) DefineCustomField(listID int, f CustomField) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return 0, fmt.Errorf("sendlooptest: no list %d", listID)
	}
	if f.Type == "" {
		f.Type = "Single line"
	}
	if f.DataType == "" {
		f.DataType = "Text"
	}
	s.state.lists.nextFieldID++
	cf := &customField{ID: s.state.lists.nextFieldID, FieldName: f.Name, FieldType: f.Type,
		FieldDataType: f.DataType, FieldDefaultValue: f.DefaultValue, FieldOptions: f.Options}
	l.Fields = append(l.Fields, cf)
	return cf.ID, nil
}

// DefineSegment adds a segment to a list, selecting the subscribers whose custom field
// fieldID equals value, and returns its ID.
func (s *Server) DefineSegment(listID int, name string, fieldID int, value string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return 0, fmt.Errorf("sendlooptest: no list %d", listID)
	}
	s.state.lists.nextSegID++
	seg := &segment{ID: s.state.lists.nextSegID, Name: name, FieldID: fieldID, Value: value}
	l.Segments[seg.ID] = seg
	return seg.ID, nil
}

// ListCount returns how many lists the account holds.
func (s *Server) ListCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state.lists.byID)
}

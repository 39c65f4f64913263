package sendlooptest

import "strings"

// list is a subscriber list.
type list struct {
	ID        int
	Name      string
	OptInMode string // "Single" or "Double"
	CreatedOn string
}

// lists holds the account's lists.
type lists struct {
	byID   map[int]*list
	nextID int
}

func init() {
	register("list.create", []string{"Name", "OptInMode"}, listCreate)
}

// listCreate makes a list; as a one-shot write each execution creates another one.
func listCreate(c *call) (object, *apiError) {
	mode := c.form.Get("OptInMode")
	if !strings.EqualFold(mode, "Single") && !strings.EqualFold(mode, "Double") {
		return nil, &apiError{code: 116, message: "Invalid parameter value provided", fields: []string{"OptInMode"}}
	}
	ls := &c.st.lists
	if ls.byID == nil {
		ls.byID = map[int]*list{}
	}
	ls.nextID++
	l := &list{ID: ls.nextID, Name: c.form.Get("Name"), OptInMode: strings.ToUpper(mode[:1]) + strings.ToLower(mode[1:]),
		CreatedOn: c.now.Format(dateTimeLayout)}
	ls.byID[l.ID] = l
	return object{{"ListID", l.ID}}, nil
}

// ListCount returns how many lists the account holds.
func (s *Server) ListCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state.lists.byID)
}

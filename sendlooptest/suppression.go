package sendlooptest

import (
	"fmt"
	"strconv"
	"strings"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// suppression is an address that may not be subscribed, to one list or (ListID 0) to any.
type suppression struct {
	ID     int
	Type   string
	Email  string
	ListID int
}

type suppressions struct {
	entries []*suppression
	nextID  int
}

func (st *state) suppressed(listID int, email string) bool {
	for _, e := range st.suppressions.entries {
		if (e.ListID == 0 || e.ListID == listID) && strings.EqualFold(e.Email, email) {
			return true
		}
	}
	return false
}

// suppress adds an entry, or returns the existing one for the same address and list, so
// that repeating the command changes nothing.
func (st *state) suppress(listID int, email, kind string) *suppression {
	for _, e := range st.suppressions.entries {
		if e.ListID == listID && strings.EqualFold(e.Email, email) {
			return e
		}
	}
	st.suppressions.nextID++
	e := &suppression{ID: st.suppressions.nextID, Type: kind, Email: email, ListID: listID}
	st.suppressions.entries = append(st.suppressions.entries, e)
	return e
}

// suppressionHandlers are the handlers of suppression commands; dispatch pairs them with the command table.
var suppressionHandlers = map[string]handler{
	cmdtable.SuppressionListGetList: suppressionGetList,
	cmdtable.SuppressionListGet:     suppressionGet,
	cmdtable.SuppressionListAdd:     suppressionAdd,
}

// suppressionListID reads ListID, where 0 means global.
func (c *call) suppressionListID() (int, *apiError) {
	if strings.TrimSpace(c.form.Get("ListID")) == "0" {
		return 0, nil
	}
	l, apiErr := c.findList()
	if apiErr != nil {
		return 0, apiErr
	}
	return l.ID, nil
}

func suppressionGetList(c *call) (object, *apiError) {
	listID, apiErr := c.suppressionListID()
	if apiErr != nil {
		return nil, apiErr
	}
	out := []object{}
	for _, e := range c.st.suppressions.entries {
		if e.ListID == listID {
			out = append(out, object{{"SuppressionID", strconv.Itoa(e.ID)}, {"Type", e.Type}, {"EmailAddress", e.Email}})
		}
	}
	return object{{"SuppressionList", out}}, nil
}

func suppressionGet(c *call) (object, *apiError) {
	email := strings.TrimSpace(c.form.Get("EmailAddress"))
	out := []object{}
	for _, e := range c.st.suppressions.entries {
		if strings.EqualFold(e.Email, email) {
			out = append(out, object{{"SuppressionID", strconv.Itoa(e.ID)}, {"Type", e.Type}, {"ListID", strconv.Itoa(e.ListID)}})
		}
	}
	return object{{"SuppressionItem", out}}, nil
}

func suppressionAdd(c *call) (object, *apiError) {
	listID, apiErr := c.suppressionListID()
	if apiErr != nil {
		return nil, apiErr
	}
	email := strings.TrimSpace(c.form.Get("EmailAddress"))
	if !validEmail(email) {
		return nil, failEmailFormat.v3("EmailAddress")
	}
	e := c.st.suppress(listID, email, "Manual")
	return object{{"NewSuppressionID", e.ID}}, nil
}

// Suppress adds an address to the suppression list of a list (0: global) with the given
// type, e.g. 'FBL Report', as the service does on its own for complaints.
func (s *Server) Suppress(listID int, email, kind string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if listID != 0 && s.state.lists.get(listID) == nil {
		return 0, fmt.Errorf("sendlooptest: no list %d", listID)
	}
	return s.state.suppress(listID, email, kind).ID, nil
}

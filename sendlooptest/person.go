package sendlooptest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// person is a tracked person profile. Extra attributes keep the order they were first
// tracked in (by name within one call).
type person struct {
	UserID, Email, EntryDate, LastSeenDate, IP, City, Country string
	Sessions                                                  int
	extraKeys                                                 []string
	extra                                                     map[string]string
}

// people holds the tracked persons by user ID.
type people struct {
	byUserID map[string]*person
}

// personKeys are the keys of a Person record; extra attributes named so are not echoed.
var personKeys = []string{"User ID", "Email Address", "Entry Date", "Last Seen Date", "IP Address", "City", "Country", "Sessions"}

// The person operations, as named in the request log, the counters and faults.
const (
	personTrack  = cmdtable.PersonTrack
	personGet    = cmdtable.PersonGet
	personDelete = cmdtable.PersonDelete
)

func personRoute(name, method string) route {
	return route{
		name: func(*http.Request, url.Values) string { return name },
		serve: func(s *Server, w http.ResponseWriter, r *http.Request, form url.Values, fault *Fault) {
			status, doc := s.servePerson(name, method, r, form, fault)
			if fault != nil && fault.Reset == ResetAfterExecution {
				resetConnection(w)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(appendJSON(nil, doc))
		},
	}
}

// personFailure is the answer to a refused person operation; the specification shows no
// failure body for these addresses, so the fake uses the v3 error members with Status.
func personFailure(e *apiError) (int, object) {
	fields := e.fields
	if fields == nil {
		fields = []string{}
	}
	status := http.StatusOK
	if e.status != 0 {
		status = e.status
	}
	return status, object{{"Status", "Failed"}, {"ErrorCode", e.code}, {"ErrorMessage", e.message}, {"ErrorFields", fields}}
}

// servePerson checks the method, the key, the client address, faults and required
// parameters, then runs the operation. The key is read only where the SDK sends it: the
// APIKey field of the POST's body for person.track, and the HTTP Basic user name (empty
// password) for the GETs; a key in a GET's query, where logs keep it, is refused with 104
// like a missing one. (The specification does not show how the GETs carry it.)
func (s *Server) servePerson(name, method string, r *http.Request, form url.Values, fault *Fault) (int, object) {
	if r.Method != method {
		return http.StatusMethodNotAllowed, object{{"Status", "Failed"}, {"ErrorCode", 101},
			{"ErrorMessage", "Invalid API command: use " + method}, {"ErrorFields", []string{}}}
	}
	var key string
	switch {
	case r.URL.Query().Has("APIKey"): // a key in a URL counts for nothing
	case method == http.MethodPost:
		key = form.Get("APIKey")
	default:
		if user, password, ok := r.BasicAuth(); ok && password == "" {
			key = user
		}
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case key == "" || key != s.APIKey:
		return personFailure(&apiError{code: 104, message: "Invalid API key"})
	case len(s.allowedIPs) > 0 && !slices.Contains(s.allowedIPs, ip):
		return personFailure(&apiError{code: 103, message: "IP address is not authorized to the API connection"})
	case fault != nil && fault.ErrorCode != 0:
		return personFailure(&apiError{code: fault.ErrorCode, message: "Injected error", status: fault.Status})
	}
	required := []string{"user_id"}
	if name == personTrack {
		required = append(required, "email")
	}
	var absent []string
	for _, p := range required {
		if strings.TrimSpace(form.Get(p)) == "" {
			absent = append(absent, p)
		}
	}
	if len(absent) > 0 {
		return personFailure(&apiError{code: 105, message: "Required parameter(s) missing", fields: absent})
	}
	s.countExecution(name)
	st, userID, now := s.state, strings.TrimSpace(form.Get("user_id")), s.now()
	var answer object
	var apiErr *apiError
	switch name {
	case personTrack:
		apiErr = st.trackPerson(userID, strings.TrimSpace(form.Get("email")), form["extrainfo"], ip, now)
	case personGet:
		p := st.people.byUserID[userID]
		if p == nil {
			apiErr = notFound("user_id")
		} else {
			answer = object{{"Person", p.object()}}
		}
	case personDelete:
		delete(st.people.byUserID, userID) // deleting an unknown person is done already
	}
	if apiErr != nil {
		return personFailure(apiErr)
	}
	return http.StatusOK, append(object{{"Status", "Okay"}}, answer...)
}

// trackPerson creates a person or, for a known user ID, counts a new session and updates the
// address and attributes. extrainfo, when present, must be a JSON object (116 otherwise).
func (st *state) trackPerson(userID, email string, extrainfo []string, ip string, now time.Time) *apiError {
	if !validEmail(email) {
		return &apiError{code: 111, message: "Invalid email address format", fields: []string{"email"}}
	}
	extra := map[string]any{}
	var keys []string
	if len(extrainfo) > 0 && strings.TrimSpace(extrainfo[0]) != "" {
		dec := json.NewDecoder(strings.NewReader(extrainfo[0]))
		dec.UseNumber()
		if err := dec.Decode(&extra); err != nil || dec.More() {
			return invalidValue("extrainfo")
		}
		keys = slices.Sorted(maps.Keys(extra))
	}
	if st.people.byUserID == nil {
		st.people.byUserID = map[string]*person{}
	}
	stamp := now.UTC().Format(dateTimeLayout)
	p := st.people.byUserID[userID]
	if p == nil {
		p = &person{UserID: userID, EntryDate: stamp, extra: map[string]string{}}
		st.people.byUserID[userID] = p
	}
	p.Email, p.LastSeenDate, p.IP = email, stamp, ip
	p.Sessions++
	for _, k := range keys {
		if _, seen := p.extra[k]; !seen {
			p.extraKeys = append(p.extraKeys, k)
		}
		switch v := extra[k].(type) {
		case string:
			p.extra[k] = v
		case nil:
			p.extra[k] = ""
		default:
			b, _ := json.Marshal(v)
			p.extra[k] = string(b)
		}
	}
	return nil
}

func (p *person) object() object {
	o := object{{"User ID", p.UserID}, {"Email Address", p.Email}, {"Entry Date", p.EntryDate},
		{"Last Seen Date", p.LastSeenDate}, {"IP Address", p.IP}, {"City", p.City}, {"Country", p.Country},
		{"Sessions", strconv.Itoa(p.Sessions)}}
	for _, k := range p.extraKeys {
		if !slices.Contains(personKeys, k) {
			o = append(o, member{k, p.extra[k]})
		}
	}
	return o
}

// Person returns the attributes of a tracked person by user ID, with the service's keys
// ('User ID', 'Email Address', …) and the extra attributes, and whether the person exists.
func (s *Server) Person(userID string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.state.people.byUserID[userID]
	if p == nil {
		return nil, false
	}
	out := map[string]string{}
	for _, m := range p.object() {
		out[m.Key] = fmt.Sprint(m.Value)
	}
	return out, true
}

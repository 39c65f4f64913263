package sendloop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
)

// PeopleService tracks person profiles: the engagement API's person.json operations.
//
// These are not v3 commands. Track is a POST to {base}/api/v4/person.json carrying APIKey
// in its form body like every command. Get and Delete are GETs to {base}/api/v3/person.json
// and {base}/api/v3/person.json/ with a user_id query. The specification does not say how
// the GETs carry the key; this package never puts it in a URL, where proxies, server logs
// and browser histories keep it. It sends HTTP Basic authentication instead, with the key
// as the user name and an empty password (the usual convention of key-authenticated APIs),
// so that the key travels in a header that HTTP software treats as a credential.
//
// Their answers carry Status ('Okay') instead of Success. A failure, an ErrorCode or a
// Status other than Okay, is an *APIError (with Code 0 when the service gives no code); a
// body that is not JSON is an *HTTPError. In errors and logs the operations are named
// person.track, person.get and person.delete.
type PeopleService service

// PersonTrackParams are the parameters of People.Track (the person's user ID is positional).
type PersonTrackParams struct {
	// Email is the person's address (email); required.
	Email string
	// Extra holds further attributes, e.g. "plan" or "signedup_date". The specification
	// does not show extrainfo's format: they are sent as one JSON object of strings in the
	// extrainfo form field, which is left out when Extra is empty.
	Extra map[string]string
}

// Person is a tracked person as People.Get returns it. The service's keys hold spaces
// ('User ID', 'Email Address', …); the extra attributes passed to Track come back as
// further keys and are kept in Extra.
//
//sendloop:decode
type Person struct {
	UserID       string   `wire:"User ID"`                   // 'User ID'
	EmailAddress string   `wire:"Email Address"`             // 'Email Address'
	EntryDate    DateTime `wire:"Entry Date"`                // 'Entry Date'
	LastSeenDate DateTime `wire:"Last Seen Date"`            // 'Last Seen Date'
	IPAddress    string   `wire:"IP Address,common=0.0.0.0"` // 'IP Address'
	City         string   // 'City', kept as sent
	Country      string   // 'Country', kept as sent
	Sessions     int      // 'Sessions': the person's session count, a numeric string on the wire
	// Extra holds every other key, e.g. signedup_date, name and plan. A value that is an
	// object or an array is kept as its JSON text.
	Extra map[string]string `wire:",extra=extraText"`
}

// Track creates or updates the person userID (POST {base}/api/v4/person.json). userID and Email are
// required: a blank one is refused before sending with ErrMissingParameters. Each track
// records a session of the person, so it is a one-shot write: it is sent again only where
// the request surely did not reach the service (a dial error, 429, 503); a track whose
// answer was lost fails with an error matching ErrOutcomeUnknown.
func (s *PeopleService) Track(ctx context.Context, userID string, p PersonTrackParams) error {
	const command = commands.PersonTrack
	if err := requireParams(command, []string{"user_id", userID, "email", p.Email}); err != nil {
		return err
	}
	extra, err := p.validate(command)
	if err != nil {
		return err
	}
	form := url.Values{"user_id": {userID}, "email": {p.Email}}
	if extra != "" {
		form.Set("extrainfo", extra)
	}
	return s.client.do(ctx, &apiCall{command: command, form: form}, nil)
}

// validate checks that Extra encodes, and returns it encoded ("" when empty).
func (p PersonTrackParams) validate(command string) (string, error) {
	if len(p.Extra) == 0 {
		return "", nil
	}
	extra, err := encodeExtraInfo(p.Extra)
	if err != nil {
		return "", &ValidationError{Code: ErrInvalidParameterValue, Command: command, Fields: []string{"extrainfo"}, Reason: err.Error()}
	}
	return extra, nil
}

// encodeExtraInfo writes the attributes as one JSON object with sorted keys, leaving <, >
// and & unescaped.
func encodeExtraInfo(extra map[string]string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(extra); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Get returns a tracked person (GET {base}/api/v3/person.json?user_id=…). A blank userID is
// refused before sending with ErrMissingParameters.
func (s *PeopleService) Get(ctx context.Context, userID string) (*Person, error) {
	const command = commands.PersonGet
	if err := requireParams(command, []string{"user_id", userID}); err != nil {
		return nil, err
	}
	var p *Person
	err := s.client.do(ctx, &apiCall{command: command, form: url.Values{"user_id": {userID}}}, func(key, value []byte) error {
		if string(key) == "Person" {
			p = new(Person)
			return p.UnmarshalJSON(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("sendloop: %s: the response holds no Person", command)
	}
	return p, nil
}

// Delete removes a tracked person's data (GET {base}/api/v3/person.json/?user_id=…; the
// trailing slash is what tells it from Get). A blank userID is refused before sending with
// ErrMissingParameters.
func (s *PeopleService) Delete(ctx context.Context, userID string) error {
	const command = commands.PersonDelete
	if err := requireParams(command, []string{"user_id", userID}); err != nil {
		return err
	}
	return s.client.do(ctx, &apiCall{command: command, form: url.Values{"user_id": {userID}}}, nil)
}

// basicCredential is the key as a Basic user name with an empty password.
func (c *Client) basicCredential() string {
	return base64.StdEncoding.EncodeToString([]byte(c.key() + ":"))
}

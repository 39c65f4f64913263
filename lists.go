package sendloop

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// ListsService creates, reads and configures subscriber lists (list.*).
type ListsService service

// OptInMode is how a list confirms subscriptions. Unknown values are kept as they came.
type OptInMode string

// The opt-in modes of the service.
const (
	// OptInSingle subscribes at once, with no confirmation email.
	OptInSingle OptInMode = "Single"
	// OptInDouble holds a subscription as Confirmation Pending until the address owner
	// confirms it from an email (the service recommends it).
	OptInDouble OptInMode = "Double"
)

// List is a subscriber list.
//
//sendloop:decode
type List struct {
	ListID      int       // the list's ID, which scopes every subscriber command
	Name        string    // the list's name, as the account shows it
	OptInMode   OptInMode // OptInSingle or OptInDouble; another value is kept as sent
	OptOutScope string    // e.g. "This list"; other values are kept as they came
	CreatedOn   DateTime  // when the list was created; zero for the service's unset value
	// SubscriptionActivity and ActiveSubscribers come from Lists.List only:
	// subscriptions per day over the last few days, oldest first.
	SubscriptionActivity []DailyCount `wire:",func=decodeDailyCounts"`
	ActiveSubscribers    int          // subscribed members, sent as a numeric string
	// CustomFields comes from Lists.Get with custom fields requested.
	CustomFields []CustomField `wire:",func=decodeCustomFields"`
}

// DailyCount is a count for one day.
type DailyCount struct {
	Date  Date // the day
	Count int  // how many on that day
}

// CustomField describes a list's custom field, as list.get returns it with GetCustomFields=1.
// The specification does not show this record: the keys below are read when present and
// any other key is kept in Extra.
//
//sendloop:decode
type CustomField struct {
	// CustomFieldID is the field's ID, the <id> of CustomField<id> in subscriber records
	// and import rows; also read from FieldID or ID.
	CustomFieldID     int    `wire:"CustomFieldID|FieldID|ID"`
	FieldName         string // the field's name as the account shows it
	FieldType         string // kept as sent (the specification names no values)
	FieldDataType     string // kept as sent (the specification names no values)
	FieldDefaultValue string // the value a subscriber without one shows; "" when none
	// FieldOptions is the field's options as text: a structured value is kept as its JSON.
	FieldOptions string `wire:",func=optionsText"`
	// Extra holds any other key of the record, structured values as JSON; nil when none.
	Extra map[string]string `wire:",extra=optionsText"`
}

// decodeDailyCounts reads a date → count object, oldest day first.
func decodeDailyCounts(v []byte) ([]DailyCount, error) {
	var out []DailyCount
	err := wire.ScanObject(v, func(key, value []byte) error {
		var d DailyCount
		var err error
		if d.Date.Time, err = wire.ParseDate(string(key)); err != nil || d.Date.IsZero() {
			return nil // not a day (PHP's list indexes, say): nothing to count
		}
		d.Count, err = wire.Int(value)
		out = append(out, d)
		return err
	})
	slices.SortStableFunc(out, func(a, b DailyCount) int { return a.Date.Compare(b.Date.Time) })
	return out, err
}

// optionsText keeps a scalar as its text and a structured value as its JSON, so that no
// unexpected shape is lost.
func optionsText(v []byte) (string, error) {
	if isContainer(v) {
		return string(wire.AppendValidUTF8(nil, trimLeft(v))), nil
	}
	return wire.String(v)
}

func decodeCustomFields(v []byte) ([]CustomField, error) { return recordsFrom[CustomField](v) }

// checkListID refuses a missing or impossible list ID (checkID).
func checkListID(command string, listID int) error { return checkID(command, "ListID", listID) }

// canonicalOptInMode returns mode as the specification writes it, accepting any case and
// surrounding space: an empty mode is missing (105), an unknown one invalid (116).
func canonicalOptInMode(command string, mode OptInMode) (OptInMode, error) {
	trimmed := strings.TrimSpace(string(mode))
	for _, known := range []OptInMode{OptInSingle, OptInDouble} {
		if strings.EqualFold(trimmed, string(known)) {
			return known, nil
		}
	}
	if trimmed == "" {
		return "", &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"OptInMode"},
			Reason: fmt.Sprintf("OptInMode is required: %q or %q", OptInSingle, OptInDouble)}
	}
	return "", invalid(command, ErrInvalidParameterValue, "OptInMode",
		fmt.Sprintf("OptInMode must be %q or %q, not %q", OptInSingle, OptInDouble, mode))
}

func listForm(listID int) url.Values { return url.Values{"ListID": {strconv.Itoa(listID)}} }

// ListCreateParams are the parameters of Lists.Create.
type ListCreateParams struct {
	// Name is the list's name (required).
	Name string
	// OptInMode is OptInSingle or OptInDouble (required), in any case.
	OptInMode OptInMode
}

// validate refuses what the service would, normalising the mode's spelling.
func (p *ListCreateParams) validate(command string) error {
	if strings.TrimSpace(p.Name) == "" {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"Name"}, Reason: "the list needs a name"}
	}
	mode, err := canonicalOptInMode(command, p.OptInMode)
	p.OptInMode = mode
	return err
}

// Create makes a list and returns its ID (list.create). The mode is required
// (ErrMissingParameters when empty) and accepted in any case ("double"), sent as the
// specification writes it. Being a one-shot write, it is retried only when the request
// surely did not reach the service, so that a retry never makes a second list.
func (s *ListsService) Create(ctx context.Context, p ListCreateParams) (int, error) {
	const command = commands.ListCreate
	if err := p.validate(command); err != nil {
		return 0, err
	}
	form := url.Values{"Name": {p.Name}, "OptInMode": {string(p.OptInMode)}}
	return s.client.doForID(ctx, &apiCall{command: command, form: form}, "ListID")
}

// ListUpdateParams holds the changes for Lists.Update; empty fields are left unchanged.
type ListUpdateParams struct {
	Name      string    `url:"Name,omitempty"`      // the new name; "" keeps the current one
	OptInMode OptInMode `url:"OptInMode,omitempty"` // the new mode; "" keeps the current one
}

// validate requires something to change and a known opt-in mode, which it writes as the
// specification does.
func (u *ListUpdateParams) validate(command string) error {
	if *u == (ListUpdateParams{}) {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"Name", "OptInMode"}, Reason: "nothing to update"}
	}
	if u.OptInMode != "" {
		mode, err := canonicalOptInMode(command, u.OptInMode)
		if err != nil {
			return err
		}
		u.OptInMode = mode
	}
	return nil
}

// Update renames a list or changes its opt-in mode (list.update).
//
// Nothing to change: an update with no field set is refused before sending with
// ErrMissingParameters, the rule of every Update method of this package.
func (s *ListsService) Update(ctx context.Context, listID int, u ListUpdateParams) error {
	const command = commands.ListUpdate
	if err := checkListID(command, listID); err != nil {
		return err
	}
	if err := u.validate(command); err != nil {
		return err
	}
	form, err := wire.Values(u)
	if err != nil {
		return err
	}
	form.Set("ListID", strconv.Itoa(listID))
	return s.client.do(ctx, &apiCall{command: command, form: form}, nil)
}

// ListGetParams are the parameters of Lists.Get.
type ListGetParams struct {
	// CustomFields asks for the list's custom fields too, which the service sends beside the
	// list. GetCustomFields is required by the service: it is always sent, 1 or 0.
	CustomFields bool
}

// Get returns a list (list.get), with its custom fields when p.CustomFields is set.
func (s *ListsService) Get(ctx context.Context, listID int, p ListGetParams) (*List, error) {
	const command = commands.ListGet
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	form := listForm(listID)
	form.Set("GetCustomFields", "0")
	if p.CustomFields {
		form.Set("GetCustomFields", "1")
	}
	l := new(List)
	var fields []CustomField
	err := s.client.do(ctx, &apiCall{command: command, form: form}, func(key, value []byte) (err error) {
		switch string(key) {
		case "List":
			err = l.UnmarshalJSON(value)
		case "CustomFields":
			fields, err = decodeCustomFields(value)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if fields != nil {
		l.CustomFields = fields
	}
	return l, nil
}

// List returns every list of the account, with its recent subscription activity and its
// count of active subscribers (list.getlist).
func (s *ListsService) List(ctx context.Context) ([]List, error) {
	var lists []List
	err := s.client.doWire(ctx, &apiCall{command: commands.ListGetList}, member("Lists", func(d *wire.Decoder) (err error) {
		lists, err = decodeRecords[List](d)
		return err
	}))
	if err != nil {
		return nil, err
	}
	return lists, nil
}

// FinalAction is what a list does once a subscription is confirmed. Unknown values are kept.
type FinalAction string

// The final actions of the service.
const (
	FinalActionNothing   FinalAction = "Nothing"
	FinalActionSendEmail FinalAction = "Send Email"
)

// ListSettings are a list's opt-in, welcome and webhook settings.
//
//sendloop:decode
type ListSettings struct {
	SubscriptionOptInFromName   string      // sender name of the opt-in confirmation email
	SubscriptionOptInFromEmail  string      // sender address of the opt-in confirmation email
	SubscriptionOptInSubject    string      // subject of the opt-in confirmation email
	SubscriptionOptInPlainBody  string      // plain-text body of the opt-in confirmation email
	SubscriptionFinalAction     FinalAction // what follows a confirmed subscription
	SubscriptionFinalFromName   string      // sender name of the welcome email
	SubscriptionFinalFromEmail  string      // sender address of the welcome email
	SubscriptionFinalSubject    string      // subject of the welcome email
	SubscriptionFinalHTMLBody   string      // HTML body of the welcome email
	SubscriptionFinalPlainBody  string      // plain-text body of the welcome email
	WebServiceSubscriptionURL   string      // posted once a subscription is confirmed
	WebServiceUnsubscriptionURL string      // posted once an unsubscription is processed
}

// Settings returns a list's settings (list.settings.get).
func (s *ListsService) Settings(ctx context.Context, listID int) (*ListSettings, error) {
	const command = commands.ListSettingsGet
	if err := checkListID(command, listID); err != nil {
		return nil, err
	}
	out := new(ListSettings)
	err := s.client.do(ctx, &apiCall{command: command, form: listForm(listID)}, func(key, value []byte) error {
		if string(key) == "ListSettings" {
			return out.UnmarshalJSON(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListSettingsUpdateParams holds the settings to change: nil fields are left as they are, and a
// pointer to "" clears a setting (a webhook URL, say). String makes the pointers.
type ListSettingsUpdateParams struct {
	SubscriptionOptInFromName   *string      `url:"SubscriptionOptInFromName,omitempty"`   // sender name of the opt-in confirmation email
	SubscriptionOptInFromEmail  *string      `url:"SubscriptionOptInFromEmail,omitempty"`  // sender address of the opt-in confirmation email
	SubscriptionOptInSubject    *string      `url:"SubscriptionOptInSubject,omitempty"`    // subject of the opt-in confirmation email
	SubscriptionOptInPlainBody  *string      `url:"SubscriptionOptInPlainBody,omitempty"`  // plain-text body of the opt-in confirmation email
	SubscriptionFinalAction     *FinalAction `url:"SubscriptionFinalAction,omitempty"`     // what follows a confirmed subscription
	SubscriptionFinalFromName   *string      `url:"SubscriptionFinalFromName,omitempty"`   // sender name of the welcome email
	SubscriptionFinalFromEmail  *string      `url:"SubscriptionFinalFromEmail,omitempty"`  // sender address of the welcome email
	SubscriptionFinalSubject    *string      `url:"SubscriptionFinalSubject,omitempty"`    // subject of the welcome email
	SubscriptionFinalHTMLBody   *string      `url:"SubscriptionFinalHTMLBody,omitempty"`   // HTML body of the welcome email
	SubscriptionFinalPlainBody  *string      `url:"SubscriptionFinalPlainBody,omitempty"`  // plain-text body of the welcome email
	WebServiceSubscriptionURL   *string      `url:"WebServiceSubscriptionURL,omitempty"`   // posted once a subscription is confirmed
	WebServiceUnsubscriptionURL *string      `url:"WebServiceUnsubscriptionURL,omitempty"` // posted once an unsubscription is processed
}

// String returns a pointer to v, for the optional fields of update parameters.
func String(v string) *string { return &v }

// validate requires a setting to change, a known final action, http(s) webhook URLs and well-formed addresses.
func (u ListSettingsUpdateParams) validate(command string) error {
	if u == (ListSettingsUpdateParams{}) {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Reason: "no setting to update"}
	}
	if a := u.SubscriptionFinalAction; a != nil && *a != FinalActionNothing && *a != FinalActionSendEmail {
		return invalid(command, ErrInvalidParameterValue, "SubscriptionFinalAction",
			fmt.Sprintf("SubscriptionFinalAction must be %q or %q", FinalActionNothing, FinalActionSendEmail))
	}
	type setting struct {
		name  string
		value *string
	}
	for _, f := range []setting{{"SubscriptionOptInFromEmail", u.SubscriptionOptInFromEmail},
		{"SubscriptionFinalFromEmail", u.SubscriptionFinalFromEmail}} {
		if f.value != nil && *f.value != "" {
			if err := checkEmail(command, f.name, *f.value); err != nil {
				return err
			}
		}
	}
	for _, f := range []setting{{"WebServiceSubscriptionURL", u.WebServiceSubscriptionURL},
		{"WebServiceUnsubscriptionURL", u.WebServiceUnsubscriptionURL}} {
		if f.value == nil || *f.value == "" {
			continue
		}
		if parsed, err := url.Parse(*f.value); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return invalid(command, ErrInvalidParameterValue, f.name, "a webhook URL must be an absolute http(s) URL")
		}
	}
	return nil
}

// UpdateSettings changes a list's settings (list.settings.update). It refuses, before
// sending, a SubscriptionFinalAction other than "Nothing" or "Send Email" and a webhook URL
// that is not http(s).
//
// Nothing to change: an update with no field set is refused before sending with
// ErrMissingParameters, the rule of every Update method of this package.
func (s *ListsService) UpdateSettings(ctx context.Context, listID int, u ListSettingsUpdateParams) error {
	const command = commands.ListSettingsUpdate
	if err := checkListID(command, listID); err != nil {
		return err
	}
	if err := u.validate(command); err != nil {
		return err
	}
	form, err := wire.Values(u)
	if err != nil {
		return err
	}
	form.Set("ListID", strconv.Itoa(listID))
	return s.client.do(ctx, &apiCall{command: command, form: form}, nil)
}

package sendloop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/check"
	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// CampaignsService creates, reads, updates and deletes email campaigns (campaign.*).
type CampaignsService service

// CampaignStatus is a campaign's state, e.g. "Draft". The specification shows only Draft and
// no transitions; values the service sends that are not among the constants are kept as
// they came.
type CampaignStatus string

// Campaign states.
const (
	// CampaignDraft is the status of a new campaign.
	CampaignDraft CampaignStatus = "Draft"
	// CampaignSent is the status of a delivered campaign. The specification does not show it;
	// it is the status sendlooptest gives a campaign once SimulateSend has delivered it.
	CampaignSent CampaignStatus = "Sent"
)

// TimeOfDay is a wall-clock time of day as the service writes it, 'HH:MM:SS'. The service's
// unset time, '00:00:00', is the zero TimeOfDay.
type TimeOfDay struct {
	Hour, Minute, Second int // 0–23, 0–59 and 0–59
}

// IsZero reports whether t is the unset time, 00:00:00.
func (t TimeOfDay) IsZero() bool { return t == TimeOfDay{} }

// String returns the wire form, 'HH:MM:SS'.
func (t TimeOfDay) String() string {
	return fmt.Sprintf("%02d:%02d:%02d", t.Hour, t.Minute, t.Second)
}

// MarshalText writes the wire form.
func (t TimeOfDay) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads 'HH:MM:SS' or 'HH:MM'; "" is the zero TimeOfDay.
func (t *TimeOfDay) UnmarshalText(text []byte) error {
	v, err := parseTimeOfDay(string(text))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// UnmarshalJSON accepts 'HH:MM:SS', 'HH:MM', "" and null. Hand-written: a scalar with a
// format of its own, not a record.
func (t *TimeOfDay) UnmarshalJSON(data []byte) error {
	s, err := wire.String(data)
	if err != nil {
		return err
	}
	return t.UnmarshalText([]byte(s))
}

func parseTimeOfDay(s string) (TimeOfDay, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return TimeOfDay{}, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 2 && len(parts) != 3 {
		return TimeOfDay{}, fmt.Errorf("not a time of day: %q", s)
	}
	var n [3]int
	limits := [3]int{23, 59, 59}
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || len(p) != 2 || v < 0 || v > limits[i] {
			return TimeOfDay{}, fmt.Errorf("not a time of day: %q", s)
		}
		n[i] = v
	}
	return TimeOfDay{Hour: n[0], Minute: n[1], Second: n[2]}, nil
}

// Campaign is an email campaign as the service returns it.
//
//sendloop:decode
type Campaign struct {
	CampaignID     int            // the campaign's ID, a numeric string on the wire
	CampaignStatus CampaignStatus // e.g. CampaignDraft; other values are kept as they come
	CampaignName   string         // the campaign's name (Name in CreateV2's shape)
	FromName       string         // the sender's name
	FromEmail      string         // the sender's address
	ReplyToName    string         // the name replies go to
	ReplyToEmail   string         // the address replies go to
	// FetchURL is kept as the service sends it: the specification gives no meaning, and no
	// parameter of Create or Update sets it.
	FetchURL     string
	Subject      string // the subject line
	PlainContent string // the plain-text body, "" when the campaign has none
	HTMLContent  string // the HTML body, "" when the campaign has none
	// ScheduleType is e.g. "Not Scheduled"; other values are kept as they come.
	ScheduleType string
	// SendDate is the day the campaign is or was sent, a wall clock in SendTimeZone; the
	// service's unset '0000-00-00' is the zero Date.
	SendDate Date
	// SendTime is the time of day of SendDate, 'HH:MM:SS' on the wire; the service's unset
	// '00:00:00' is the zero TimeOfDay.
	SendTime     TimeOfDay
	SendTimeZone string // the zone name SendDate and SendTime are read in, kept as sent

	// The counts are numeric strings on the wire; "" and null are 0. Where a TotalX has a
	// UniqueX twin, TotalX counts every event and UniqueX the distinct recipients behind them.

	TotalRecipients      int // recipients of the campaign
	TotalSent            int // messages sent
	TotalFailed          int // messages that could not be sent
	TotalOpens           int // opens
	UniqueOpens          int // recipients who opened
	TotalClicks          int // link clicks
	UniqueClicks         int // recipients who clicked a link
	TotalForwards        int // forwards
	UniqueForwards       int // recipients who forwarded
	TotalViewsOnBrowser  int // views in a web browser
	UniqueViewsOnBrowser int // recipients who viewed it in a web browser
	TotalUnsubscriptions int // unsubscriptions
	TotalHardBounces     int // hard bounces
	TotalSoftBounces     int // soft bounces

	// GoogleAnalyticsEnable is e.g. "Disabled"; other values are kept as they come.
	GoogleAnalyticsEnable string
	// GoogleAnalyticsDomains is the domains tracked with analytics, as one string kept as
	// the service sends it (the specification does not show the separator).
	GoogleAnalyticsDomains string
	// PublicTinyContentLink is the service's short public link to the campaign's content,
	// kept as sent.
	PublicTinyContentLink string

	// Lists are the IDs of the target lists. The specification does not show this member;
	// the real service sends it (IDs as strings or numbers, [] when none).
	Lists []int `wire:",func=decodeIDs"`
	// SendProcessFinishedOn is when the delivery finished, zero while it has not. Seen on
	// the real service, not in the specification.
	SendProcessFinishedOn DateTime
	// ThumbnailURL is the address of the campaign's thumbnail, "" when there is none (the
	// service then sends false). Seen on the real service, not in the specification.
	ThumbnailURL string `wire:",func=thumbnailText"`
}

// CampaignCreateParams holds a new campaign in campaign.create's version 1 shape, for
// Campaigns.Create. The six names, addresses and the subject are required; so is at
// least one of PlainContent and HTMLContent, and at least one target list or segment.
type CampaignCreateParams struct {
	CampaignName string `url:"CampaignName,omitempty"` // the campaign's name; required
	// FromName is the sender's name; required, and it may not hold an email address
	// (ErrEmailInNameField).
	FromName  string `url:"FromName,omitempty"`
	FromEmail string `url:"FromEmail,omitempty"` // the sender's address; required
	// ReplyToName is the name replies go to; required, and it may not hold an email
	// address (ErrEmailInNameField).
	ReplyToName  string `url:"ReplyToName,omitempty"`
	ReplyToEmail string `url:"ReplyToEmail,omitempty"` // the address replies go to; required
	Subject      string `url:"Subject,omitempty"`      // the subject line; required
	// TargetListIDs are the lists the campaign goes to, sent as TargetListIDs[].
	TargetListIDs []int `url:"TargetListIDs,brackets,omitempty"`
	// TargetSegmentIDs are the segments the campaign goes to, sent as TargetSegmentIDs[].
	TargetSegmentIDs []int `url:"TargetSegmentIDs,brackets,omitempty"`
	// GoogleAnalyticsDomainsToTrack lists the domains whose links get analytics tags.
	GoogleAnalyticsDomainsToTrack []string `url:"GoogleAnalyticsDomainsToTrack,brackets,omitempty"`
	// CustomerIDs are the customer accounts granted access to the campaign's reports.
	CustomerIDs  []int  `url:"CustomerIDs,brackets,omitempty"`
	PlainContent string `url:"PlainContent,omitempty"` // the plain-text body; it or HTMLContent is required
	HTMLContent  string `url:"HTMLContent,omitempty"`  // the HTML body; it or PlainContent is required
}

// Recipient is one target of a version 2 campaign: a whole list, or with SegmentID set a
// segment of it. It is written <list_id> or <list_id>-<segment_id> on the wire.
type Recipient struct {
	ListID    int // the target list
	SegmentID int // a segment of ListID; 0: the whole list
}

// String returns the wire form, e.g. "3" or "3-7".
func (r Recipient) String() string {
	if r.SegmentID == 0 {
		return strconv.Itoa(r.ListID)
	}
	return strconv.Itoa(r.ListID) + "-" + strconv.Itoa(r.SegmentID)
}

// CampaignCreateV2Params holds a new campaign in campaign.create's version 2 shape (Version=2),
// for Campaigns.CreateV2. The names, addresses, subject and Recipients are required, and
// at least one of PlainContent and HTMLContent.
//
// The three booleans are always sent, as 1 or 0, so that the zero value means "off"
// whatever the service's default.
type CampaignCreateV2Params struct {
	Name string `url:"Name,omitempty"` // the campaign's name; required
	// FromName is the sender's name; required, and it may not hold an email address
	// (ErrEmailInNameField).
	FromName  string `url:"FromName,omitempty"`
	FromEmail string `url:"FromEmail,omitempty"` // the sender's address; required
	// ReplyToName is the name replies go to; required, and it may not hold an email
	// address (ErrEmailInNameField).
	ReplyToName  string `url:"ReplyToName,omitempty"`
	ReplyToEmail string `url:"ReplyToEmail,omitempty"` // the address replies go to; required
	Subject      string `url:"Subject,omitempty"`      // the subject line; required
	// Recipients are the lists and segments the campaign goes to, sent as Recipients[]=3
	// and Recipients[]=3-7; at least one is required.
	Recipients   []Recipient `url:"Recipients,brackets,omitempty"`
	PlainContent string      `url:"PlainContent,omitempty"` // the plain-text body; it or HTMLContent is required
	HTMLContent  string      `url:"HTMLContent,omitempty"`  // the HTML body; it or PlainContent is required
	// HTMLContentWithIguana is the HTML with the drag-and-drop editor's tags.
	HTMLContentWithIguana string `url:"HTMLContentWithIguana,omitempty"`
	// Iguana marks a campaign made with the drag-and-drop editor.
	Iguana                  bool `url:"Iguana,int"`
	GoogleAnalyticsTracking bool `url:"GoogleAnalyticsTracking,int"` // turns analytics tracking on
	ECommerceTracking       bool `url:"ECommerceTracking,int"`       // turns e-commerce tracking on
}

// CampaignUpdateParams holds the changes for Campaigns.Update. Every field is optional and an
// empty one is left unchanged; target lists replace the campaign's current ones. The
// specification lists no parameter after Subject, so content cannot be changed here.
type CampaignUpdateParams struct {
	CampaignName string `url:"CampaignName,omitempty"` // the new name
	// FromName is the new sender's name; it may not hold an email address
	// (ErrEmailInNameField).
	FromName  string `url:"FromName,omitempty"`
	FromEmail string `url:"FromEmail,omitempty"` // the new sender's address
	// ReplyToName is the new name replies go to; it may not hold an email address
	// (ErrEmailInNameField).
	ReplyToName  string `url:"ReplyToName,omitempty"`
	ReplyToEmail string `url:"ReplyToEmail,omitempty"` // the new address replies go to
	// TargetListIDs are the new target lists, sent as TargetListIDs[].
	TargetListIDs []int `url:"TargetListIDs,brackets,omitempty"`
	// TargetSegmentIDs are the new target segments, sent as TargetSegmentIDs[].
	TargetSegmentIDs []int `url:"TargetSegmentIDs,brackets,omitempty"`
	// CustomerIDs are the customer accounts granted access to the campaign's reports,
	// sent as CustomerIDs[].
	CustomerIDs []int  `url:"CustomerIDs,brackets,omitempty"`
	Subject     string `url:"Subject,omitempty"` // the new subject line
}

// validate refuses, in this order, what the service would: missing fields, no content, an address in a name, a malformed address, no target, bad IDs.
func (p CampaignCreateParams) validate(command string) error {
	if err := requireParams(command, []string{"CampaignName", p.CampaignName, "FromName", p.FromName,
		"FromEmail", p.FromEmail, "ReplyToName", p.ReplyToName, "ReplyToEmail", p.ReplyToEmail, "Subject", p.Subject}); err != nil {
		return err
	}
	if err := checkCampaignContent(command, p.PlainContent, p.HTMLContent); err != nil {
		return err
	}
	if err := checkCampaignNames(command, p.FromName, p.ReplyToName); err != nil {
		return err
	}
	if err := checkCampaignEmails(command, p.FromEmail, p.ReplyToEmail); err != nil {
		return err
	}
	if len(p.TargetListIDs) == 0 && len(p.TargetSegmentIDs) == 0 {
		return &ValidationError{Code: ErrNoTargets, Command: command, Fields: []string{"TargetListIDs", "TargetSegmentIDs"},
			Reason: "at least one target list or segment is required"}
	}
	if err := checkIDs(command, "TargetListIDs", p.TargetListIDs); err != nil {
		return err
	}
	if err := checkIDs(command, "TargetSegmentIDs", p.TargetSegmentIDs); err != nil {
		return err
	}
	if err := checkIDs(command, "CustomerIDs", p.CustomerIDs); err != nil {
		return err
	}
	return nil
}

// Create makes a campaign from the version 1 shape (campaign.create) and returns its ID.
// The service stores it as a Draft.
//
// Before sending it refuses, with a *ValidationError matching the service's code: a missing
// required field (ErrMissingParameters, all of them in Fields), neither PlainContent nor
// HTMLContent (ErrMissingParameters), an email address inside FromName or ReplyToName
// (ErrEmailInNameField), no target list or segment (ErrNoTargets), and an ID that is not a
// positive 32-bit integer (ErrInvalidParameterValue). Checks run in that order.
//
// campaign.create is a one-shot write: it is retried only where the request surely did not
// reach the service, so a retry never makes a second campaign.
func (s *CampaignsService) Create(ctx context.Context, p CampaignCreateParams) (int, error) {
	const command = commands.CampaignCreate
	if err := p.validate(command); err != nil {
		return 0, err
	}
	form, err := wire.Values(p)
	if err != nil {
		return 0, &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	return s.create(ctx, command, form)
}

// validate refuses what Create's params refuse, in the version 2 shape.
func (p CampaignCreateV2Params) validate(command string) error {
	if err := requireParams(command, []string{"Name", p.Name, "FromName", p.FromName, "FromEmail", p.FromEmail,
		"ReplyToName", p.ReplyToName, "ReplyToEmail", p.ReplyToEmail, "Subject", p.Subject}); err != nil {
		return err
	}
	if err := checkCampaignContent(command, p.PlainContent, p.HTMLContent); err != nil {
		return err
	}
	if err := checkCampaignNames(command, p.FromName, p.ReplyToName); err != nil {
		return err
	}
	if err := checkCampaignEmails(command, p.FromEmail, p.ReplyToEmail); err != nil {
		return err
	}
	if len(p.Recipients) == 0 {
		return invalid(command, ErrNoTargets, "Recipients", "at least one recipient list or segment is required")
	}
	for _, r := range p.Recipients {
		if check.ID(r.ListID) != check.IDValid || check.ID(r.SegmentID) == check.IDOutOfRange {
			return invalid(command, ErrInvalidParameterValue, "Recipients",
				fmt.Sprintf("recipient %q: list IDs are positive and segment IDs not negative 32-bit integers", r))
		}
	}
	return nil
}

// CreateV2 makes a campaign from the version 2 shape (campaign.create with Version=2) and
// returns its ID. It checks what Create checks, with Name for CampaignName and Recipients
// for the targets (no recipient: ErrNoTargets; a ListID that is not positive or a negative
// SegmentID: ErrInvalidParameterValue), and is likewise a one-shot write.
func (s *CampaignsService) CreateV2(ctx context.Context, p CampaignCreateV2Params) (int, error) {
	const command = commands.CampaignCreate
	if err := p.validate(command); err != nil {
		return 0, err
	}
	form, err := wire.Values(p)
	if err != nil {
		return 0, &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	form.Set("Version", "2")
	return s.create(ctx, command, form)
}

func (s *CampaignsService) create(ctx context.Context, command string, form url.Values) (int, error) {
	return s.client.doForID(ctx, &apiCall{command: command, form: form}, "CampaignID")
}

// Get returns a campaign. The specification does not show the command's address; this
// sends campaign.get, after the service's naming of its other read commands.
func (s *CampaignsService) Get(ctx context.Context, campaignID int) (*Campaign, error) {
	const command = commands.CampaignGet
	form, err := idForm(command, "CampaignID", campaignID)
	if err != nil {
		return nil, err
	}
	var c *Campaign
	err = s.client.do(ctx, &apiCall{command: command, form: form}, func(key, value []byte) error {
		if string(key) == "Campaign" {
			c = new(Campaign)
			return c.UnmarshalJSON(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("sendloop: %s: the response holds no Campaign", command)
	}
	return c, nil
}

// validate requires something to change, refusing an address in a name, a malformed address and bad IDs.
func (u CampaignUpdateParams) validate(command string) error {
	if isEmptyCampaignUpdate(u) {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Reason: "no field to update"}
	}
	if err := checkCampaignNames(command, u.FromName, u.ReplyToName); err != nil {
		return err
	}
	if err := checkCampaignEmails(command, u.FromEmail, u.ReplyToEmail); err != nil {
		return err
	}
	for _, ids := range []struct {
		field string
		ids   []int
	}{{"TargetListIDs", u.TargetListIDs}, {"TargetSegmentIDs", u.TargetSegmentIDs}, {"CustomerIDs", u.CustomerIDs}} {
		if err := checkIDs(command, ids.field, ids.ids); err != nil {
			return err
		}
	}
	return nil
}

// Update changes a campaign (campaign.update). Before sending it refuses an email address
// inside FromName or ReplyToName (ErrEmailInNameField) and IDs that are not positive 32-bit
// integers (ErrInvalidParameterValue).
//
// Nothing to change: an update with no field set is refused before sending with
// ErrMissingParameters, the rule of every Update method of this package.
func (s *CampaignsService) Update(ctx context.Context, campaignID int, u CampaignUpdateParams) error {
	const command = commands.CampaignUpdate
	form, err := idForm(command, "CampaignID", campaignID)
	if err != nil {
		return err
	}
	if err := u.validate(command); err != nil {
		return err
	}
	changes, err := wire.Values(u)
	if err != nil {
		return &ValidationError{Code: ErrInvalidParameterValue, Command: command, Reason: err.Error()}
	}
	for k, v := range changes {
		form[k] = v
	}
	return s.client.do(ctx, &apiCall{command: command, form: form}, nil)
}

func isEmptyCampaignUpdate(u CampaignUpdateParams) bool {
	return strings.TrimSpace(u.CampaignName+u.FromName+u.FromEmail+u.ReplyToName+u.ReplyToEmail+u.Subject) == "" &&
		len(u.TargetListIDs) == 0 && len(u.TargetSegmentIDs) == 0 && len(u.CustomerIDs) == 0
}

// Delete removes a campaign (campaign.delete). Deleting a campaign that does not exist
// fails with ErrNotFound. When a retry after an attempt that may have run is answered
// ErrNotFound, Delete asks campaign.get: not found there either, the earlier attempt
// deleted it and Delete succeeds; otherwise, or when that read fails, the error matches
// ErrOutcomeUnknown and not ErrNotFound (the answer is in OutcomeUnknownError.Last).
func (s *CampaignsService) Delete(ctx context.Context, campaignID int) error {
	const command = commands.CampaignDelete
	form, err := idForm(command, "CampaignID", campaignID)
	if err != nil {
		return err
	}
	err = s.client.do(ctx, &apiCall{command: command, form: form}, nil)
	if answer, ok := alreadyDone(err, ErrNotFound); ok {
		err = settleRetry(command, answer, func() error {
			_, err := s.Get(ctx, campaignID)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err == nil {
				return errors.New("the campaign still exists")
			}
			return err
		})
	}
	return err
}

// thumbnailText reads ThumbnailURL, which the service sends as false when there is none.
func thumbnailText(v []byte) (string, error) {
	if t := bytes.TrimSpace(v); string(t) == "false" {
		return "", nil
	}
	return wire.String(v)
}

// decodeIDs reads a list of IDs sent as numbers or strings, in an array or (PHP's habit
// with gaps) an object; [] and null are none.
func decodeIDs(v []byte) ([]int, error) {
	var ids []int
	err := wire.ScanObject(v, func(_, elem []byte) error {
		id, err := wire.Int(elem)
		ids = append(ids, id)
		return err
	})
	return ids, err
}

// idForm checks a required int32 ID parameter and returns the form holding it: 0 is a
// missing parameter (105), a negative or oversized ID an invalid value (116).
func idForm(command, field string, id int) (url.Values, error) {
	if err := checkID(command, field, id); err != nil {
		return nil, err
	}
	return url.Values{field: {strconv.Itoa(id)}}, nil
}

// requireParams takes name, value pairs and refuses blank values, naming every one.
func requireParams(command string, pairs []string) error {
	var missing []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			missing = append(missing, pairs[i])
		}
	}
	if len(missing) > 0 {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: missing,
			Reason: "required parameters are missing"}
	}
	return nil
}

func checkCampaignContent(command, plain, html string) error {
	if strings.TrimSpace(plain) == "" && strings.TrimSpace(html) == "" {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Fields: []string{"PlainContent", "HTMLContent"},
			Reason: "at least one of PlainContent and HTMLContent is required"}
	}
	return nil
}

// checkCampaignEmails refuses a from or reply-to address that mail systems would refuse
// (a CR or LF above all, which would forge headers); an empty one is left to the required
// parameter checks.
func checkCampaignEmails(command, fromEmail, replyToEmail string) error {
	for _, f := range []struct{ name, value string }{{"FromEmail", fromEmail}, {"ReplyToEmail", replyToEmail}} {
		if f.value != "" {
			if err := checkEmail(command, f.name, f.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCampaignNames refuses an email address inside a from or reply-to name (137).
func checkCampaignNames(command, fromName, replyToName string) error {
	var fields []string
	if containsEmailAddress(fromName) {
		fields = append(fields, "FromName")
	}
	if containsEmailAddress(replyToName) {
		fields = append(fields, "ReplyToName")
	}
	if len(fields) > 0 {
		return &ValidationError{Code: ErrEmailInNameField, Command: command, Fields: fields,
			Reason: "an email address cannot be used in a from or reply-to name"}
	}
	return nil
}

// checkIDs refuses IDs that are not positive 32-bit integers.
func checkIDs(command, field string, ids []int) error {
	for _, id := range ids {
		if check.ID(id) != check.IDValid {
			return invalid(command, ErrInvalidParameterValue, field, fmt.Sprintf("%s holds %d, not an ID: IDs run from 1 to 2147483647", field, id))
		}
	}
	return nil
}

// containsEmailAddress reports whether s holds something shaped like an address: an address
// character, '@', and a run of address characters holding a dot that has one before it and
// a non-dot after it ("ann@example.com", also inside "Ann <ann@example.com>"). "Ann @ Acme",
// "@handle" and "ann@localhost" are not addresses. sendlooptest applies the same rule.
func containsEmailAddress(s string) bool {
	isAddrChar := func(c byte) bool {
		return c > ' ' && c != '@' && c != '<' && c != '>' && c != '(' && c != ')' && c != '[' && c != ']' &&
			c != ',' && c != ';' && c != ':' && c != '"' && c != '\'' && c != 0x7f
	}
	for i := 1; i < len(s); i++ {
		if s[i] != '@' || !isAddrChar(s[i-1]) {
			continue
		}
		end := i + 1
		for end < len(s) && isAddrChar(s[end]) {
			end++
		}
		domain := s[i+1 : end]
		for k := 1; k+1 < len(domain); k++ {
			if domain[k] == '.' && domain[k+1] != '.' {
				return true
			}
		}
	}
	return false
}

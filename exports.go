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

// ExportsService reads unsubscriptions, suppressions, spam complaints and bounces (export.*).
type ExportsService service

// Unsubscription is an item of export.unsubscriptions: an address that left a list.
//
//sendloop:decode
type Unsubscription struct {
	CampaignID         int    // 0 when the unsubscription came from no campaign
	ListID             int    // the list left
	SubscriberID       int    // the subscriber's ID in that list
	EmailAddress       string // the address that left
	UnsubscriptionDate Date   // the day it left; the service's unset '0000-00-00' is the zero Date
	UnsubscriptionIP   string `wire:",common=0.0.0.0"` // "0.0.0.0" when unset, as the service sends it
}

// SuppressedAddress is an item of export.suppressionlist.
type SuppressedAddress struct {
	EmailAddress string // the suppressed address: the pair's first element
	Type         string // e.g. "FBL Report"; other values are kept as they come
}

// UnmarshalJSON decodes an [email address, type] pair, or an object with EmailAddress and
// Type members. Hand-written: a pair is no record the generator reads.
func (a *SuppressedAddress) UnmarshalJSON(data []byte) error {
	return decodePair(data, "Type", &a.EmailAddress, func(v []byte) (err error) {
		a.Type, err = wire.Interned(v, "FBL Report", "Manual")
		return err
	})
}

// SpamComplaint is an item of export.spamcomplaints.
type SpamComplaint struct {
	EmailAddress string // the complaining address: the pair's first element
	// Date is when the complaint came: the pair's second element (Date or ComplaintDate in
	// an object); zero when unset.
	Date DateTime
}

// UnmarshalJSON decodes an [email address, date-time] pair, or an object with EmailAddress
// and Date (or ComplaintDate) members. Hand-written: a pair is no record the generator
// reads.
func (c *SpamComplaint) UnmarshalJSON(data []byte) error {
	return decodePair(data, "Date", &c.EmailAddress, c.Date.UnmarshalJSON, "ComplaintDate")
}

func decodeSpamComplaint(data []byte) (SpamComplaint, error) {
	var c SpamComplaint
	err := c.UnmarshalJSON(data)
	return c, err
}

// decodePair reads [address, second] or an object {EmailAddress, <second>}; further array
// elements and unknown members are ignored.
func decodePair(data []byte, second string, addr *string, decodeSecond func([]byte) error, aliases ...string) error {
	v := trimLeft(data)
	if len(v) > 0 && v[0] == '[' {
		i := 0
		return wire.ScanArray(v, func(elem []byte) (err error) {
			switch i {
			case 0:
				*addr, err = wire.String(elem)
			case 1:
				err = decodeSecond(elem)
			}
			i++
			return err
		})
	}
	return wire.ScanObject(v, func(key, elem []byte) (err error) {
		switch k := string(key); {
		case k == "EmailAddress":
			*addr, err = wire.String(elem)
		case k == second || slices.Contains(aliases, k):
			err = decodeSecond(elem)
		}
		return err
	})
}

// Bounce is an item of export.bounces.
//
//sendloop:decode
type Bounce struct {
	CampaignID    int        // the campaign whose message bounced
	ListID        int        // the subscriber's list
	SubscriberID  int        // the subscriber's ID in that list
	EmailAddress  string     // the address that bounced
	BounceType    BounceType `wire:",common=hard|soft"` // as the service writes it, e.g. "Hard"
	DetectionDate DateTime   // when the bounce was detected; zero when unset
}

// Unsubscriptions returns the addresses unsubscribed from a list, or with listID 0 from
// every list (export.unsubscriptions). A negative listID is refused before sending
// (ErrInvalidParameterValue).
func (s *ExportsService) Unsubscriptions(ctx context.Context, listID int) ([]Unsubscription, error) {
	const command = commands.ExportUnsubscriptions
	if err := checkOptionalID(command, "ListID", listID); err != nil {
		return nil, err
	}
	form := url.Values{}
	if listID != 0 {
		form.Set("ListID", strconv.Itoa(listID))
	}
	return exportItems[Unsubscription](ctx, s.client, command, form, "Unsubscriptions")
}

// SuppressionList returns every suppressed address with its suppression type
// (export.suppressionlist).
func (s *ExportsService) SuppressionList(ctx context.Context) ([]SuppressedAddress, error) {
	return exportItems[SuppressedAddress](ctx, s.client, commands.ExportSuppressionList, nil, "SuppressionList")
}

// SpamComplaints returns every address that complained, with when (export.spamcomplaints).
func (s *ExportsService) SpamComplaints(ctx context.Context) ([]SpamComplaint, error) {
	return exportItems[SpamComplaint](ctx, s.client, commands.ExportSpamComplaints, nil, "SpamComplaints")
}

// ExportBouncesParams are the parameters of Exports.Bounces.
type ExportBouncesParams struct {
	// BounceType is BounceHard or BounceSoft ("hard" and "soft" are accepted too); required.
	BounceType BounceType
}

// Bounces returns the bounces of one kind (export.bounces). The kind is sent in lower case
// as the service requires; anything but hard or soft is refused before sending with
// ErrInvalidBounceType (119).
func (s *ExportsService) Bounces(ctx context.Context, p ExportBouncesParams) ([]Bounce, error) {
	const command = commands.ExportBounces
	if err := p.validate(command); err != nil {
		return nil, err
	}
	return exportItems[Bounce](ctx, s.client, command, url.Values{"BounceType": {p.kind()}}, "BounceData")
}

// kind is the bounce type as the service wants it: lower case.
func (p ExportBouncesParams) kind() string {
	return strings.ToLower(strings.TrimSpace(string(p.BounceType)))
}

// validate requires a bounce type of hard or soft, in any case (105, 119).
func (p ExportBouncesParams) validate(command string) error {
	switch p.kind() {
	case "hard", "soft":
		return nil
	case "":
		return invalid(command, ErrMissingParameters, "BounceType", "BounceType is required")
	}
	return invalid(command, ErrInvalidBounceType, "BounceType", fmt.Sprintf("BounceType %q is neither hard nor soft", p.BounceType))
}

// exportItems sends an export command and decodes the array in its member named member.
func exportItems[T any, PT record[T]](ctx context.Context, c *Client, command string, form url.Values, name string) ([]T, error) {
	var out []T
	err := c.doWire(ctx, &apiCall{command: command, form: form}, member(name, func(d *wire.Decoder) (err error) {
		out, err = decodeRecords[T, PT](d)
		return err
	}))
	if err != nil {
		return nil, err
	}
	return out, nil
}

package legacy

import (
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
	"github.com/go-sendloop/sendloop/internal/check"
)

// The checks the typed methods make before anything is sent.

// checkIP refuses a missing IP parameter and one holding control characters. The
// specification types the IPs as strings: anything else is sent as given.
func checkIP(cmd, field, ip string) error {
	if strings.TrimSpace(ip) == "" {
		return invalid(cmd, 0, field, field+" is required")
	}
	if strings.ContainsFunc(ip, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return invalid(cmd, 0, field, field+" holds control characters")
	}
	return nil
}

// checkListID refuses a list ID that cannot exist (3).
func checkListID(cmd string, listID int) error {
	if check.ID(listID) != check.IDValid {
		return invalid(cmd, ErrListNotFound, "ListID", "ListID must be a list ID, from 1 to 2147483647")
	}
	return nil
}

// checkAddress refuses what the service would answer with codes 4 and 5.
func checkAddress(cmd, email, field string) error {
	if strings.TrimSpace(email) == "" {
		return invalid(cmd, ErrEmailMissing, field, "the email address is missing")
	}
	if problem := address.Problem(email); problem != "" {
		return invalid(cmd, ErrEmailFormat, field, fmt.Sprintf("the email address %q is not valid: %s", email, problem))
	}
	return nil
}

// validate refuses a missing or malformed address (4, 5), a missing SubscriptionIP and an
// impossible custom field ID.
func (p SubscriberAddParams) validate(cmd string) error {
	if err := checkAddress(cmd, p.EmailAddress, "Fields[EmailAddress]"); err != nil {
		return err
	}
	if err := checkIP(cmd, "SubscriptionIP", p.SubscriptionIP); err != nil {
		return err
	}
	for id := range p.CustomFields {
		if check.ID(id) != check.IDValid {
			return invalid(cmd, 0, "Fields", fmt.Sprintf("custom field ID %d is not an ID: IDs run from 1 to 2147483647", id))
		}
	}
	return nil
}

// validate refuses a missing or malformed address (4, 5) and a missing UnsubscriptionIP.
func (p SubscriberUnsubscribeParams) validate(cmd string) error {
	if err := checkAddress(cmd, p.EmailAddress, "EmailAddress"); err != nil {
		return err
	}
	return checkIP(cmd, "UnsubscriptionIP", p.UnsubscriptionIP)
}

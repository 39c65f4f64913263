package sendloop

import (
	"context"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// AccountService reads and updates the account's details (account.info.*).
type AccountService service

// AccountInfo is the account's details as account.info.get returns them.
//
//sendloop:decode
type AccountInfo struct {
	Username                string   // the account's user name
	Subdomain               string   // the account's subdomain on the service
	MemberSince             DateTime // when the account was opened; zero when unset
	FirstName               string   // the account holder's first name
	LastName                string   // the account holder's last name
	Email                   string   // the account holder's address
	CompanyName             string   // the company's name
	Website                 string   // the company's website
	Street                  string   // postal address: street
	City                    string   // postal address: city
	State                   string   // postal address: state
	Country                 string   // postal address: country
	Phone                   string   // phone number
	Fax                     string   // fax number
	TimeZone                string   // one of the names System.TimeZones returns
	SignUpIP                string   // the IP address the account signed up from, kept as text
	LastActivityDateTime    DateTime // the account's last activity; zero when unset
	LastAccountUpdateDate   DateTime // the last change of these details, a date-time; zero when unset
	EmailVerificationStatus string   // e.g. "Confirmed"; other values are kept as they come
}

// Get returns the account's details (account.info.get).
func (s *AccountService) Get(ctx context.Context) (*AccountInfo, error) {
	info := new(AccountInfo)
	err := s.client.doWire(ctx, &apiCall{command: commands.AccountInfoGet}, member("AccountInfo", info.decodeWire))
	if err != nil {
		return nil, err
	}
	return info, nil
}

// AccountUpdateParams holds the details to change with Account.Update. Every field is optional; an
// empty field is left unchanged (the service offers no way to clear one).
type AccountUpdateParams struct {
	Username string `url:"Username,omitempty"` // the new user name
	// NewPassword is the new password: write-only, sent as given but printed and logged as
	// [REDACTED].
	NewPassword Secret `url:"NewPassword,omitempty"`
	FirstName   string `url:"FirstName,omitempty"` // the account holder's new first name
	LastName    string `url:"LastName,omitempty"`  // the account holder's new last name
	Email       string `url:"Email,omitempty"`     // the account holder's new address; checked before sending
	// TimeZone must be one of the names System.TimeZones returns; the service refuses any
	// other with ErrInvalidParameterValue.
	TimeZone    string `url:"TimeZone,omitempty"`
	Street      string `url:"Street,omitempty"`      // postal address: street
	City        string `url:"City,omitempty"`        // postal address: city
	State       string `url:"State,omitempty"`       // postal address: state
	Zip         string `url:"Zip,omitempty"`         // postal code; sent only, AccountInfo does not return it
	Country     string `url:"Country,omitempty"`     // postal address: country
	CompanyName string `url:"CompanyName,omitempty"` // the company's name
	Website     string `url:"Website,omitempty"`     // the company's website
	Phone       string `url:"Phone,omitempty"`       // phone number
	Fax         string `url:"Fax,omitempty"`         // fax number
}

// validate requires something to change and a well-formed Email.
func (u AccountUpdateParams) validate(command string) error {
	if u == (AccountUpdateParams{}) {
		return &ValidationError{Code: ErrMissingParameters, Command: command, Reason: "nothing to change: no field is set"}
	}
	if u.Email != "" {
		if err := checkEmail(command, "Email", u.Email); err != nil {
			return err
		}
	}
	return nil
}

// Update changes the account's details (account.info.update).
//
// Before sending, it refuses an Email that is not an address (ErrInvalidEmailFormat). The
// service judges the TimeZone (116 for a name system.timezones.Get does not list): Update
// makes no other call to check it.
//
// Nothing to change: an update with no field set is refused before sending with
// ErrMissingParameters, as by every Update method of this package. The service would
// accept it (every field is optional) and change nothing, so such a call is almost
// certainly a mistake; use Call to send one anyway.
func (s *AccountService) Update(ctx context.Context, u AccountUpdateParams) error {
	const command = commands.AccountInfoUpdate
	if err := u.validate(command); err != nil {
		return err
	}
	form, err := wire.Values(u)
	if err != nil {
		return err
	}
	return s.client.do(ctx, &apiCall{command: command, form: form, secrets: []string{string(u.NewPassword)}}, nil)
}

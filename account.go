package sendloop

import (
	"context"
	"fmt"

	"github.com/go-sendloop/sendloop/internal/transport"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// AccountService reads and updates the account's details (account.info.*).
type AccountService service

// AccountInfo is the account's details as account.info.get returns them.
type AccountInfo struct {
	Username                string
	Subdomain               string
	MemberSince             DateTime
	FirstName               string
	LastName                string
	Email                   string
	CompanyName             string
	Website                 string
	Street                  string
	City                    string
	State                   string
	Country                 string
	Phone                   string
	Fax                     string
	TimeZone                string // one of the names System.TimeZones returns
	SignUpIP                string
	LastActivityDateTime    DateTime
	LastAccountUpdateDate   DateTime
	EmailVerificationStatus string // e.g. "Confirmed"; other values are kept as they come
}

// UnmarshalJSON decodes the service's AccountInfo object; unknown keys are ignored.
func (a *AccountInfo) UnmarshalJSON(data []byte) error {
	return wire.ScanObject(data, func(key, v []byte) (err error) {
		switch string(key) {
		case "Username":
			a.Username, err = wire.String(v)
		case "Subdomain":
			a.Subdomain, err = wire.String(v)
		case "MemberSince":
			err = a.MemberSince.UnmarshalJSON(v)
		case "FirstName":
			a.FirstName, err = wire.String(v)
		case "LastName":
			a.LastName, err = wire.String(v)
		case "Email":
			a.Email, err = wire.String(v)
		case "CompanyName":
			a.CompanyName, err = wire.String(v)
		case "Website":
			a.Website, err = wire.String(v)
		case "Street":
			a.Street, err = wire.String(v)
		case "City":
			a.City, err = wire.String(v)
		case "State":
			a.State, err = wire.String(v)
		case "Country":
			a.Country, err = wire.String(v)
		case "Phone":
			a.Phone, err = wire.String(v)
		case "Fax":
			a.Fax, err = wire.String(v)
		case "TimeZone":
			a.TimeZone, err = wire.String(v)
		case "SignUpIP":
			a.SignUpIP, err = wire.String(v)
		case "LastActivityDateTime":
			err = a.LastActivityDateTime.UnmarshalJSON(v)
		case "LastAccountUpdateDate":
			err = a.LastAccountUpdateDate.UnmarshalJSON(v)
		case "EmailVerificationStatus":
			a.EmailVerificationStatus, err = wire.String(v)
		}
		return err
	})
}

// Get returns the account's details (account.info.get).
func (s *AccountService) Get(ctx context.Context) (*AccountInfo, error) {
	info := new(AccountInfo)
	err := s.client.send(ctx, "account.info.get", transport.Read, nil, func(key, value []byte) error {
		if string(key) == "AccountInfo" {
			return info.UnmarshalJSON(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// AccountUpdate holds the details to change with Account.Update. Every field is optional; an
// empty field is left unchanged (the service offers no way to clear one).
type AccountUpdate struct {
	Username    string `url:"Username,omitempty"`
	NewPassword Secret `url:"NewPassword,omitempty"`
	FirstName   string `url:"FirstName,omitempty"`
	LastName    string `url:"LastName,omitempty"`
	Email       string `url:"Email,omitempty"`
	// TimeZone must be one of the names System.TimeZones returns; Update checks it first.
	TimeZone    string `url:"TimeZone,omitempty"`
	Street      string `url:"Street,omitempty"`
	City        string `url:"City,omitempty"`
	State       string `url:"State,omitempty"`
	Zip         string `url:"Zip,omitempty"`
	Country     string `url:"Country,omitempty"`
	CompanyName string `url:"CompanyName,omitempty"`
	Website     string `url:"Website,omitempty"`
	Phone       string `url:"Phone,omitempty"`
	Fax         string `url:"Fax,omitempty"`
}

// Update changes the account's details (account.info.update).
//
// Before sending, it refuses an update with no field set (ErrMissingParameters), an Email
// that is not an address (ErrInvalidEmailFormat) and a TimeZone that system.timezones.Get
// does not list (ErrInvalidParameterValue). The time zone list is fetched on the first
// update that sets one and kept for the Client's life.
func (s *AccountService) Update(ctx context.Context, u AccountUpdate) error {
	const command = "account.info.update"
	if u == (AccountUpdate{}) {
		return &ValidationError{Code: CodeMissingParameters, Command: command, Reason: "no field to update"}
	}
	if u.Email != "" {
		if err := checkEmail(command, "Email", u.Email); err != nil {
			return err
		}
	}
	if u.TimeZone != "" {
		known, err := s.client.knownTimeZone(ctx, u.TimeZone)
		if err != nil {
			return fmt.Errorf("sendloop: %s: checking TimeZone: %w", command, err)
		}
		if !known {
			return invalid(command, CodeInvalidParameterValue, "TimeZone",
				fmt.Sprintf("%q is not a time zone name of system.timezones.Get", u.TimeZone))
		}
	}
	form, err := wire.Values(u)
	if err != nil {
		return err
	}
	return s.client.sendSecret(ctx, command, transport.Idempotent, form, nil, string(u.NewPassword))
}

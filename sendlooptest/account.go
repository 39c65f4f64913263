package sendlooptest

import (
	"time"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// account holds account.info.* state. Fields keep their wire (string) form.
type account struct {
	Username, Subdomain, MemberSince                                string
	FirstName, LastName, Email, CompanyName, Website                string
	Street, City, State, Zip, Country, Phone, Fax                   string
	TimeZone, SignUpIP, LastActivityDateTime, LastAccountUpdateDate string
	EmailVerificationStatus, Password                               string
}

func newAccount(now time.Time) account {
	return account{
		Username: "demo", Subdomain: "demo", MemberSince: now.AddDate(-1, 0, 0).Format(dateTimeLayout),
		FirstName: "Dana", LastName: "Demo", Email: "dana@example.com", CompanyName: "Example Ltd",
		Website: "https://example.com", Street: "1 Main Street", City: "London", Country: "GB",
		TimeZone: "Europe/London", SignUpIP: "127.0.0.1", LastActivityDateTime: now.Format(dateTimeLayout),
		LastAccountUpdateDate: zeroDateTime, EmailVerificationStatus: "Confirmed", Password: "initial-password",
	}
}

// accountHandlers are the handlers of account commands; dispatch pairs them with the command table.
var accountHandlers = map[string]handler{
	cmdtable.AccountInfoGet:    accountInfoGet,
	cmdtable.AccountInfoUpdate: accountInfoUpdate,
}

func accountInfoGet(c *call) (object, *apiError) {
	a := &c.st.account
	return object{{"AccountInfo", object{
		{"Username", a.Username}, {"Subdomain", a.Subdomain}, {"MemberSince", a.MemberSince},
		{"FirstName", a.FirstName}, {"LastName", a.LastName}, {"Email", a.Email},
		{"CompanyName", a.CompanyName}, {"Website", a.Website}, {"Street", a.Street},
		{"City", a.City}, {"State", a.State}, {"Country", a.Country}, {"Phone", a.Phone},
		{"Fax", a.Fax}, {"TimeZone", a.TimeZone}, {"SignUpIP", a.SignUpIP},
		{"LastActivityDateTime", a.LastActivityDateTime}, {"LastAccountUpdateDate", a.LastAccountUpdateDate},
		{"EmailVerificationStatus", a.EmailVerificationStatus},
	}}}, nil
}

func accountInfoUpdate(c *call) (object, *apiError) {
	a := c.st.account // applied only when every field passes
	fields := map[string]*string{
		"Username": &a.Username, "NewPassword": &a.Password, "FirstName": &a.FirstName,
		"LastName": &a.LastName, "Email": &a.Email, "TimeZone": &a.TimeZone, "Street": &a.Street,
		"City": &a.City, "State": &a.State, "Zip": &a.Zip, "Country": &a.Country,
		"CompanyName": &a.CompanyName, "Website": &a.Website, "Phone": &a.Phone, "Fax": &a.Fax,
	}
	changed := false // every parameter is optional: with none, nothing changes
	for name, dst := range fields {
		if v, ok := c.form[name]; ok {
			*dst, changed = v[0], true
		}
	}
	if _, ok := c.form["Username"]; ok && !validUsername(a.Username) {
		return nil, &apiError{code: 113, message: "Invalid username", fields: []string{"Username"}}
	}
	if _, ok := c.form["Email"]; ok {
		if !validEmail(a.Email) {
			return nil, &apiError{code: 111, message: "Invalid email address format", fields: []string{"Email"}}
		}
	}
	if _, ok := c.form["NewPassword"]; ok && len(a.Password) < 6 {
		return nil, &apiError{code: 115, message: "Invalid password", fields: []string{"NewPassword"}}
	}
	if _, ok := c.form["TimeZone"]; ok && !knownZone(a.TimeZone) {
		return nil, &apiError{code: 116, message: "Invalid parameter value provided", fields: []string{"TimeZone"}}
	}
	if changed {
		a.LastAccountUpdateDate = c.now.Format(dateTimeLayout)
	}
	c.st.account = a
	return nil, nil
}

func validUsername(u string) bool {
	if len(u) < 3 || len(u) > 64 {
		return false
	}
	for _, r := range u {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

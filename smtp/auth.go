package smtp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/emersion/go-sasl"
)

// Auth holds the relay credentials: the SMTP username and password of the
// delivery settings of a Sendloop sender address.
//
// Auth never prints its password: String, GoString, Format and LogValue
// redact it.
type Auth struct {
	// Username is the SMTP username.
	Username string
	// Password is the SMTP password; it is sent only over TLS (or to a
	// loopback host, or WithAllowPlaintext).
	Password string
	// Mechanism is "PLAIN" or "LOGIN"; empty means PLAIN when the server
	// offers it, else LOGIN.
	Mechanism string
}

// String describes the credentials with the password redacted.
func (a Auth) String() string {
	mech := ""
	if a.Mechanism != "" {
		mech = " mechanism=" + a.Mechanism
	}
	return fmt.Sprintf("smtp.Auth{username=%q password=%s%s}", a.Username, redacted, mech)
}

// GoString is String: %#v must not print the password either.
func (a Auth) GoString() string { return a.String() }

// Format makes every fmt verb print String, since verbs such as %d or %x
// would otherwise print the fields, the password included.
func (a Auth) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(a.String())) }

// MarshalJSON writes the credentials with the password redacted, so that a
// configuration dumped as JSON (a debug endpoint, a JSON log) cannot carry it.
// Decoding is not affected: JSON with a password still fills Password.
func (a Auth) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Username  string `json:"Username"`
		Password  string `json:"Password"`
		Mechanism string `json:"Mechanism,omitempty"`
	}{a.Username, redacted, a.Mechanism})
}

// LogValue logs the credentials without the password.
func (a Auth) LogValue() slog.Value {
	return slog.GroupValue(slog.String("username", a.Username), slog.String("password", redacted))
}

func (a Auth) validate() error {
	switch {
	case a.Username == "" || a.Password == "":
		return errors.New("sendloop/smtp: the relay needs a username and a password")
	case strings.ContainsAny(a.Username, "\x00\r\n") || strings.ContainsAny(a.Password, "\x00\r\n"):
		// NUL separates PLAIN fields; CR and LF would end an AUTH LOGIN line.
		return errors.New("sendloop/smtp: the username or password contains NUL, CR or LF")
	}
	switch strings.ToUpper(a.Mechanism) {
	case "", sasl.Plain, sasl.Login:
		return nil
	}
	return fmt.Errorf("sendloop/smtp: unsupported AUTH mechanism %q: want PLAIN or LOGIN", a.Mechanism)
}

// loginClient is the AUTH LOGIN mechanism. go-sasl has one, but it sends the
// username as an initial response and expects the exact prompt "Password:";
// servers vary, so this one waits for the prompts and goes by their text
// when it is known, by their order otherwise.
type loginClient struct {
	username, password string
	step               int
}

func (a *loginClient) Start() (string, []byte, error) {
	a.step = 0
	return sasl.Login, nil, nil
}

func (a *loginClient) Next(challenge []byte) ([]byte, error) {
	a.step++
	prompt := strings.ToLower(strings.TrimSpace(string(challenge)))
	switch {
	case strings.HasPrefix(prompt, "username") || strings.HasPrefix(prompt, "user name"):
		return []byte(a.username), nil
	case strings.HasPrefix(prompt, "password"):
		return []byte(a.password), nil
	case a.step == 1:
		return []byte(a.username), nil
	case a.step == 2:
		return []byte(a.password), nil
	}
	return nil, fmt.Errorf("sendloop/smtp: unexpected AUTH LOGIN challenge number %d", a.step)
}

// chooseAuth picks the mechanism: the one a asks for if offered, else PLAIN,
// else LOGIN, from the mechanisms of the EHLO AUTH line.
func chooseAuth(offered string, a Auth) (sasl.Client, string, error) {
	var hasPlain, hasLogin bool
	for _, mech := range strings.Fields(offered) {
		switch strings.ToUpper(mech) {
		case sasl.Plain:
			hasPlain = true
		case sasl.Login:
			hasLogin = true
		}
	}
	want := strings.ToUpper(a.Mechanism)
	switch {
	case hasPlain && (want == "" || want == sasl.Plain):
		return sasl.NewPlainClient("", a.Username, a.Password), sasl.Plain, nil
	case hasLogin && (want == "" || want == sasl.Login):
		return &loginClient{username: a.Username, password: a.Password}, sasl.Login, nil
	}
	return nil, "", fmt.Errorf("%w; it offers %q", ErrNoAuthMechanism, offered)
}

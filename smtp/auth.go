package smtp

import (
	"errors"
	"fmt"
	netsmtp "net/smtp"
	"strings"
)

// plainAuth is AUTH PLAIN (RFC 4616). net/smtp has one, but it allows clear
// text only for "localhost", "127.0.0.1" and "::1"; Relay applies its own
// rule, checked again here.
type plainAuth struct {
	username, password string
	insecureOK         bool
}

func (a *plainAuth) Start(server *netsmtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !a.insecureOK {
		return "", nil, ErrInsecureAuth
	}
	return "PLAIN", []byte("\x00" + a.username + "\x00" + a.password), nil
}

func (a *plainAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("sendloop/smtp: unexpected AUTH PLAIN challenge")
	}
	return nil, nil
}

// loginAuth is the AUTH LOGIN mechanism, which net/smtp lacks: the server
// asks for the username, then the password, each base64-encoded.
type loginAuth struct {
	username, password string
	insecureOK         bool
	step               int
}

func (a *loginAuth) Start(server *netsmtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !a.insecureOK {
		return "", nil, ErrInsecureAuth
	}
	a.step = 0
	return "LOGIN", nil, nil
}

func (a *loginAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	a.step++
	// Servers prompt "Username:" and "Password:"; go by the prompt when it is
	// one of those and by the order otherwise.
	prompt := strings.ToLower(strings.TrimSpace(string(fromServer)))
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

// chooseAuth picks PLAIN, else LOGIN, from the mechanisms of the EHLO AUTH
// line.
func chooseAuth(offered, username, password string, insecureOK bool) (netsmtp.Auth, string, error) {
	var hasPlain, hasLogin bool
	for _, mech := range strings.Fields(offered) {
		switch strings.ToUpper(mech) {
		case "PLAIN":
			hasPlain = true
		case "LOGIN":
			hasLogin = true
		}
	}
	switch {
	case hasPlain:
		return &plainAuth{username: username, password: password, insecureOK: insecureOK}, "PLAIN", nil
	case hasLogin:
		return &loginAuth{username: username, password: password, insecureOK: insecureOK}, "LOGIN", nil
	}
	return nil, "", fmt.Errorf("%w; it offers %q", ErrNoAuthMechanism, offered)
}

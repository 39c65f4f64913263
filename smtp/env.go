package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"strconv"
	"strings"
)

// Environment variables read by NewRelayFromEnv, the same the sendloop CLI reads and
// `sendloop fake` prints.
const (
	// EnvHost is the relay's host (required).
	EnvHost = "SENDLOOP_SMTP_HOST"
	// EnvPort is the relay's port; PortSubmission when unset.
	EnvPort = "SENDLOOP_SMTP_PORT"
	// EnvUser is the username of a sender address's delivery settings (required).
	EnvUser = "SENDLOOP_SMTP_USER"
	// EnvPassword is the password that goes with EnvUser (required).
	EnvPassword = "SENDLOOP_SMTP_PASSWORD"
	// EnvCAFile, when set, is a PEM file of certificates trusted beside the system's for
	// the relay's TLS: `sendloop fake` writes its relay's authority there.
	EnvCAFile = "SENDLOOP_SMTP_CA_FILE"
)

// EnvError is a relay setting of the environment that is missing or unusable. Its text
// names the variables, never a password.
type EnvError struct {
	// Variables are the variables at fault, e.g. EnvUser and EnvPassword.
	Variables []string
	// Unset reports that a required variable is unset or empty.
	Unset bool
	// Reason says what is wrong.
	Reason string
	// Err is the cause, when there is one (reading EnvCAFile).
	Err error
}

// Error names the variables and what is wrong with them.
func (e *EnvError) Error() string {
	return "sendloop/smtp: " + strings.Join(e.Variables, " and ") + e.Reason
}

// Unwrap returns the cause, or nil.
func (e *EnvError) Unwrap() error { return e.Err }

// NewRelayFromEnv is NewRelay with the address, credentials and trusted certificates read
// from the environment: SENDLOOP_SMTP_HOST, SENDLOOP_SMTP_PORT (default 587),
// SENDLOOP_SMTP_USER, SENDLOOP_SMTP_PASSWORD and SENDLOOP_SMTP_CA_FILE, as the sendloop
// CLI reads them. Options given here are applied after the environment's, so a
// WithTLSConfig replaces the CA file's. See NewRelayFromLookup.
func NewRelayFromEnv(opts ...Option) (*Relay, error) {
	return NewRelayFromLookup(os.LookupEnv, opts...)
}

// NewRelayFromLookup is NewRelayFromEnv reading the variables through lookup (os.LookupEnv
// has its shape), so that a program or a test can give its own environment, such as the
// lines `sendloop fake` prints. The rules:
//
//   - EnvHost is required; surrounding space is removed.
//   - EnvPort is a number from 1 to 65535, PortSubmission when unset or blank; 465 implies
//     implicit TLS, as for NewRelay.
//   - EnvUser and EnvPassword are both required, taken as they are.
//   - EnvCAFile, when set, names a PEM file whose certificates are trusted beside the
//     system's (TLS 1.2 at least); a file that cannot be read or holds no certificate is
//     an error.
//
// A missing or unusable variable is an *EnvError; the other errors are NewRelay's.
func NewRelayFromLookup(lookup func(string) (string, bool), opts ...Option) (*Relay, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	host := strings.TrimSpace(get(EnvHost))
	if host == "" {
		return nil, &EnvError{Variables: []string{EnvHost}, Unset: true,
			Reason: " is not set: the relay's host, port, user and password come from the environment"}
	}
	port := PortSubmission
	if p := strings.TrimSpace(get(EnvPort)); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, &EnvError{Variables: []string{EnvPort}, Reason: "=" + strconv.Quote(p) + " is not a port number"}
		}
		port = n
	}
	user, password := get(EnvUser), get(EnvPassword)
	if user == "" || password == "" {
		return nil, &EnvError{Variables: []string{EnvUser, EnvPassword}, Unset: true, Reason: " must be set"}
	}
	var fromEnv []Option
	if caFile := get(EnvCAFile); caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, &EnvError{Variables: []string{EnvCAFile}, Reason: ": " + err.Error(), Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &EnvError{Variables: []string{EnvCAFile}, Reason: ": " + caFile + " holds no PEM certificate"}
		}
		fromEnv = append(fromEnv, WithTLSConfig(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	return NewRelay(net.JoinHostPort(host, strconv.Itoa(port)), Auth{Username: user, Password: password}, append(fromEnv, opts...)...)
}

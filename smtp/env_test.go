package smtp_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

// lookupOf returns a lookup function over vars, in the shape of os.LookupEnv.
func lookupOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestNewRelayFromLookup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	if err := os.WriteFile(notPEM, []byte("nothing"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{smtp.EnvHost: " relay.example ", smtp.EnvUser: testUser, smtp.EnvPassword: testPassword}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		vars     map[string]string
		wantAddr string
		wantErr  string // a part of the error's text; "" for success
		unset    bool   // the error is an *EnvError with Unset
		cause    error  // errors.Is target, when the error has a cause
	}{
		{"default port", base, "relay.example:587", "", false, nil},
		{"port", with(smtp.EnvPort, " 25 "), "relay.example:25", "", false, nil},
		{"blank port", with(smtp.EnvPort, "  "), "relay.example:587", "", false, nil},
		{"IPv6 host", with(smtp.EnvHost, "::1", smtp.EnvPort, "2525"), "[::1]:2525", "", false, nil},
		{"no host", with(smtp.EnvHost, "<unset>"), "", "SENDLOOP_SMTP_HOST is not set", true, nil},
		{"blank host", with(smtp.EnvHost, " \t"), "", "SENDLOOP_SMTP_HOST is not set", true, nil},
		{"port a name", with(smtp.EnvPort, "smtp"), "", `SENDLOOP_SMTP_PORT="smtp" is not a port number`, false, nil},
		{"port 0", with(smtp.EnvPort, "0"), "", `SENDLOOP_SMTP_PORT="0" is not a port number`, false, nil},
		{"port too large", with(smtp.EnvPort, "65536"), "", `SENDLOOP_SMTP_PORT="65536" is not a port number`, false, nil},
		{"no user", with(smtp.EnvUser, "<unset>"), "", "SENDLOOP_SMTP_USER and SENDLOOP_SMTP_PASSWORD must be set", true, nil},
		{"empty password", with(smtp.EnvPassword, ""), "", "SENDLOOP_SMTP_USER and SENDLOOP_SMTP_PASSWORD must be set", true, nil},
		{"missing CA file", with(smtp.EnvCAFile, filepath.Join(dir, "nope.pem")), "", "SENDLOOP_SMTP_CA_FILE: open", false, fs.ErrNotExist},
		{"CA file without PEM", with(smtp.EnvCAFile, notPEM), "", "SENDLOOP_SMTP_CA_FILE: " + notPEM + " holds no PEM certificate", false, nil},
		{"bad host", with(smtp.EnvHost, "a b"), "", "invalid relay host", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			relay, err := smtp.NewRelayFromLookup(lookupOf(tt.vars))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer relay.Close()
				if relay.Addr() != tt.wantAddr {
					t.Errorf("Addr() = %q, want %q", relay.Addr(), tt.wantAddr)
				}
				return
			}
			if err == nil {
				relay.Close()
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("error %q holds the password", err)
			}
			var envErr *smtp.EnvError
			if errors.As(err, &envErr) != strings.Contains(tt.wantErr, "SENDLOOP_") || (envErr != nil && envErr.Unset != tt.unset) {
				t.Errorf("error %#v: want an *EnvError for the variables, Unset %v", err, tt.unset)
			}
			if tt.cause != nil && !errors.Is(err, tt.cause) {
				t.Errorf("error %v does not match %v", err, tt.cause)
			}
		})
	}
}

// TestNewRelayFromLookupSendsWithTheCAFile: the settings of a fake relay, its authority in a
// file as `sendloop fake` writes it, are enough to send over verified TLS.
func TestNewRelayFromLookupSendsWithTheCAFile(t *testing.T) {
	t.Parallel()
	fake, err := sendlooptest.StartRelay(t, testUser, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, fake.CACertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	relay, err := smtp.NewRelayFromLookup(lookupOf(map[string]string{
		smtp.EnvHost: fake.Host(), smtp.EnvPort: strconv.Itoa(fake.Port()),
		smtp.EnvUser: testUser, smtp.EnvPassword: testPassword, smtp.EnvCAFile: caFile,
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	res, err := relay.Send(context.Background(), &smtp.Message{From: "ann@example.com", To: []string{"bob@example.net"}, Subject: "Hi", Text: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages()
	if len(msgs) != 1 || !msgs[0].TLS || res.MessageID == "" {
		t.Fatalf("captured %+v, result %+v: want one message over TLS", msgs, res)
	}
}

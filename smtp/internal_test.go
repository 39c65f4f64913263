package smtp

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"reflect"
	"strings"
	"testing"

	netsmtp "net/smtp"
)

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true,
		"::1": true, "::ffff:127.0.0.1": true,
		"example.com": false, "10.0.0.1": false, "::2": false, "128.0.0.1": false,
		"localhost.example.com": false, "": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestChooseAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		offered, want string
	}{
		{"PLAIN LOGIN", "PLAIN"},
		{"LOGIN PLAIN", "PLAIN"},
		{"CRAM-MD5 login", "LOGIN"},
		{"plain", "PLAIN"},
		{"CRAM-MD5 XOAUTH2", ""},
		{"", ""},
	}
	for _, tt := range tests {
		_, mech, err := chooseAuth(tt.offered, "u", "p", false)
		if mech != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("chooseAuth(%q) = %q, %v; want %q", tt.offered, mech, err, tt.want)
		}
	}
}

func TestAuthRefusesClearText(t *testing.T) {
	t.Parallel()
	clearText := &netsmtp.ServerInfo{Name: "relay.example.com", TLS: false, Auth: []string{"PLAIN", "LOGIN"}}
	for _, a := range []netsmtp.Auth{&plainAuth{username: "u", password: "p"}, &loginAuth{username: "u", password: "p"}} {
		if _, _, err := a.Start(clearText); err != ErrInsecureAuth {
			t.Errorf("%T.Start without TLS = %v, want ErrInsecureAuth", a, err)
		}
	}
	local := &plainAuth{username: "u", password: "p", insecureOK: true}
	if mech, resp, err := local.Start(clearText); err != nil || mech != "PLAIN" || string(resp) != "\x00u\x00p" {
		t.Errorf("plainAuth.Start = %q %q %v", mech, resp, err)
	}
}

func TestLoginAuthDialogue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		challenges []string
		want       []string
	}{
		{"usual prompts", []string{"Username:", "Password:"}, []string{"u", "p"}},
		{"lower case prompts", []string{"username:", "password:"}, []string{"u", "p"}},
		{"prompts in reverse", []string{"Password:", "Username:"}, []string{"p", "u"}},
		{"unknown prompts by order", []string{"who?", "secret?"}, []string{"u", "p"}},
	}
	tlsInfo := &netsmtp.ServerInfo{TLS: true}
	for _, tt := range tests {
		a := &loginAuth{username: "u", password: "p"}
		if mech, ir, err := a.Start(tlsInfo); mech != "LOGIN" || ir != nil || err != nil {
			t.Fatalf("Start = %q %q %v", mech, ir, err)
		}
		var got []string
		for _, c := range tt.challenges {
			resp, err := a.Next([]byte(c), true)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got = append(got, string(resp))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: answers %q, want %q", tt.name, got, tt.want)
		}
		if _, err := a.Next([]byte("more?"), true); err == nil {
			t.Errorf("%s: a third challenge was answered", tt.name)
		}
		if resp, err := a.Next([]byte("2.7.0 ok"), false); resp != nil || err != nil {
			t.Errorf("%s: final Next = %q %v", tt.name, resp, err)
		}
	}
}

func TestNewSMTPError(t *testing.T) {
	t.Parallel()
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }
	tests := []struct {
		name      string
		in        textproto.Error
		recipient string
		want      SMTPError
		wantText  string
	}{
		{
			"enhanced code", textproto.Error{Code: 550, Msg: "5.1.1 no such user"}, "bob@example.com",
			SMTPError{Command: "RCPT", Recipient: "bob@example.com", Code: 550, EnhancedCode: "5.1.1", Message: "no such user"},
			"sendloop/smtp: RCPT TO:<bob@example.com> rejected: 550 5.1.1 no such user",
		},
		{
			"no enhanced code", textproto.Error{Code: 451, Msg: "try later"}, "",
			SMTPError{Command: "RCPT", Code: 451, Message: "try later"},
			"sendloop/smtp: RCPT rejected: 451 try later",
		},
		{
			"multi-line and redaction", textproto.Error{Code: 535, Msg: "5.7.8 bad\n5.7.8 password hunter2"}, "",
			SMTPError{Command: "RCPT", Code: 535, EnhancedCode: "5.7.8", Message: "bad\npassword [REDACTED]"},
			"sendloop/smtp: RCPT rejected: 535 5.7.8 bad; password [REDACTED]",
		},
		{
			"not an enhanced code", textproto.Error{Code: 554, Msg: "1.2.3 nope"}, "",
			SMTPError{Command: "RCPT", Code: 554, Message: "1.2.3 nope"},
			"sendloop/smtp: RCPT rejected: 554 1.2.3 nope",
		},
	}
	for _, tt := range tests {
		got := newSMTPError("RCPT", tt.recipient, &tt.in, redact)
		if *got != tt.want || got.Error() != tt.wantText {
			t.Errorf("%s: got %+v %q, want %+v %q", tt.name, *got, got.Error(), tt.want, tt.wantText)
		}
	}
}

func TestRedactedErrorKeepsTheCauseForIs(t *testing.T) {
	t.Parallel()
	r := &Relay{username: "u", password: "pa55word"}
	err := r.redact(fmt.Errorf("server said pa55word: %w", context.DeadlineExceeded))
	if strings.Contains(err.Error(), "pa55word") {
		t.Fatalf("password in %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cause lost: %v", err)
	}
}

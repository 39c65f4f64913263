package smtp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	gosmtp "github.com/emersion/go-smtp"
)

func TestChooseAuth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		offered, mech, want string
	}{
		{"PLAIN LOGIN", "", "PLAIN"},
		{"LOGIN PLAIN", "", "PLAIN"},
		{"CRAM-MD5 login", "", "LOGIN"},
		{"plain", "", "PLAIN"},
		{"PLAIN LOGIN", "login", "LOGIN"},
		{"PLAIN", "LOGIN", ""},
		{"CRAM-MD5 XOAUTH2", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		_, mech, err := chooseAuth(tt.offered, Auth{Username: "u", Password: "p", Mechanism: tt.mech})
		if mech != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("chooseAuth(%q, %q) = %q, %v; want %q", tt.offered, tt.mech, mech, err, tt.want)
		}
		if err != nil && !errors.Is(err, ErrNoAuthMechanism) {
			t.Errorf("chooseAuth(%q) error %v does not match ErrNoAuthMechanism", tt.offered, err)
		}
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
	for _, tt := range tests {
		a := &loginClient{username: "u", password: "p"}
		if mech, ir, err := a.Start(); mech != "LOGIN" || ir != nil || err != nil {
			t.Fatalf("Start = %q %q %v", mech, ir, err)
		}
		var got []string
		for _, c := range tt.challenges {
			resp, err := a.Next([]byte(c))
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got = append(got, string(resp))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: answers %q, want %q", tt.name, got, tt.want)
		}
		if _, err := a.Next([]byte("more?")); err == nil {
			t.Errorf("%s: a third challenge was answered", tt.name)
		}
	}
}

func TestNewReplyError(t *testing.T) {
	t.Parallel()
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }
	tests := []struct {
		name          string
		in            gosmtp.SMTPError
		recipient     string
		want          ReplyError
		wantText      string
		wantTemporary bool
	}{
		{
			"enhanced code", gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "no such user"}, "bob@example.com",
			ReplyError{Command: "RCPT", Recipient: "bob@example.com", Code: 550, EnhancedCode: "5.1.1", Message: "no such user"},
			"sendloop/smtp: RCPT TO:<bob@example.com> rejected: 550 5.1.1 no such user", false,
		},
		{
			"no enhanced code", gosmtp.SMTPError{Code: 451, Message: "try later"}, "",
			ReplyError{Command: "RCPT", Code: 451, Message: "try later"},
			"sendloop/smtp: RCPT rejected: 451 try later", true,
		},
		{
			"code left in the text, multi-line and redaction", gosmtp.SMTPError{Code: 535, Message: "5.7.8 bad\n5.7.8 password hunter2"}, "",
			ReplyError{Command: "RCPT", Code: 535, EnhancedCode: "5.7.8", Message: "bad\npassword [REDACTED]"},
			"sendloop/smtp: RCPT rejected: 535 5.7.8 bad; password [REDACTED]", false,
		},
		{
			"not an enhanced code", gosmtp.SMTPError{Code: 554, Message: "1.2.3 nope"}, "",
			ReplyError{Command: "RCPT", Code: 554, Message: "1.2.3 nope"},
			"sendloop/smtp: RCPT rejected: 554 1.2.3 nope", false,
		},
	}
	for _, tt := range tests {
		got := newReplyError("RCPT", tt.recipient, &tt.in, redact)
		if *got != tt.want || got.Error() != tt.wantText {
			t.Errorf("%s: got %+v %q, want %+v %q", tt.name, *got, got.Error(), tt.want, tt.wantText)
		}
		var err error = got
		if errors.Is(err, ErrTemporary) != tt.wantTemporary || errors.Is(err, ErrPermanent) == tt.wantTemporary {
			t.Errorf("%s: Is(ErrTemporary) = %v, Is(ErrPermanent) = %v", tt.name, errors.Is(err, ErrTemporary), errors.Is(err, ErrPermanent))
		}
	}
}

func TestRedactedErrorKeepsTheCauseForIs(t *testing.T) {
	t.Parallel()
	r := &Relay{auth: Auth{Username: "u", Password: "pa55word"}}
	err := r.redact(fmt.Errorf("server said pa55word: %w", context.DeadlineExceeded))
	if strings.Contains(err.Error(), "pa55word") {
		t.Fatalf("password in %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cause lost: %v", err)
	}
}

func TestParseReply(t *testing.T) {
	t.Parallel()
	got := parseReply("2.0.0 Ok: queued as 4Bc9X", func(s string) string { return s })
	want := Reply{Code: 250, EnhancedCode: "2.0.0", Message: "Ok: queued as 4Bc9X"}
	if got != want || got.String() != "250 2.0.0 Ok: queued as 4Bc9X" {
		t.Errorf("parseReply = %+v %q", got, got)
	}
}

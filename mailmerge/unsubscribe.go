package mailmerge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// UnsubscribeError is Send's refusal, before the first message, of a send to more than one
// recipient without a one-click unsubscription naming its recipient: since 2024 Gmail and
// Yahoo require of bulk senders a List-Unsubscribe https URL and List-Unsubscribe-Post
// (RFC 8058), and the POST carries nothing but the URL, so the URL must hold a tag.
// Options.NoUnsubscribe says the mail needs none (transactional notices).
type UnsubscribeError struct {
	// Missing says what the template lacks, one sentence each: "a List-Unsubscribe https
	// URL holding a tag", "List-Unsubscribe-Post (ListUnsubscribeOneClick)".
	Missing []string
}

// Error implements the error interface.
func (e *UnsubscribeError) Error() string {
	return "mailmerge: a send to more than one recipient needs a one-click unsubscription: the template has no " + strings.Join(e.Missing, " and no ")
}

// ErrUnsubscribe is matched by an *UnsubscribeError.
var ErrUnsubscribe = errors.New("mailmerge: a bulk send needs a one-click unsubscription")

// Is matches ErrUnsubscribe.
func (e *UnsubscribeError) Is(target error) bool { return target == ErrUnsubscribe }

// Missing strings of an UnsubscribeError.
const (
	MissingUnsubscribeURL = "List-Unsubscribe https URL holding a tag (so that it names its recipient)"
	MissingOneClick       = "List-Unsubscribe-Post: List-Unsubscribe=One-Click (ListUnsubscribeOneClick)"
)

// unsubscribeMissing returns what the template lacks for a one-click unsubscription.
func (j *Job) unsubscribeMissing() []string {
	if j.noUnsubscribe {
		return nil
	}
	var missing []string
	named := false
	for _, p := range j.parts {
		named = named || p.kind == partURL && len(p.tags) > 0 && strings.HasPrefix(strings.ToLower(p.src), "https://")
	}
	if !named {
		missing = append(missing, MissingUnsubscribeURL)
	}
	if !j.tmpl.ListUnsubscribeOneClick {
		missing = append(missing, MissingOneClick)
	}
	return missing
}

// CheckUnsubscribe returns an *UnsubscribeError when the template lacks a one-click
// unsubscription naming its recipient and the source has more than one row, unless
// Options.NoUnsubscribe. It reads rows only when the template lacks it, and at most two.
func (j *Job) CheckUnsubscribe(ctx context.Context) error {
	missing := j.unsubscribeMissing()
	if len(missing) == 0 {
		return nil
	}
	n := 0
	for row, err := range j.src.Rows(ctx) {
		if err != nil {
			return err
		}
		if row.Reject == "" {
			n++
		}
		if n > 1 {
			return &UnsubscribeError{Missing: missing}
		}
	}
	return ctx.Err()
}

// badUnsubscribeURL returns why a rendered https List-Unsubscribe URL cannot be used, or "".
func badUnsubscribeURL(u string) string {
	if !strings.HasPrefix(strings.ToLower(u), "https:") {
		return ""
	}
	p, err := url.Parse(u)
	switch {
	case err != nil:
		return fmt.Sprintf("List-Unsubscribe URL does not parse: %v", errors.Unwrap(err))
	case !p.IsAbs() || p.Host == "":
		return fmt.Sprintf("List-Unsubscribe URL %q is not an absolute https URL", u)
	}
	return ""
}

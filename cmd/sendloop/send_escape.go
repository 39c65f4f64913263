package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sendloop/sendloop/mailmerge"
)

// escapeRefusal is the message of a template whose {{NAME}} in the subject or text part
// would show the reader an escaped value: every tag, its rows and the fix. Other errors
// (a read error of the file) pass as input errors.
func escapeRefusal(err error) error {
	if err == nil {
		return nil
	}
	var ee *mailmerge.EscapeError
	if !errors.As(err, &ee) {
		return inputf("%s", cliMessage(err))
	}
	var b strings.Builder
	for _, p := range ee.Problems {
		b.WriteString(p.String())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "nothing was sent (--keep-escaping NAME keeps the escaping of a tag that wants it)")
	return inputf("%s", b.String())
}

// unsubscribeRefusal is the message of a send to many rows without a one-click
// unsubscription: what is missing and the flags to add.
func unsubscribeRefusal(err error) error {
	if err == nil {
		return nil
	}
	var ue *mailmerge.UnsubscribeError
	if !errors.As(err, &ue) {
		return inputf("%s", cliMessage(err))
	}
	return inputf("a send to more than one recipient needs a one-click unsubscription that names its recipient (Gmail and Yahoo require it of bulk senders, RFC 8058): add --list-unsubscribe 'https://example.com/u?e={{email}}' (a URL of yours holding a column) and --one-click; for transactional mail, which needs none, --no-unsubscribe\nnothing was sent")
}

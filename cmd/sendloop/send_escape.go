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

// writeDryRunCounts says what the run would do with the rows, before the relay: how many it
// would send (or a journal skip) and reject, and the first rejected lines with the reasons
// the real run prints.
func writeDryRunCounts(b *strings.Builder, check *mailmerge.CheckResult) {
	fmt.Fprintf(b, "%s read: %d would be sent, %d rejected, %d suppressed, %d not subscribed",
		plural(check.Rows, "row"), check.Sendable, check.Rejected, check.Suppressed, check.NotSubscribed)
	if n := check.SkippedSent + check.SkippedRefused + check.SkippedUnknown; n > 0 {
		fmt.Fprintf(b, ", %d skipped by the journal (%d already sent, %d refused before, %d unknown before)",
			n, check.SkippedSent, check.SkippedRefused, check.SkippedUnknown)
	}
	if check.OtherShards > 0 {
		fmt.Fprintf(b, ", %d of other shards", check.OtherShards)
	}
	b.WriteString("\n")
	for _, r := range check.FirstSuppressed {
		if r.Line > 0 {
			fmt.Fprintf(b, "  line %d %s: %s: %s\n", r.Line, r.Address, r.Fate, r.Reason)
		} else {
			fmt.Fprintf(b, "  %s: %s: %s\n", r.Address, r.Fate, r.Reason)
		}
	}
	if n := check.Suppressed + check.NotSubscribed - len(check.FirstSuppressed); n > 0 {
		fmt.Fprintf(b, "  and %s more not sent for who they are\n", plural(n, "row"))
	}
	if check.AudienceUnread {
		fmt.Fprintf(b, "The suppression list was not read: %s is not set, and the real run needs it.\n", envAPIKey)
	}
	for _, r := range check.FirstRejected {
		if r.Line > 0 {
			fmt.Fprintf(b, "  line %d %s: %s\n", r.Line, r.Address, r.Reason)
		} else {
			fmt.Fprintf(b, "  %s: %s\n", r.Address, r.Reason)
		}
	}
	if n := check.Rejected - len(check.FirstRejected); n > 0 {
		fmt.Fprintf(b, "  and %s more\n", plural(n, "row"))
	}
}

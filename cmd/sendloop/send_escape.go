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

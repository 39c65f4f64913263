// Package mailmerge sends one message per recipient of a list (a CSV file, a function, or
// rows in memory) through the Sendloop relay, and checks everything it can before the first
// message leaves: it is the library under `sendloop send --recipients`, so that a Go program
// and the CLI send the same messages and share their journals.
//
//	src, err := mailmerge.File("list.csv", mailmerge.FileOptions{})
//	job, err := mailmerge.New(src, &smtp.Message{From: "news@example.com",
//		Subject: "Hi {{{FIRST}}}", HTML: html}, mailmerge.Options{})
//	// job.Notes() lists the %…% that are not tags (percent-encodings, %…% inside URLs).
//	res, err := job.Send(ctx, relay, mailmerge.SendOptions{Journal: "news.journal"})
//
// # Decisions
//
// Every tag is checked before anything is sent. New parses the subject, the text and HTML
// bodies, every extra header and every List-Unsubscribe value with package personalize,
// the parser the preview renders with, so that the check and the rendering agree on what a
// tag is. Every {{NAME}}, {{{NAME}}}, {{& NAME}}, section and inverted-section name must
// name a column of the source or a constant variable (Options.Vars), and so must every
// %NAME% whose NAME starts with a letter or '_', is not two hex digits, and does not stand
// inside a URL (an href or src value, a bare http(s) or mailto URL, a List-Unsubscribe
// value). The other %…% candidates are not errors: Notes lists them. A part that does not
// parse, or a tag that names nothing, makes New fail with a *CheckError naming the part,
// the line and the nearest name; Options.AllowTags keeps a tag meant to stay as written.
//
// Empty values reject rows. A row whose value is empty (or missing) for a tag interpolated
// outside a section that tests the same name is rejected with its line and the tag, unless
// Options.Defaults gives a fallback or Options.AllowEmpty accepts it. Constant variables
// are taken as given, even empty.
//
// The relay renders the subject and bodies (X-SL-Merge-Vars holds every value under both
// NAME and %NAME%); this package renders the extra headers and List-Unsubscribe itself,
// where only {{NAME}}, {{{NAME}}}, {{& NAME}} and %NAME% are tags: values go in as written
// (URL-encoded in List-Unsubscribe), and a section there is refused by the check.
//
// Escaping is checked like spelling. The relay HTML-escapes a {{NAME}} value, as Mustache
// says, which only the HTML part wants: in the subject and the text part the reader would
// see "O&#39;Brien &amp; Sons". Before the first message Send reads the source once more
// (Job.CheckEscaping) and fails with an *EscapeError for a {{NAME}} there whose value in
// any row holds & < > " or ', naming the tag, the part, the rows and the fix ({{{NAME}}}
// or %NAME%); Options.KeepEscaping keeps the escaping of a tag that wants it, and does not
// enter the binding.
//
// A column named Name (any case) gives each row's To its display name.
//
// The journal's binding (Job.Binding) is composed here, once: TemplateFingerprint of
// the template with X-Merge-Vars, X-Custom-Args, the sorted X-Var-NAME constants and, when
// given, the sorted X-Default-NAME fallbacks as pseudo-headers, and the shard. Without
// defaults it is byte for byte the binding of sendloop 0.3.0's `send --recipients`, whose
// journals resume. What changes a message enters it; what only changes the run
// (AllowEmpty, AllowTags, the relay's rate and connections, budgets) does not, so that
// raising a budget never refuses a rerun.
//
// The journal is a JournalStore: the file (OpenJournal, SendOptions.Journal), whose format
// is sendloop 0.4.0's, or any other store (SendOptions.JournalStore, such as package
// mailmerge/pgjournal's PostgreSQL journal, which every runner of a send shares). Send
// claims a row in the store, durably, before its message's final dot (through the relay's
// per-message hook, smtp.SendAllHooked) and records its outcome before reporting it, so
// that a run killed at any moment sends no row twice: a rerun skips the rows recorded sent
// or refused and lists those of unknown outcome, or left in flight, without sending them.
// A store records rows decided without sending too (JournalStore.Decide: suppressed, not
// subscribed), which a rerun reports with the same fate. Package mailmerge/journaltest is
// the suite every store passes. Shard(address, n) splits a list as the CLI's --shard does.
//
// The end of Send's context starts no new row; SendOptions.Stop (a job.Stop) says how the
// messages in flight end: after its grace period, or at once when its Work context ends.
//
// A row's fate is one of sent, refused, unknown, deferred, skipped (and why), rejected (and
// why) or not attempted, and Result's counts add up to the source's rows. Unknown is never
// a reject: a row whose outcome is unknown is not sent again (unless ResendUnknown) and is
// counted apart. A duplicate address is rejected as "duplicate of line N". The rows a
// result lists are kept in memory up to a bound and beyond it in a temporary file, so that
// memory does not grow with the source.
//
// Rate and concurrency are the relay's (smtp.WithRate, smtp.WithMaxConnections): Send
// takes the *smtp.Relay it sends through. Budgets judge a run and never stop it midway:
// SendOptions.MaxRejects bounds Result.Rejects (rejected or refused rows, in this run or
// an earlier one) and MaxUnknown bounds Result.Unknowns (rows of unknown outcome), the
// rows `--max-rejects` and `--max-unknown` count; over either, Send returns the whole
// result with a *job.BudgetError. The zero job.Budget allows none, as the CLI's default 0
// does; a program that judges the result itself passes job.Unlimited().
//
// Duplicates are found before a row's values are checked: a row rejected for an empty
// value still holds its address, and a later row of it is "duplicate of line N" in Send,
// Check and the preview alike.
//
// # Who may be mailed
//
// A send reaches only the people who may be mailed, decided before the first message as
// the tags are. Send and Check read, once per run, the account's global suppression list
// (one suppression.list.getlist) and, with Options.ListID, the list's own suppression
// entries and its members' status. A suppressed row gets the fate job.Suppressed; with a
// list, a row whose address is not a Subscribed member (not in the list, unsubscribed,
// hard-bounced, confirmation pending) gets job.NotSubscribed; each with its reason, never
// sent, listed apart in Result and not counted against MaxRejects. Addresses compare as
// the service compares them: without regard to case. No option sends to a suppressed
// address; Options.IncludeNotSubscribed, for mail that is not marketing, sends to a list's
// other members.
//
// A file sent with a list is checked against the list at a cost that follows the
// smaller side: Send reads the file's addresses once (kept as 128-bit hashes, so memory
// grows with the file, not the list), then looks up each address (subscriber.get) when
// there are at most 200 of them and the list has more pages of 100 members than that, and
// walks the list's members otherwise. OpenList sends to a list's members themselves, page
// by page, keyed by subscriber ID in the journal.
//
// A send to more than one recipient needs the API (Options.API): without it Send and
// Check fail with ErrNoAPI before the first message, for a bulk send that cannot read the
// suppression list must not guess. A rerun reads the lists again, so an address
// suppressed between two runs is not sent.
package mailmerge

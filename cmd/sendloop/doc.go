// Command sendloop is the command-line tool of sendloop-go, for CI jobs and scripts: it
// keeps Sendloop subscriber lists in step with CSV files, exports them, sends mail through
// the SMTP relay, makes raw API calls, shows reports and serves a local fake of the service.
//
//	go install github.com/go-sendloop/sendloop/cmd/sendloop@latest
//
// # Usage
//
//	sendloop [global flags] <command> [flags] [arguments]
//
// Global flags come before the command, the command's flags after it:
// `sendloop --json sync --list 12 --csv subscribers.csv`. `sendloop help`, `sendloop -h`
// and `sendloop help <command>` (or `sendloop <command> -h`) print the help on stdout.
// Flags take one dash or two.
//
// Global flags:
//
//	--json         machine-readable output: JSON on stdout
//	--fake         run against an in-process fake of the service holding the demo data below
//	--quiet        no progress and no notes on stderr (errors are still printed)
//	--verbose      log every API request (command, attempt, status, duration; never a body
//	               or a key) and SMTP step to stderr
//	--timeout DUR  give up after DUR (e.g. 30s, 10m); default: no limit
//	--version      print the version and exit
//
// # Commands
//
//	sync    --list ID --csv FILE [--dry-run] [--unsubscribe-missing] [--rejects FILE]
//	        [--batch-size N] [--concurrency N]
//	        keep a list in step with a CSV file
//	export  --list ID [--segment ID] [--format csv|json]
//	        stream a list's subscribers to stdout
//	send    --from ADDR --to ADDR --subject TEXT [--text FILE|-] [--html FILE|-]
//	        [--merge-vars JSON] [--custom-args JSON] [--tags a,b]
//	        [--track-opens] [--track-clicks] [--track-ga]
//	        send a message through the SMTP relay
//	call    [--format json|xml|php] COMMAND [key=value ...]
//	        send any v3 command and print its answer, JSON pretty-printed
//	lists   show the account's lists
//	report  campaign ID | list ID
//	        show a campaign's (report.campaign.overall) or a list's overall report
//	fake    [--addr 127.0.0.1:8080] [--smtp-addr 127.0.0.1:2525] [--empty] [--ca-file FILE]
//	        serve the fake (HTTP API and SMTP relay) until SIGINT or SIGTERM
//
// `sendloop help <command>` describes each one in full.
//
// # Environment
//
//	SENDLOOP_API_KEY        the API key; required unless --fake. There is no flag for it, so
//	                        that it stays out of shell histories and process lists.
//	SENDLOOP_BASE_URL       the account's host, e.g. https://acme.sendloop.com; default
//	                        https://app.sendloop.com. Plain http is refused except on loopback.
//	SENDLOOP_SMTP_HOST      the relay, for send
//	SENDLOOP_SMTP_PORT      default 587
//	SENDLOOP_SMTP_USER      a sender address's relay user name
//	SENDLOOP_SMTP_PASSWORD  and password
//	SENDLOOP_SMTP_CA_FILE   optional: a PEM file of certificates to trust for the relay's
//	                        STARTTLS, besides the system's (sendloop fake writes one)
//
// # Exit status
//
//	0  success
//	1  failure: an API or relay error, an interruption, or a run that completed but rejected
//	   rows (sync), in a dry run too
//	2  usage or configuration error: an unknown command or flag, a missing or invalid flag
//	   value or argument, an unreadable input file, a CSV header that does not fit the list,
//	   an environment variable unset or invalid
//
// # Output
//
// Results go to stdout: aligned tables, or with --json one JSON document (export: JSON
// Lines). Records of the service (lists, reports, exported subscribers) keep the service's
// field names (ListID, EmailAddress, …); the tool's own documents (sync's plan and result,
// send's report, fake's settings) use lower-case snake_case names, fake's settings the
// environment variables' names. Errors, notes and progress go to stderr, always as text,
// each line prefixed with "sendloop: ".
//
// The API key and the relay password are never printed: the SDK removes them from its
// errors and logs, and call replaces the key with [REDACTED] should an answer hold it. The
// one exception is the fake command, whose purpose is to print the fake's own credentials.
//
// # The fake
//
// --fake runs any command against sendlooptest, the SDK's in-memory fake, started in the
// process and gone when the command ends (each invocation starts afresh). It holds:
//
//   - list 1 "Demo" (single opt-in) with the custom fields 1 "First name" and 2 "Plan";
//   - its subscribers ann@example.com (Ann, pro) and bob@example.com (Bob, free), and
//     carol@example.com (Carol, free), who unsubscribed;
//   - campaign 1 "Welcome" to list 1, delivered to Ann and Bob: Ann opened it and clicked
//     its link, Bob opened it.
//
// With --fake, send goes to a fake relay started in the process (trusted through its own
// certificate authority) and prints the message it captured, merge variables rendered.
//
// `sendloop fake` serves the same fake (with the same data unless --empty) on loopback
// ports for local development, and prints export lines a shell can source:
//
//	sendloop fake > fake.env &
//	. ./fake.env && sendloop lists
//
// # sync
//
// sync reads the list (list.get with its custom fields), its members (subscriber.browse,
// every state) and the list's and the global suppression lists, reads the file once to plan,
// prints the plan, and applies it: additions through subscriber.import (ImportAll, in
// batches of --batch-size, --concurrency at a time), then updates through subscriber.update
// (by SubscriberID, changed fields only), then, with --unsubscribe-missing, unsubscriptions
// through the legacy API's Subscriber.Unsubscribe.
//
// Memory holds the list's members (their addresses and the values of the fields the file
// maps) and 8 bytes per new address of the file, for the duplicate check; the rows are
// streamed, never held. The file is read once to plan, once more (only when it repeats
// addresses new to the list) to tell repetitions from hash collisions exactly, once to
// apply, and once more only when the service refused rows, to find their lines.
//
// # Decisions where the issue is silent
//
//   - Unsubscriptions use the legacy Subscriber.Unsubscribe, which takes the list's ID: the
//     v3 subscriber.unsubscribe has no ListID and would unsubscribe the address from every
//     list of the account. UnsubscriptionIP is sent as 0.0.0.0, the service's "unset"
//     address: no subscriber made the request. An address already gone from the list
//     (legacy code 8) counts as unsubscribed.
//   - sync refuses to unsubscribe when the file names no subscriber at all (an empty,
//     truncated or entirely invalid file must not empty the list): exit code 1. A member
//     whose row is rejected but still names the address (a wrong number of fields, invalid
//     UTF-8 in another field) is not unsubscribed either: a stray comma must not unsubscribe
//     anyone. And when any record cannot be parsed at all (a stray quote; a quoted field
//     left open swallows the lines after it), the addresses it hides are unknown, so sync
//     with --unsubscribe-missing refuses to run, dry run included: exit code 1.
//   - Rows the service refused without a line to show for them (subscriber.import counts
//     only totals) fail the run too: exit code 1, with a note saying how many.
//   - Members who unsubscribed are not subscribed again (subscriber.import would), and
//     addresses on the list's or the global suppression list are not added: both are counted
//     as skipped, not rejected, and do not change the exit code. Members pending a double
//     opt-in confirmation count as members: updated, never re-added, unsubscribed when
//     missing.
//   - Additions go through subscriber.import, which subscribes at once without a
//     confirmation email even on a double opt-in list; sync says so in a note.
//   - Header names are matched case-insensitively, trimmed: EmailAddress, "Email Address" or
//     Email for the address; CustomField<id> or the field's name for a custom field (a name
//     shared by two fields must be given by key). A column given twice, an unnamed column,
//     an unknown column or no address column is a usage error that names them all.
//   - The read-only columns export writes (SubscriberID, SubscriptionStatus, BounceType,
//     SubscriptionDate, SubscriptionIP, UnsubscriptionDate, UnsubscriptionIP, OptInDate)
//     are accepted and ignored, so that an export syncs back; with a SubscriptionStatus
//     column only the rows whose status is Subscribed count, and the others are skipped:
//     they add, update and unsubscribe no one (a copy never resubscribes an opt-out, and a
//     list synced with its own export plans nothing).
//   - The delimiter is whichever of comma, semicolon and tab occurs most often outside
//     quotes in the header line (comma on a tie). The file must be UTF-8 (a byte-order mark
//     is skipped); a row holding invalid UTF-8 is rejected rather than sent garbled. Quotes
//     follow RFC 4180 strictly: a stray quote rejects the row (a quoted field left open runs
//     to the end of the file, as in every CSV reader, and the reason names the lines).
//   - Values are taken as written, spaces included; an empty cell empties the field of a
//     member, and is not sent for a new address. Addresses are trimmed, checked as the SDK
//     checks them, and compared case-insensitively; the first row of an address wins, later
//     ones are rejected as duplicates naming its line.
//   - Rejects: `line,email,reason`, in file order for the rows refused before sending, then
//     the rows the service refused (import or update). The file gets its header even when
//     nothing is rejected, and may not be the CSV itself. Without --rejects the first 20
//     are printed on stderr. Unsubscriptions that fail are printed on stderr (they are no
//     row of the file) and make the exit code 1.
//   - A dry run reads the file twice too, to list its changes (additions in file order,
//     then updates, then unsubscriptions) and write the rejects; it never writes to the
//     service.
//   - Progress: on a terminal (stderr a character device), a bar redrawn ten times a second
//     and erased when done, messages printed above it; elsewhere a line every 5 seconds
//     during a long step, and its final state once it ends. --quiet silences both.
//   - export writes every subscriber in every state, values as the service sends them
//     ('0000-00-00' for an unset date). Custom-field columns are named as in the list, or
//     CustomField<id> when the name is empty, shared, or one of the record's own columns.
//     --format json writes JSON Lines (one object per line, streamable, jq-friendly) with
//     the CSV's keys in the CSV's order, SubscriberID a number; it is the default with
//     --json.
//   - call: parameters are key=value (repeated keys send every value; bracket notation is
//     passed as is); an APIKey parameter is refused. Non-JSON formats print the body as is.
//   - report also shows `report list ID` (report.list.overall). Its table shows the
//     statistics in the service's order, an empty value as "-".
//   - send: --to may be repeated or comma-separated; --custom-args (X-SL-Custom-Args) is
//     offered beside the requested flags; a body may be a file or - (stdin, for one of the
//     two). Bad addresses or headers are usage errors. The relay's STARTTLS certificate is
//     verified against the system's roots plus SENDLOOP_SMTP_CA_FILE.
//   - fake: only loopback hosts (127.0.0.0/8, ::1, localhost) are accepted; port 0 picks a
//     free one. The relay's CA certificate is written to a temporary file removed on exit,
//     unless --ca-file names where to keep it. It logs the API commands it serves and the
//     messages its relay accepts; its state is lost when it stops. SIGINT and SIGTERM stop
//     it with exit code 0.
//   - Missing or invalid configuration (the key, the base URL, the relay settings) is a
//     usage error, exit code 2: a CI job tells a configuration problem from a failure.
//   - SIGINT and SIGTERM cancel any command; sync then prints what it did so far and exits
//     with 1.
package main

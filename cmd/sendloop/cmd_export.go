package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/listsync"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		args:    "--list ID [--segment ID] [--format csv|json] [--excel] [--concurrency N]",
		summary: "stream a list's subscribers as CSV or JSON lines",
		help: `
Streams every subscriber of a list (or of one of its segments), in every state, to stdout,
page by page (subscriber.browse), in the list's order. It asks for up to --concurrency
pages at once (4 by default; 1 reads one page after the other) and holds no more pages
than that in memory: over a real link each page costs a round trip, and pages in flight
side by side read a big list that many times faster. A service that answers 429 or 503
gets fewer calls at once until it stops pushing back.

The columns are EmailAddress, then the list's custom fields, named as in the list (or
CustomField<id> when a name is empty, shared by two fields or one of the record's own
columns), then SubscriberID, SubscriptionStatus, BounceType, SubscriptionDate,
SubscriptionIP, UnsubscriptionDate, UnsubscriptionIP and OptInDate. Values are written as
the service sends them ('0000-00-00' for an unset date).

--format csv (the default) writes a header row, then a comma-separated row per subscriber.
--format json (the default with the global --json) writes JSON Lines: one object per
subscriber and per line, the record's columns in snake_case (email_address,
subscriber_id, subscription_status, …) and the custom fields in a "custom_fields" object
keyed by their column names; subscriber_id is a number, every other value a string.

--excel makes the CSV safe to open in a spreadsheet: a UTF-8 byte-order mark (so that
Excel reads accents right), and every cell that starts with =, +, -, @, a tab or a
carriage return prefixed with a single quote, so that no cell runs as a formula (OWASP's
advice against CSV injection: a subscriber's name is anyone's input). The quote stays in
the data: sync the plain export, not the --excel one.

The CSV reads back into sync: sync ignores the record's own columns, and syncs only the
rows whose SubscriptionStatus is Subscribed. Progress is shown on a terminal.`,
		examples: `sendloop export --list 12 > list-12.csv
sendloop export --list 12 --excel > list-12-for-excel.csv
sendloop export --list 12 --format json | jq -r 'select(.custom_fields.Plan == "pro") | .email_address'`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			listID := fs.Int("list", 0, "the `ID` of the list to export (required)")
			segmentID := fs.Int("segment", 0, "export only the segment with this `ID`")
			format := fs.String("format", "", "the output `format`: csv or json (JSON Lines); default csv, json with --json")
			excel := fs.Bool("excel", false, "for spreadsheets: a UTF-8 byte-order mark, and no cell read as a formula")
			concurrency := fs.Int("concurrency", 4, "ask for up to `N` pages at once")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("export", "unexpected argument %q", args[0])
				}
				if *listID <= 0 {
					return usagef("export", "--list ID is required and must be positive")
				}
				if *segmentID < 0 {
					return usagef("export", "--segment must be positive")
				}
				if *concurrency < 1 {
					return usagef("export", "--concurrency must be at least 1")
				}
				f := strings.ToLower(*format)
				if f == "" {
					f = "csv"
					if a.json {
						f = "json"
					}
				}
				if f != "csv" && f != "json" {
					return usagef("export", "--format must be csv or json, not %q", *format)
				}
				if *excel && f != "csv" {
					return usagef("export", "--excel writes CSV: drop --format json (or the global --json, or add --format csv)")
				}
				c, err := a.client(ctx)
				if err != nil {
					return err
				}
				list, err := c.Lists.Get(ctx, *listID, sendloop.ListGetParams{CustomFields: true})
				if err != nil {
					return err
				}
				fields := listsync.ListFields(list)
				columns := listsync.ExportHeader(fields)
				prog, endProgress := a.startProgress()
				defer endProgress()
				what := fmt.Sprintf("list %d", *listID)
				if *segmentID > 0 {
					what = fmt.Sprintf("segment %d of list %d", *segmentID, *listID)
				}
				prog.start(0, func(done, _ int64) string {
					return fmt.Sprintf("exporting %s: %s", what, plural(int(done), "subscriber"))
				})

				out := bufio.NewWriterSize(a.stdout, 64<<10)
				var cw *csv.Writer
				if f == "csv" {
					if *excel {
						if _, err := out.Write(utf8BOM); err != nil {
							return err
						}
					}
					cw = csv.NewWriter(out)
					header := columns
					if *excel {
						// The custom fields' names are anyone's input too.
						header = make([]string, len(columns))
						for i, v := range columns {
							header[i] = neutralizeCell(v)
						}
					}
					if err := cw.Write(header); err != nil {
						return err
					}
				}
				jsonKeys := exportJSONKeys(columns, len(fields))
				n := 0
				record := make([]string, len(columns))
				var line []byte
				for sub, err := range c.Subscribers.BrowseIter(ctx, *listID, sendloop.SubscriberBrowseParams{SegmentID: *segmentID, Concurrency: *concurrency}) {
					if err != nil {
						flushExport(cw, out)
						return err
					}
					record = record[:0]
					record = append(record, sub.EmailAddress)
					for _, fld := range fields {
						record = append(record, sub.CustomFields[fld.ID])
					}
					record = append(record, strconv.Itoa(sub.SubscriberID), string(sub.SubscriptionStatus),
						string(sub.BounceType), sub.SubscriptionDate.String(), sub.SubscriptionIP,
						sub.UnsubscriptionDate.String(), sub.UnsubscriptionIP, sub.OptInDate.String())
					switch {
					case cw != nil && *excel:
						for i, v := range record {
							record[i] = neutralizeCell(v)
						}
						err = cw.Write(record)
					case cw != nil:
						err = cw.Write(record)
					default:
						line = appendJSONLine(line[:0], jsonKeys, record, len(fields))
						_, err = out.Write(line)
					}
					if err != nil {
						return err
					}
					n++
					prog.add(1)
				}
				if err := flushExport(cw, out); err != nil {
					return err
				}
				prog.finish()
				a.note("exported %s of %s", plural(n, "subscriber"), what)
				return nil
			}
		},
	}
}

func flushExport(cw *csv.Writer, out *bufio.Writer) error {
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	return out.Flush()
}

// utf8BOM starts an --excel export: Excel reads a CSV without it in the system's code page.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// neutralizeCell keeps a spreadsheet from reading a cell as a formula (OWASP, CSV
// injection): a cell that starts with =, +, -, @, a tab or a carriage return gets a leading
// single quote, which spreadsheets show as text.
func neutralizeCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// exportJSONKeys returns the JSON keys of the export's columns: the record's own in
// snake_case; the custom fields' (the nFields after the address) as named, for the
// "custom_fields" object.
func exportJSONKeys(columns []string, nFields int) []string {
	keys := make([]string, len(columns))
	for i, c := range columns {
		if i >= 1 && i <= nFields {
			keys[i] = c
		} else {
			keys[i] = snakeCase(c)
		}
	}
	return keys
}

// appendJSONLine appends the JSON object of an exported subscriber and a newline: the
// address, the nFields custom fields in a "custom_fields" object, then the record's other
// columns, subscriber_id (the first of them) written as a number.
func appendJSONLine(b []byte, keys, values []string, nFields int) []byte {
	b = append(b, '{')
	b = append(b, jsonString(keys[0])...)
	b = append(b, ':')
	b = append(b, jsonString(values[0])...)
	b = append(b, `,"custom_fields":{`...)
	for i := 1; i <= nFields; i++ {
		if i > 1 {
			b = append(b, ',')
		}
		b = append(b, jsonString(keys[i])...)
		b = append(b, ':')
		b = append(b, jsonString(values[i])...)
	}
	b = append(b, '}')
	for i := nFields + 1; i < len(keys); i++ {
		b = append(b, ',')
		b = append(b, jsonString(keys[i])...)
		b = append(b, ':')
		if i == nFields+1 {
			b = append(b, values[i]...)
		} else {
			b = append(b, jsonString(values[i])...)
		}
	}
	return append(b, '}', '\n')
}

package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/cmd/sendloop/internal/csvsync"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		args:    "--list ID [--segment ID] [--format csv|json]",
		summary: "stream a list's subscribers as CSV or JSON lines",
		help: `
Streams every subscriber of a list (or of one of its segments), in every state, to stdout,
page by page (subscriber.browse), holding one page in memory at a time.

The columns are EmailAddress, then the list's custom fields, named as in the list (or
CustomField<id> when a name is empty, shared by two fields or one of the record's own
columns), then SubscriberID, SubscriptionStatus, BounceType, SubscriptionDate,
SubscriptionIP, UnsubscriptionDate, UnsubscriptionIP and OptInDate. Values are written as
the service sends them ('0000-00-00' for an unset date).

--format csv (the default) writes a header row, then a comma-separated row per subscriber.
--format json (the default with the global --json) writes JSON Lines: one object per
subscriber and per line, with the same keys in the same order, SubscriberID a number and
every other value a string.

The CSV reads back into sync: sync ignores the record's own columns, and syncs only the
rows whose SubscriptionStatus is Subscribed.`,
		examples: `sendloop export --list 12 > list-12.csv
sendloop export --list 12 --format json | jq -r 'select(.Plan == "pro") | .EmailAddress'`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			listID := fs.Int("list", 0, "the `ID` of the list to export (required)")
			segmentID := fs.Int("segment", 0, "export only the segment with this `ID`")
			format := fs.String("format", "", "the output `format`: csv or json (JSON Lines); default csv, json with --json")
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
				c, err := a.client(ctx)
				if err != nil {
					return err
				}
				list, err := c.Lists.Get(ctx, *listID, sendloop.ListGetParams{CustomFields: true})
				if err != nil {
					return err
				}
				fields := listFields(list)
				columns := append([]string{csvsync.ColumnEmail}, csvsync.ColumnNames(fields)...)
				columns = append(columns, csvsync.ReadOnlyColumns...)
				out := bufio.NewWriterSize(a.stdout, 64<<10)
				var cw *csv.Writer
				if f == "csv" {
					cw = csv.NewWriter(out)
					if err := cw.Write(columns); err != nil {
						return err
					}
				}
				n := 0
				record := make([]string, len(columns))
				var line []byte
				for sub, err := range c.Subscribers.BrowseIter(ctx, *listID, sendloop.SubscriberBrowseParams{SegmentID: *segmentID}) {
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
					if cw != nil {
						err = cw.Write(record)
					} else {
						line = appendJSONLine(line[:0], columns, record, len(fields)+1)
						_, err = out.Write(line)
					}
					if err != nil {
						return err
					}
					n++
				}
				if err := flushExport(cw, out); err != nil {
					return err
				}
				a.note("exported %s of list %d", plural(n, "subscriber"), *listID)
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

// appendJSONLine appends a JSON object of keys and values, the value at numberAt written
// as a number, and a newline.
func appendJSONLine(b []byte, keys, values []string, numberAt int) []byte {
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, jsonString(k)...)
		b = append(b, ':')
		if i == numberAt {
			b = append(b, values[i]...)
		} else {
			b = append(b, jsonString(values[i])...)
		}
	}
	return append(b, '}', '\n')
}

// listFields returns a list's custom fields for csvsync.
func listFields(l *sendloop.List) []csvsync.Field {
	out := make([]csvsync.Field, 0, len(l.CustomFields))
	for _, f := range l.CustomFields {
		out = append(out, csvsync.Field{ID: f.CustomFieldID, Name: f.FieldName})
	}
	return out
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
)

func listsCommand() *command {
	return &command{
		name:    "lists",
		summary: "show the account's lists",
		help: `
Shows every list of the account (list.getlist): its ID, name, opt-in mode, number of
active subscribers and creation time. With --json, an array of objects: list_id, name,
opt_in_mode, opt_out_scope, created_on, active_subscribers and subscription_activity (an
object of date to count).`,
		examples: `sendloop lists
sendloop lists --json | jq '.[] | select(.name == "Newsletter") | .list_id'`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return usagef("lists", "lists takes no arguments")
				}
				c, err := a.client(ctx)
				if err != nil {
					return err
				}
				lists, err := c.Lists.List(ctx)
				if err != nil {
					return err
				}
				if a.json {
					out := make([]orderedObject, 0, len(lists))
					for _, l := range lists {
						activity := orderedObject{}
						for _, d := range l.SubscriptionActivity {
							activity = append(activity, member{d.Date.String(), d.Count})
						}
						out = append(out, orderedObject{
							{"list_id", l.ListID}, {"name", l.Name}, {"opt_in_mode", string(l.OptInMode)},
							{"opt_out_scope", l.OptOutScope}, {"created_on", l.CreatedOn.String()},
							{"active_subscribers", l.ActiveSubscribers}, {"subscription_activity", activity},
						})
					}
					return writeJSON(a.stdout, out)
				}
				t := newTable(a.stdout, "ID", "NAME", "OPT-IN", "ACTIVE", "CREATED")
				for _, l := range lists {
					t.row(strconv.Itoa(l.ListID), l.Name, string(l.OptInMode), strconv.Itoa(l.ActiveSubscribers), l.CreatedOn.String())
				}
				return t.flush()
			}
		},
	}
}

func callCommand() *command {
	return &command{
		name:    "call",
		args:    "[--format json|xml|php] COMMAND [key=value ...]",
		summary: "send any v3 command and print its answer",
		help: `
Sends a raw v3 command (POST {base}/api/v3/COMMAND/json) with the given parameters and prints
the service's answer, JSON pretty-printed. Parameters are key=value pairs; a key given
twice sends both values, and array parameters use the service's bracket notation
(TargetListIDs[]=3, Fields[CustomField2]=pro). The API key is added from the environment:
an APIKey parameter is refused.

A failure answer (Success false) is printed on stderr as an error, exit code 1. The answer is
printed as the service sent it, except that the API key, should it appear, is replaced by
[REDACTED]. --format xml or php prints that format's body unchanged.`,
		examples: `sendloop call list.get ListID=12 GetCustomFields=1
sendloop call subscriber.search EmailAddress=ann@example.com
sendloop call campaign.create CampaignName=Hi FromName=Ann FromEmail=ann@example.com ReplyToName=Ann ReplyToEmail=ann@example.com Subject=Hi 'PlainContent=Hi! %Link:Unsubscribe%' 'TargetListIDs[]=12'`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			format := fs.String("format", "json", "the response `format`: json, xml or php")
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) == 0 {
					return usagef("call", "call needs a command name")
				}
				f := sendloop.Format(strings.ToLower(*format))
				if f != sendloop.FormatJSON && f != sendloop.FormatXML && f != sendloop.FormatPHP {
					return usagef("call", "--format must be json, xml or php, not %q", *format)
				}
				command, params := args[0], url.Values{}
				for _, arg := range args[1:] {
					key, value, ok := strings.Cut(arg, "=")
					if !ok || key == "" {
						return usagef("call", "parameter %q is not key=value", arg)
					}
					if strings.EqualFold(key, "APIKey") {
						return usagef("call", "the API key comes from %s, not from a parameter", envAPIKey)
					}
					params.Add(key, value)
				}
				c, err := a.client(ctx)
				if err != nil {
					return err
				}
				body, err := c.CallRaw(ctx, command, params, f)
				if err != nil {
					return err
				}
				if key := a.apiKey(ctx); key != "" {
					body = bytes.ReplaceAll(body, []byte(key), []byte("[REDACTED]"))
				}
				if f == sendloop.FormatJSON {
					var out bytes.Buffer
					if json.Indent(&out, body, "", "  ") == nil {
						body = out.Bytes()
					}
				}
				if len(body) > 0 && body[len(body)-1] != '\n' {
					body = append(body, '\n')
				}
				_, err = a.stdout.Write(body)
				return err
			}
		},
	}
}

func reportCommand() *command {
	return &command{
		name:    "report",
		args:    "campaign ID | list ID",
		summary: "show a campaign's or a list's overall report",
		help: `
'report campaign ID' shows a campaign's overall statistics (report.campaign.overall):
recipients, deliveries, unique opens and clicks with their ratios, the account's averages,
the campaign's performance against them, and spam complaints. 'report list ID' shows a
list's (report.list.overall). Ratios and rates are percentages, as the service computes
them. With --json, an object of the same statistics, the service's field names in
snake_case (total_recipients, unique_opens_ratio, …).`,
		examples: `sendloop report campaign 42
sendloop --json report list 12`,
		setup: func(fs *flag.FlagSet) func(context.Context, *app, []string) error {
			return func(ctx context.Context, a *app, args []string) error {
				if len(args) != 2 || (args[0] != "campaign" && args[0] != "list") {
					return usagef("report", "use 'report campaign ID' or 'report list ID'")
				}
				id, err := strconv.Atoi(args[1])
				if err != nil || id <= 0 {
					return usagef("report", "%s ID %q is not a positive number", args[0], args[1])
				}
				c, err := a.client(ctx)
				if err != nil {
					return err
				}
				var report any
				if args[0] == "campaign" {
					report, err = c.Reports.CampaignOverall(ctx, id)
				} else {
					report, err = c.Reports.ListOverall(ctx, id)
				}
				if err != nil {
					return err
				}
				metrics := structMembers(report)
				if a.json {
					keyed := make(orderedObject, len(metrics))
					for i, m := range metrics {
						keyed[i] = member{snakeCase(m.key), m.value}
					}
					return writeJSON(a.stdout, keyed)
				}
				t := newTable(a.stdout, "METRIC", "VALUE")
				for _, m := range metrics {
					t.row(m.key, formatValue(m.value))
				}
				return t.flush()
			}
		},
	}
}

// structMembers lists the exported fields of the struct v points to, in order.
func structMembers(v any) orderedObject {
	rv := reflect.Indirect(reflect.ValueOf(v))
	out := orderedObject{}
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Type().Field(i); f.IsExported() {
			out = append(out, member{f.Name, rv.Field(i).Interface()})
		}
	}
	return out
}

func formatValue(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		if v == "" {
			return "-"
		}
		return v
	}
	return fmt.Sprint(v)
}

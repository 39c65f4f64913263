package commands

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// golden holds every command name as the specification spells it, case included, by API.
// A constant spelt otherwise fails TestRegistryMatchesTheSpecification. The two data
// commands marked below are not in the specification's tables: the real service answers
// them.
var golden = map[API][]string{
	V3: {
		"account.info.update", "account.info.get",
		"list.create", "list.update", "list.get", "list.getlist", "list.settings.get", "list.settings.update",
		"subscriber.browse", "subscriber.get", "subscriber.import", "subscriber.search", "subscriber.subscribe",
		"subscriber.unsubscribe", "subscriber.update",
		"suppression.list.getlist", "suppression.list.get", "suppression.list.add",
		"campaign.create", "campaign.update", "campaign.delete",
		"campaign.get", // "the operation that returns one campaign", named after the other reads
		"export.unsubscriptions", "export.suppressionlist", "export.spamcomplaints", "export.bounces",
		"report.list.overall", "report.campaign.overall", "report.campaign.webbrowserviews",
		"report.campaign.unsubscriptions", "report.campaign.opens", "report.campaign.forwards",
		"report.campaign.openlocations", "report.campaign.emailclients", "report.campaign.bounces",
		"report.campaign.spamcomplaints",
		"data.campaign.unsubscriptions", "data.campaign.openlocations", "data.campaign.forwards",
		"data.campaign.browserviews", "data.campaign.bounces",
		"data.campaign.emailopens", "data.campaign.linkclicks", // seen on the service, not in the tables
		"System.SystemDate.Get", "system.timezones.Get",
	},
	Person: {"person.track", "person.get", "person.delete"},
	Legacy: {
		"Subscriber.Add", "Subscriber.Unsubscribe", "Chart.ListActivity", "Media.Upload", "Media.Browse",
		"Subscriber.Get", "Subscribers.Get", "Subscriber.Update", "Subscriber.Delete",
		"Report.Campaign.Advisory", "Report.Campaign.EmailPath", "Report.Campaign.OpensOverall",
		"Report.Campaign.OpensDetail", "Report.Campaign.ClicksOverall", "Report.Campaign.ClicksDetail",
		"Report.Campaign.UnsubscriptionsOverall", "Report.Campaign.UnsubscriptionsDetail",
		"Report.Campaign.BrowserViewsOverall", "Report.Campaign.BrowserViewsDetail",
		"Report.Campaign.ForwardsOverall", "Report.Campaign.ForwardsDetail", "Report.Campaign.BounceOverall",
		"Report.Campaign.BounceDetail", "Report.Campaign.SpamComplains",
		"Report.List.Advisory", "Report.List.Performance", "Report.List.BounceOverall",
		"Report.List.BounceDetails", "Report.List.Opens", "Report.List.Clicks", "Report.List.Forwards",
		"Report.List.BrowserViews", "Report.List.Activities", "Report.List.EmailServices",
	},
}

// goldenAddress holds the person operations' addresses as the specification gives them.
var goldenAddress = map[string]string{
	"person.track":  "POST /api/v4/person.json",
	"person.get":    "GET /api/v3/person.json",
	"person.delete": "GET /api/v3/person.json/",
}

func TestRegistryMatchesTheSpecification(t *testing.T) {
	t.Parallel()
	got := map[API][]string{}
	for _, spec := range All() {
		got[spec.API] = append(got[spec.API], spec.Name)
	}
	for api, want := range golden {
		if !slices.Equal(slices.Sorted(slices.Values(got[api])), slices.Sorted(slices.Values(want))) {
			t.Errorf("%v: the registry names\n%q\nthe specification\n%q", api, slices.Sorted(slices.Values(got[api])), slices.Sorted(slices.Values(want)))
		}
	}
	if len(got) != len(golden) {
		t.Errorf("the registry has APIs %v, the golden table %d", slices.Collect(maps.Keys(got)), len(golden))
	}
	for _, spec := range personSpecs {
		if addr := spec.Method + " " + spec.Path; addr != goldenAddress[spec.Name] {
			t.Errorf("%s: address %q, the specification gives %q", spec.Name, addr, goldenAddress[spec.Name])
		}
	}
}

// TestEveryEntryIsComplete holds each entry to the rules the code relies on: a retry class,
// an outcome rule for every write and none for a read, a read-back command that exists and
// reads, ID rules that are set, and no name twice within one client.
func TestEveryEntryIsComplete(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, spec := range All() {
		t.Run(spec.Name, func(t *testing.T) {
			switch spec.Class {
			case transport.Read, transport.Idempotent, transport.OneShot:
			default:
				t.Errorf("no retry class (%v)", spec.Class)
			}
			switch {
			case spec.Write() && spec.Outcome == 0:
				t.Error("a write without an outcome rule")
			case !spec.Write() && spec.Outcome != 0:
				t.Errorf("a read with the outcome rule %v", spec.Outcome)
			case spec.Class == transport.OneShot && spec.Outcome != Unknown:
				t.Errorf("a one-shot write whose outcome is %v, not unknown", spec.Outcome)
			case spec.Class == transport.Idempotent && spec.Outcome == Unknown:
				t.Error("an idempotent write whose outcome is unknown: it is retried")
			}
			if (spec.Outcome == ReadBack) != (spec.ReadBack != "") {
				t.Errorf("outcome %v with read-back %q", spec.Outcome, spec.ReadBack)
			}
			if spec.ReadBack != "" {
				if rb, ok := Lookup(spec.ReadBack); !ok || rb.Write() {
					t.Errorf("the read-back %q is no v3 read of the registry", spec.ReadBack)
				}
			}
			for _, id := range spec.IDs {
				if id.Name == "" || id.Rule < Required || id.Rule > Each {
					t.Errorf("ID %+v without a name or a rule", id)
				}
				if id.Rule == Required && spec.API != Legacy && !slices.Contains(spec.Required, id.Name) {
					t.Errorf("the required ID %s is not among the required parameters %v", id.Name, spec.Required)
				}
			}
			if (spec.API == Person) != (spec.Path != "") {
				t.Errorf("API %v with path %q", spec.API, spec.Path)
			}
			if spec.API == Person && spec.Method != http.MethodGet && spec.Method != http.MethodPost {
				t.Errorf("method %q", spec.Method)
			}
			if spec.CallOnly != (spec.API == Legacy && spec.Listed) {
				t.Error("only the legacy functions listed without detail are reached through Call alone")
			}
			if err := Check(spec.Name); err != nil {
				t.Error(err)
			}
		})
		key := spec.API.String()
		if spec.API == Person {
			key = V3.String()
		}
		key += " " + strings.ToLower(spec.Name)
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, spec := range All() {
		lookup := Lookup
		if spec.API == Legacy {
			lookup = LookupLegacy
		}
		for _, name := range []string{spec.Name, strings.ToUpper(spec.Name), strings.ToLower(spec.Name)} {
			if got, ok := lookup(name); !ok || got.Name != spec.Name {
				t.Errorf("lookup(%q) = %q, %v", name, got.Name, ok)
			}
		}
	}
	if spec, _ := Lookup(SubscriberGet); spec.API != V3 {
		t.Errorf("subscriber.get is the v3 command, not %v", spec.API)
	}
	if spec, _ := LookupLegacy(LegacySubscriberGet); spec.API != Legacy {
		t.Errorf("Subscriber.Get is the legacy function, not %v", spec.API)
	}
}

func TestClassOf(t *testing.T) {
	t.Parallel()
	tests := map[string]transport.Class{
		"list.create": transport.OneShot, "Campaign.Create": transport.OneShot,
		"customfield.add": transport.OneShot, "segment.create": transport.OneShot, "something.new": transport.OneShot,
		"suppression.list.add": transport.Idempotent, "subscriber.import": transport.Idempotent,
		"campaign.delete": transport.Idempotent, "list.settings.update": transport.Idempotent,
		"list.get": transport.Read, "list.getlist": transport.Read, "subscriber.browse": transport.Read,
		"report.campaign.opens": transport.Read, "System.SystemDate.Get": transport.Read, "export.bounces": transport.Read,
		"customfield.getlist": transport.Read, "segment.search": transport.Read,
	}
	for command, want := range tests {
		if got := ClassOf(command); got != want {
			t.Errorf("ClassOf(%q) = %v, want %v", command, got, want)
		}
	}
}

func TestLegacyClassOf(t *testing.T) {
	t.Parallel()
	tests := map[string]transport.Class{
		"Subscriber.Add": transport.Idempotent, "subscriber.unsubscribe": transport.Idempotent,
		"Subscriber.Update": transport.Idempotent, "Subscriber.Delete": transport.Idempotent,
		"Media.Upload": transport.OneShot, "Media.Browse": transport.Read, "Chart.ListActivity": transport.Read,
		"Report.List.Opens": transport.Read, "Subscribers.Get": transport.Read,
		// Names the registry does not know: reads by their name, anything else sent once.
		"Chart.Other": transport.Read, "Report.New.Thing": transport.Read, "Media.Get": transport.Read,
		"List.Browse": transport.Read, "List.Update": transport.OneShot, "Campaign.Delete": transport.OneShot,
		"Anything": transport.OneShot,
	}
	for command, want := range tests {
		if got := LegacyClassOf(command); got != want {
			t.Errorf("LegacyClassOf(%q) = %v, want %v", command, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"list.get": true, "System.SystemDate.Get": true, "custom_field.add2": true,
		"": false, "list get": false, "list.get/json": false, "list.get?x=1": false, "liste.çek": false,
	} {
		if err := Check(name); (err == nil) != ok {
			t.Errorf("Check(%q) = %v", name, err)
		}
	}
}

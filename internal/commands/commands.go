// Package commands is the one table of the commands the sendloop packages send to the v3
// API and the person operations: each one's spelling, retry class, address and required
// parameters. The root package's typed methods, Call and CallRaw, and sendlooptest's
// dispatch all read it.
package commands

import (
	"net/http"
	"strings"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// Spec is what is known of one command.
type Spec struct {
	// Name is the command as the specification spells it, e.g. "System.SystemDate.Get".
	Name string
	// Class is the retry class, decided from the command's effect in the specification.
	Class transport.Class
	// Method and Path override the v3 address, POST {base}/api/v3/<command>/<format>: the
	// person operations live elsewhere.
	Method, Path string
	// Required are the parameters the specification marks required (their absence is 105).
	Required []string
}

// The person operations, as named in errors, logs, the table and the fake.
const (
	PersonTrack  = "person.track"
	PersonGet    = "person.get"
	PersonDelete = "person.delete"
)

// table holds every command, keyed by its lower-case name.
var table = map[string]Spec{
	"account.info.get": {Name: "account.info.get", Class: transport.Read},
	// Setting fields to given values: a repeat sets the same values.
	"account.info.update": {Name: "account.info.update", Class: transport.Idempotent},

	// Each call makes a new list or campaign: a repeat would make a second one.
	"list.create":          {Name: "list.create", Class: transport.OneShot, Required: []string{"Name", "OptInMode"}},
	"list.update":          {Name: "list.update", Class: transport.Idempotent, Required: []string{"ListID"}},
	"list.get":             {Name: "list.get", Class: transport.Read, Required: []string{"ListID", "GetCustomFields"}},
	"list.getlist":         {Name: "list.getlist", Class: transport.Read},
	"list.settings.get":    {Name: "list.settings.get", Class: transport.Read, Required: []string{"ListID"}},
	"list.settings.update": {Name: "list.settings.update", Class: transport.Idempotent, Required: []string{"ListID"}},

	"subscriber.browse": {Name: "subscriber.browse", Class: transport.Read, Required: []string{"ListID"}},
	"subscriber.get":    {Name: "subscriber.get", Class: transport.Read, Required: []string{"ListID"}},
	"subscriber.search": {Name: "subscriber.search", Class: transport.Read, Required: []string{"EmailAddress"}},
	// Rows already in the list come back as duplicates.
	"subscriber.import": {Name: "subscriber.import", Class: transport.Idempotent, Required: []string{"ListID", "Subscribers"}},
	// A repeat is answered "already exists" (125) or "not subscribed" (127), which the typed
	// methods settle with a read-back (see ErrOutcomeUnknown).
	"subscriber.subscribe":   {Name: "subscriber.subscribe", Class: transport.Idempotent, Required: []string{"EmailAddress", "ListID", "SubscriptionIP"}},
	"subscriber.unsubscribe": {Name: "subscriber.unsubscribe", Class: transport.Idempotent, Required: []string{"EmailAddress"}},
	"subscriber.update":      {Name: "subscriber.update", Class: transport.Idempotent, Required: []string{"ListID"}},

	"suppression.list.getlist": {Name: "suppression.list.getlist", Class: transport.Read, Required: []string{"ListID"}},
	"suppression.list.get":     {Name: "suppression.list.get", Class: transport.Read, Required: []string{"EmailAddress"}},
	// An address already suppressed stays suppressed once.
	"suppression.list.add": {Name: "suppression.list.add", Class: transport.Idempotent, Required: []string{"ListID", "EmailAddress"}},

	"campaign.create": {Name: "campaign.create", Class: transport.OneShot},
	"campaign.get":    {Name: "campaign.get", Class: transport.Read, Required: []string{"CampaignID"}},
	"campaign.update": {Name: "campaign.update", Class: transport.Idempotent, Required: []string{"CampaignID"}},
	// A repeat is answered "not found" (106), settled with campaign.get.
	"campaign.delete": {Name: "campaign.delete", Class: transport.Idempotent, Required: []string{"CampaignID"}},

	"report.list.overall":             {Name: "report.list.overall", Class: transport.Read, Required: []string{"ListID"}},
	"report.campaign.overall":         {Name: "report.campaign.overall", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.webbrowserviews": {Name: "report.campaign.webbrowserviews", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.unsubscriptions": {Name: "report.campaign.unsubscriptions", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.opens":           {Name: "report.campaign.opens", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.forwards":        {Name: "report.campaign.forwards", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.openlocations":   {Name: "report.campaign.openlocations", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.emailclients":    {Name: "report.campaign.emailclients", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.bounces":         {Name: "report.campaign.bounces", Class: transport.Read, Required: []string{"CampaignID"}},
	"report.campaign.spamcomplaints":  {Name: "report.campaign.spamcomplaints", Class: transport.Read, Required: []string{"CampaignID"}},

	"data.campaign.unsubscriptions": {Name: "data.campaign.unsubscriptions", Class: transport.Read, Required: []string{"CampaignID"}},
	"data.campaign.openlocations":   {Name: "data.campaign.openlocations", Class: transport.Read, Required: []string{"CampaignID"}},
	"data.campaign.forwards":        {Name: "data.campaign.forwards", Class: transport.Read, Required: []string{"CampaignID"}},
	"data.campaign.browserviews":    {Name: "data.campaign.browserviews", Class: transport.Read, Required: []string{"CampaignID"}},
	// Seen on the real service, not in the specification's tables.
	"data.campaign.emailopens": {Name: "data.campaign.emailopens", Class: transport.Read, Required: []string{"CampaignID"}},
	"data.campaign.linkclicks": {Name: "data.campaign.linkclicks", Class: transport.Read, Required: []string{"CampaignID"}},
	"data.campaign.bounces":    {Name: "data.campaign.bounces", Class: transport.Read, Required: []string{"CampaignID"}},

	"export.unsubscriptions": {Name: "export.unsubscriptions", Class: transport.Read},
	"export.suppressionlist": {Name: "export.suppressionlist", Class: transport.Read},
	"export.spamcomplaints":  {Name: "export.spamcomplaints", Class: transport.Read},
	"export.bounces":         {Name: "export.bounces", Class: transport.Read, Required: []string{"BounceType"}},
	"system.systemdate.get":  {Name: "System.SystemDate.Get", Class: transport.Read},
	"system.timezones.get":   {Name: "system.timezones.Get", Class: transport.Read},

	// Each track records a session of the person: a repeat would record a second one.
	PersonTrack:  {Name: PersonTrack, Class: transport.OneShot, Method: http.MethodPost, Path: "/api/v4/person.json", Required: []string{"user_id", "email"}},
	PersonGet:    {Name: PersonGet, Class: transport.Read, Method: http.MethodGet, Path: "/api/v3/person.json", Required: []string{"user_id"}},
	PersonDelete: {Name: PersonDelete, Class: transport.Idempotent, Method: http.MethodGet, Path: "/api/v3/person.json/", Required: []string{"user_id"}},
}

// Lookup returns the command named name, in any case.
func Lookup(name string) (Spec, bool) {
	spec, ok := table[strings.ToLower(name)]
	return spec, ok
}

// All returns every command of the table.
func All() []Spec {
	all := make([]Spec, 0, len(table))
	for _, spec := range table {
		all = append(all, spec)
	}
	return all
}

package sendlooptest

import (
	"slices"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// timeZones is the fake's answer to system.timezones.Get.
var timeZones = []string{
	"Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos", "America/Anchorage", "America/Argentina/Buenos_Aires",
	"America/Bogota", "America/Chicago", "America/Denver", "America/Halifax", "America/Los_Angeles",
	"America/Mexico_City", "America/New_York", "America/Phoenix", "America/Sao_Paulo", "America/Toronto",
	"Asia/Bangkok", "Asia/Dubai", "Asia/Hong_Kong", "Asia/Istanbul", "Asia/Jakarta", "Asia/Kolkata",
	"Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Tokyo", "Atlantic/Reykjavik", "Australia/Adelaide",
	"Australia/Brisbane", "Australia/Perth", "Australia/Sydney", "Europe/Amsterdam", "Europe/Athens",
	"Europe/Berlin", "Europe/Dublin", "Europe/Istanbul", "Europe/Lisbon", "Europe/London", "Europe/Madrid",
	"Europe/Moscow", "Europe/Paris", "Europe/Rome", "Europe/Stockholm", "Europe/Warsaw", "Europe/Zurich",
	"Pacific/Auckland", "Pacific/Honolulu", "UTC",
}

func knownZone(name string) bool { return slices.Contains(timeZones, name) }

// systemTimeZone is the zone of the fake's clock.
const systemTimeZone = "UTC"

// systemHandlers are the handlers of system commands; dispatch pairs them with the command table.
var systemHandlers = map[string]handler{
	cmdtable.SystemSystemDateGet: func(c *call) (object, *apiError) {
		return object{{"SystemDate", c.now.UTC().Format(dateTimeLayout)}, {"SystemTimeZone", systemTimeZone}}, nil
	},
	// The service's answer is not shown; the fake sends a plain list of zone names.
	cmdtable.SystemTimeZonesGet: func(*call) (object, *apiError) {
		return object{{"TimeZones", slices.Clone(timeZones)}}, nil
	},
}

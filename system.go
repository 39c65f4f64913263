package sendloop

import (
	"context"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// SystemService reads the service's clock and time zones (system.*).
type SystemService service

// SystemDate is the service's clock (System.SystemDate.Get).
type SystemDate struct {
	// Date is the service's current date and time, a wall clock in TimeZone.
	Date DateTime
	// TimeZone is the service's zone name, e.g. "Europe/London".
	TimeZone string
}

// Date returns the service's current date-time and time zone (System.SystemDate.Get).
func (s *SystemService) Date(ctx context.Context) (*SystemDate, error) {
	out := new(SystemDate)
	err := s.client.do(ctx, &apiCall{command: commands.SystemSystemDateGet}, func(key, value []byte) (err error) {
		switch string(key) {
		case "SystemDate":
			err = out.Date.UnmarshalJSON(value)
		case "SystemTimeZone":
			out.TimeZone, err = wire.String(value)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TimeZone is one entry of system.timezones.Get. Name is what account.info.update accepts;
// Label is a display text when the service gives one.
type TimeZone struct {
	Name  string // the zone's name, as AccountUpdateParams.TimeZone takes it
	Label string // the display text, "" when the service gives none
}

// TimeZones returns the time zones the service knows (system.timezones.Get).
//
// The specification does not show this response, so it is decoded tolerantly: the first
// member other than Success that holds a list is taken, whatever its name. A list may be an
// array of names, an array of objects (the name from a Name, TimeZone, Zone, ID or Value key,
// the label from Label, Description, Title or Text), or an object mapping names to labels.
func (s *SystemService) TimeZones(ctx context.Context) ([]TimeZone, error) {
	var zones []TimeZone
	found := false
	err := s.client.do(ctx, &apiCall{command: commands.SystemTimeZonesGet}, func(_, value []byte) error {
		if found || !isContainer(value) {
			return nil
		}
		found = true
		var err error
		zones, err = decodeTimeZones(value)
		return err
	})
	if err != nil {
		return nil, err
	}
	return zones, nil
}

func isContainer(v []byte) bool {
	v = trimLeft(v)
	return len(v) > 0 && (v[0] == '[' || v[0] == '{')
}

func trimLeft(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t' || v[0] == '\r' || v[0] == '\n') {
		v = v[1:]
	}
	return v
}

func decodeTimeZones(value []byte) ([]TimeZone, error) {
	var zones []TimeZone
	if v := trimLeft(value); len(v) > 0 && v[0] == '{' {
		// An object: name → label, or index → entry when PHP kept numeric keys.
		err := wire.ScanObject(v, func(key, elem []byte) error {
			z, err := decodeTimeZone(elem)
			if err != nil {
				return err
			}
			if !isDigits(key) && !isContainer(elem) {
				z = TimeZone{Name: strings.TrimSpace(string(key)), Label: z.Name}
			}
			if z.Name != "" {
				zones = append(zones, z)
			}
			return nil
		})
		return zones, err
	}
	err := wire.ScanArray(value, func(elem []byte) error {
		z, err := decodeTimeZone(elem)
		if z.Name != "" {
			zones = append(zones, z)
		}
		return err
	})
	return zones, err
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func decodeTimeZone(elem []byte) (TimeZone, error) {
	if !isContainer(elem) {
		name, err := wire.String(elem)
		return TimeZone{Name: strings.TrimSpace(name)}, err
	}
	var z TimeZone
	err := wire.ScanObject(elem, func(key, v []byte) (err error) {
		if isContainer(v) {
			return nil
		}
		switch strings.ToLower(string(key)) {
		case "name", "timezone", "zone", "id", "value", "zonename":
			if z.Name == "" {
				z.Name, err = wire.String(v)
			}
		case "label", "description", "title", "text", "displayname":
			if z.Label == "" {
				z.Label, err = wire.String(v)
			}
		}
		return err
	})
	z.Name = strings.TrimSpace(z.Name)
	return z, err
}

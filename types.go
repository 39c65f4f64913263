package sendloop

import (
	"net/url"
	"strconv"
	"time"

	"github.com/go-sendloop/sendloop/internal/wire"
)

// Date is a calendar date as the service sends it, 'YYYY-MM-DD'. The service's unset date,
// '0000-00-00', is the zero Date (IsZero reports true) and is written back the same way.
// The embedded time is midnight UTC.
type Date struct {
	time.Time // midnight UTC of the day; the zero Time is the unset date
}

// NewDate returns the Date of t's calendar day in t's location.
func NewDate(t time.Time) Date {
	y, m, d := t.Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// String returns the wire form, '0000-00-00' when unset.
func (d Date) String() string { return wire.FormatDate(d.Time) }

// MarshalJSON writes the wire form as a JSON string.
func (d Date) MarshalJSON() ([]byte, error) { return quote(d.String()), nil }

// UnmarshalJSON accepts 'YYYY-MM-DD', '0000-00-00', "" and null.
func (d *Date) UnmarshalJSON(data []byte) (err error) {
	d.Time, err = wire.Date(data)
	return err
}

// MarshalText writes the wire form.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the wire form.
func (d *Date) UnmarshalText(text []byte) (err error) {
	d.Time, err = wire.ParseDate(string(text))
	return err
}

// EncodeValues writes a set date as a request parameter and omits an unset one.
func (d Date) EncodeValues(key string, v *url.Values) error {
	if !d.IsZero() {
		v.Set(key, d.String())
	}
	return nil
}

// DateTime is a date and time as the service sends it, 'YYYY-MM-DD HH:MM:SS'. The wire
// carries no offset: times are the account's wall clock (see SystemDate.TimeZone), held in
// UTC; use WallClockIn to place them in the account's zone. '0000-00-00 00:00:00' is the zero DateTime.
type DateTime struct {
	time.Time // the wall clock as sent, held in UTC; the zero Time is the unset date-time
}

// String returns the wire form, '0000-00-00 00:00:00' when unset.
func (t DateTime) String() string { return wire.FormatDateTime(t.Time) }

// WallClockIn returns the same wall clock read in loc: the instant the service meant when loc
// is the account's time zone. (The promoted In converts the UTC instant instead.)
func (t DateTime) WallClockIn(loc *time.Location) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), loc)
}

// MarshalJSON writes the wire form as a JSON string.
func (t DateTime) MarshalJSON() ([]byte, error) { return quote(t.String()), nil }

// UnmarshalJSON accepts 'YYYY-MM-DD HH:MM:SS', its zero forms, a bare date, "" and null.
func (t *DateTime) UnmarshalJSON(data []byte) (err error) {
	t.Time, err = wire.DateTime(data)
	return err
}

// MarshalText writes the wire form.
func (t DateTime) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads the wire form.
func (t *DateTime) UnmarshalText(text []byte) (err error) {
	t.Time, err = wire.ParseDateTime(string(text))
	return err
}

// EncodeValues writes a set date-time as a request parameter and omits an unset one.
func (t DateTime) EncodeValues(key string, v *url.Values) error {
	if !t.IsZero() {
		v.Set(key, t.String())
	}
	return nil
}

// Secret is a write-only value such as a new password: it is sent as given but prints as
// [REDACTED] in every format, log and JSON output.
type Secret string

const redactedText = "[REDACTED]"

// String hides the value.
func (Secret) String() string { return redactedText }

// GoString hides the value from %#v.
func (Secret) GoString() string { return redactedText }

// MarshalJSON hides the value.
func (Secret) MarshalJSON() ([]byte, error) { return quote(redactedText), nil }

// EncodeValues sends the real value as a request parameter, omitting an empty one.
func (s Secret) EncodeValues(key string, v *url.Values) error {
	if s != "" {
		v.Set(key, string(s))
	}
	return nil
}

// CustomFields holds custom field values by field ID: the service's CustomField<id> keys.
// As a request parameter named Fields it is sent as Fields[CustomField<id>].
type CustomFields map[int]string

// EncodeValues writes the fields in bracket notation, in ascending ID order.
func (f CustomFields) EncodeValues(key string, v *url.Values) error {
	wire.EncodeCustomFields(key, f, v)
	return nil
}

// UnmarshalJSON accepts an object keyed by field ID ({"7": "x"}, as MarshalJSON writes it)
// or by the service's CustomField<id> keys; other keys are ignored. Hand-written: its keys
// are data (field IDs).
func (f *CustomFields) UnmarshalJSON(data []byte) error {
	return scanCustomFields(data, func(id int, value string) {
		if *f == nil {
			*f = CustomFields{}
		}
		(*f)[id] = value
	})
}

// scanCustomFields hands set each custom field of an object of them (keyed CustomField<id>
// or <id>), in document order; a value that is not text stops the scan with its error,
// after set has its text.
func scanCustomFields(data []byte, set func(id int, value string)) error {
	return wire.ScanObject(data, func(key, v []byte) error {
		id, ok := wire.CustomFieldID(key)
		if !ok {
			id, ok = wire.CustomFieldID(append([]byte(wire.CustomFieldPrefix), key...))
		}
		if !ok {
			return nil
		}
		value, err := wire.String(v)
		set(id, value)
		return err
	})
}

func quote(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Int is an integer as the service sends it, for decoding with Call: a JSON number or a
// numeric string; "", null and false are 0, true is 1.
type Int int

// UnmarshalJSON accepts a number, a numeric string, "" and null.
func (n *Int) UnmarshalJSON(data []byte) error {
	v, err := wire.Int(data)
	*n = Int(v)
	return err
}

// MarshalJSON writes a JSON number.
func (n Int) MarshalJSON() ([]byte, error) { return strconv.AppendInt(nil, int64(n), 10), nil }

// Float is a number as the service sends it, for decoding with Call: a JSON number or a
// numeric string ("12.5%" too); "" and null are 0.
type Float float64

// UnmarshalJSON accepts a number, a numeric string, "" and null.
func (f *Float) UnmarshalJSON(data []byte) error {
	v, err := wire.Float(data)
	*f = Float(v)
	return err
}

// MarshalJSON writes a JSON number.
func (f Float) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

// Bool is a boolean as the service sends it, for decoding with Call: true, false, 1, 0,
// "1", "0", "true", "false"; "" and null are false.
type Bool bool

// UnmarshalJSON accepts the service's spellings of a boolean.
func (b *Bool) UnmarshalJSON(data []byte) error {
	v, err := wire.Bool(data)
	*b = Bool(v)
	return err
}

// MarshalJSON writes true or false.
func (b Bool) MarshalJSON() ([]byte, error) { return strconv.AppendBool(nil, bool(b)), nil }

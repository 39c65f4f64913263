package smtp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Names of the headers the Sendloop relay reads, spelled as documented.
// Header names are case-insensitive: net/mail and net/textproto store them
// canonicalized ("X-Sl-Track-Ga").
const (
	HeaderCustomArgs  = "X-SL-Custom-Args"
	HeaderMergeVars   = "X-SL-Merge-Vars"
	HeaderTags        = "X-SL-Tags"
	HeaderTrackOpens  = "X-SL-Track-Opens"
	HeaderTrackClicks = "X-SL-Track-Clicks"
	HeaderTrackGA     = "X-SL-Track-GA"
)

// headerNames lists the X-SL headers in the order Fields emits them.
var headerNames = []string{
	HeaderCustomArgs, HeaderMergeVars, HeaderTags,
	HeaderTrackOpens, HeaderTrackClicks, HeaderTrackGA,
}

// Headers holds the per-message options of the Sendloop relay, carried in
// X-SL-* headers. The zero value adds no header: no custom arguments, no
// merge variables, no tags and every tracking disabled.
type Headers struct {
	// CustomArgs are stored with the message (X-SL-Custom-Args) and come back with web
	// hooks. A value is any JSON scalar: a string, a number (any Go integer or float type,
	// or json.Number), a bool or nil; ParseHeaders gives numbers back as json.Number.
	CustomArgs map[string]any
	// MergeVars personalize the message (X-SL-Merge-Vars): a key "%NAME%"
	// fills %NAME% tags, a key "NAME" fills Mustache {{NAME}} tags (the
	// function MergeVars writes both from one value). Values are encoded with
	// encoding/json.
	MergeVars map[string]any
	// Tags group the statistics of the message (X-SL-Tags).
	Tags []string
	// TrackOpens enables open tracking (X-SL-Track-Opens).
	TrackOpens bool
	// TrackClicks enables link tracking (X-SL-Track-Clicks).
	TrackClicks bool
	// TrackGA enables analytics tracking (X-SL-Track-GA).
	TrackGA bool
}

// Field is one header line: its name and its unfolded value.
type Field struct {
	Name  string // the header's name, e.g. "X-SL-MergeVars"
	Value string // the value, unfolded: no CR or LF
}

// MergeVars returns merge variables for Headers.MergeVars that fill both of the relay's
// tag styles from one value per name: for each name N, the key "%N%" (for %N% tags) and
// the key "N" (for Mustache {{N}} tags), as the sendloop CLI fills them from a column.
// Names are bare (NAME, not %NAME%). The map is the caller's: add other keys to it, such
// as a boolean for a {{#N}} section. A map written by hand, with both keys or one, works
// as before.
func MergeVars(vars map[string]string) map[string]any {
	out := make(map[string]any, 2*len(vars))
	for k, v := range vars {
		out["%"+k+"%"] = v
		out[k] = v
	}
	return out
}

// IsZero reports whether h produces no header at all.
func (h Headers) IsZero() bool {
	return len(h.CustomArgs) == 0 && len(h.MergeVars) == 0 && len(h.Tags) == 0 &&
		!h.TrackOpens && !h.TrackClicks && !h.TrackGA
}

// Fields returns the X-SL-* header fields of h, in a fixed order, with their
// documented spelling. Empty CustomArgs, MergeVars and Tags, and disabled
// tracking, produce no field. JSON values are compact, with sorted keys, and
// pure ASCII: every other character is escaped as \uXXXX, so that no mailer
// needs RFC 2047 encoded-words for them. A tag, custom-argument key or value,
// or merge-variable key that is empty (values may be empty) or holds a
// control character or invalid UTF-8 is refused with a *HeaderError.
func (h Headers) Fields() ([]Field, error) {
	var fields []Field
	if len(h.CustomArgs) > 0 {
		for _, k := range sortedKeys(h.CustomArgs) {
			if err := checkText(HeaderCustomArgs, k, k, false); err != nil {
				return nil, err
			}
			if err := checkScalar(HeaderCustomArgs, k, h.CustomArgs[k]); err != nil {
				return nil, err
			}
		}
		value, err := asciiJSON(h.CustomArgs)
		if err != nil {
			return nil, &HeaderError{Header: HeaderCustomArgs, Err: err}
		}
		fields = append(fields, Field{HeaderCustomArgs, value})
	}
	if len(h.MergeVars) > 0 {
		for _, k := range sortedKeys(h.MergeVars) {
			if err := checkText(HeaderMergeVars, k, k, false); err != nil {
				return nil, err
			}
		}
		// Values are free text (a multi-line address is fine): JSON escapes
		// their control characters, so they cannot break the header.
		value, err := asciiJSON(h.MergeVars)
		if err != nil {
			return nil, &HeaderError{Header: HeaderMergeVars, Err: err}
		}
		fields = append(fields, Field{HeaderMergeVars, value})
	}
	if len(h.Tags) > 0 {
		for _, tag := range h.Tags {
			if err := checkText(HeaderTags, tag, tag, false); err != nil {
				return nil, err
			}
		}
		value, err := asciiJSON(h.Tags)
		if err != nil {
			return nil, &HeaderError{Header: HeaderTags, Err: err}
		}
		fields = append(fields, Field{HeaderTags, value})
	}
	for _, flag := range []struct {
		name string
		on   bool
	}{
		{HeaderTrackOpens, h.TrackOpens},
		{HeaderTrackClicks, h.TrackClicks},
		{HeaderTrackGA, h.TrackGA},
	} {
		if flag.on {
			fields = append(fields, Field{flag.name, "1"})
		}
	}
	return fields, nil
}

// Header returns the fields of h as a header map, under canonical keys (so
// that its Get method finds them).
func (h Headers) Header() (textproto.MIMEHeader, error) {
	fields, err := h.Fields()
	if err != nil {
		return nil, err
	}
	header := make(textproto.MIMEHeader, len(fields))
	for _, f := range fields {
		header.Set(f.Name, f.Value)
	}
	return header, nil
}

// ParseHeaders reads the X-SL-* headers of h, which may be a mail.Header, a
// textproto.MIMEHeader, an http.Header or a plain map; names match
// case-insensitively. Absent headers leave the defaults: no custom arguments,
// merge variables or tags, and tracking disabled.
//
// Tracking values 1, true, on, yes enable and 0, false, off, no disable,
// case-insensitively with surrounding spaces ignored; anything else is an
// error. JSON values must be an object (of strings, for X-SL-Custom-Args) or
// an array of strings (X-SL-Tags); whitespace inside them, such as left by
// unfolding, is fine. Numbers in merge variables decode as json.Number, so
// that they keep their exact digits. An empty object or array gives a nil map
// or slice. A value that is one or more RFC 2047 encoded-words is decoded
// first. The strings are checked as Fields checks them, so whatever parses can
// be sent again. Other X-SL-* headers are ignored. Errors are *HeaderError.
func ParseHeaders(h map[string][]string) (Headers, error) {
	var out Headers
	for _, name := range headerNames {
		value, ok, err := lookupHeader(h, name)
		if err != nil {
			return Headers{}, err
		}
		if !ok {
			continue
		}
		switch name {
		case HeaderCustomArgs:
			err = parseJSON(name, value, '{', &out.CustomArgs)
			for _, k := range sortedKeys(out.CustomArgs) {
				if err == nil {
					err = checkText(name, k, k, false)
				}
				if err == nil {
					err = checkScalar(name, k, out.CustomArgs[k])
				}
			}
			if len(out.CustomArgs) == 0 {
				out.CustomArgs = nil
			}
		case HeaderMergeVars:
			err = parseJSON(name, value, '{', &out.MergeVars)
			for _, k := range sortedKeys(out.MergeVars) {
				if err == nil {
					err = checkText(name, k, k, false)
				}
			}
			if len(out.MergeVars) == 0 {
				out.MergeVars = nil
			}
		case HeaderTags:
			err = parseJSON(name, value, '[', &out.Tags)
			for _, tag := range out.Tags {
				if err == nil {
					err = checkText(name, tag, tag, false)
				}
			}
			if len(out.Tags) == 0 {
				out.Tags = nil
			}
		case HeaderTrackOpens:
			out.TrackOpens, err = parseTracking(name, value)
		case HeaderTrackClicks:
			out.TrackClicks, err = parseTracking(name, value)
		case HeaderTrackGA:
			out.TrackGA, err = parseTracking(name, value)
		}
		if err != nil {
			return Headers{}, err
		}
	}
	return out, nil
}

// lookupHeader finds name among the keys of h whatever their case, as a
// hand-built map need not use canonical keys.
func lookupHeader(h map[string][]string, name string) (string, bool, error) {
	var values []string
	for key, v := range h {
		if strings.EqualFold(key, name) {
			values = append(values, v...)
		}
	}
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
		return decodeWords(values[0]), true, nil
	default:
		return "", false, &HeaderError{Header: name, Err: fmt.Errorf("%w (%d times)", ErrDuplicateHeader, len(values))}
	}
}

// decodeWords decodes RFC 2047 encoded-words that a mailer may have put in
// place of raw non-ASCII text. JSON and tracking values never start with "=?",
// so there is no ambiguity.
func decodeWords(value string) string {
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, "=?") {
		return value
	}
	decoded, err := new(mime.WordDecoder).DecodeHeader(value)
	if err != nil {
		return value
	}
	return strings.TrimSpace(decoded)
}

func parseJSON(name, value string, open byte, dst any) error {
	// Refuse null, numbers and strings: only the documented shape is valid.
	if value == "" || value[0] != open {
		want := "an object"
		if open == '[' {
			want = "an array"
		}
		return &HeaderError{Header: name, Err: fmt.Errorf("%w: want %s, got %q", ErrMalformedJSON, want, truncate(value, 40))}
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return &HeaderError{Header: name, Err: fmt.Errorf("%w: %v", ErrMalformedJSON, err)}
	}
	if strings.TrimSpace(value[dec.InputOffset():]) != "" {
		return &HeaderError{Header: name, Err: fmt.Errorf("%w: data after the JSON value", ErrMalformedJSON)}
	}
	return nil
}

func parseTracking(name, value string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "1", "true", "on", "yes":
		return true, nil
	case "0", "false", "off", "no":
		return false, nil
	}
	return false, &HeaderError{Header: name, Err: fmt.Errorf("%w %q: want 1, true, on, yes, 0, false, off or no", ErrInvalidTrackingValue, truncate(value, 40))}
}

// checkText refuses what has no place in a tag, a key or a custom argument:
// control characters (CR and LF above all), invalid UTF-8 and, unless
// emptyOK, the empty string.
func checkText(header, key, s string, emptyOK bool) error {
	if s == "" && !emptyOK {
		return &HeaderError{Header: header, Key: key, Err: ErrEmpty}
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return &HeaderError{Header: header, Key: key, Err: fmt.Errorf("%w: invalid UTF-8 at byte %d", ErrInvalidCharacter, i)}
			}
		}
		if unicode.IsControl(r) {
			return &HeaderError{Header: header, Key: key, Err: fmt.Errorf("%w %U at byte %d", ErrInvalidCharacter, r, i)}
		}
	}
	return nil
}

// checkScalar refuses a custom-argument value that is no JSON scalar (an object, an array,
// NaN or an infinity, a malformed json.Number) or a string that checkText refuses.
func checkScalar(header, key string, v any) error {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return nil
	case string:
		return checkText(header, key, v, true)
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return nil
		}
	case float32:
		if f := float64(v); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return nil
		}
	case json.Number:
		if _, err := strconv.ParseFloat(string(v), 64); err == nil && json.Valid([]byte(v)) {
			return nil
		}
	}
	return &HeaderError{Header: header, Key: key, Err: fmt.Errorf("%w: %T %v", ErrNotScalar, v, v)}
}

// asciiJSON encodes v as compact JSON with sorted keys, leaving <, > and &
// as they are (they mean nothing in a header) and escaping every non-ASCII
// character as \uXXXX, with UTF-16 surrogate pairs above U+FFFF.
func asciiJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var out strings.Builder
	out.Grow(len(raw))
	// Non-ASCII bytes only occur inside JSON strings, where \u escapes are
	// valid; encoding/json has already replaced invalid UTF-8 by U+FFFD.
	for len(raw) > 0 {
		if raw[0] < utf8.RuneSelf {
			out.WriteByte(raw[0])
			raw = raw[1:]
			continue
		}
		r, size := utf8.DecodeRune(raw)
		raw = raw[size:]
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
		} else {
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.String(), nil
}

// sortedKeys makes errors name the same key every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

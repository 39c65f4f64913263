package sendlooptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Seed is data to load into a fake with Server.LoadSeed, and the JSON document
// `sendloop fake --seed FILE` reads (ReadSeed). It is this package's own format, not one
// of the service's: it gives a program tested against the fake what no API command makes,
// custom fields and segments above all, and subscribers in any state without the emails
// and webhooks that getting them there through the API would cause.
//
// An example, with every member (testdata/seed-example.json holds a longer one):
//
//	{
//	  "lists": [{
//	    "id": 7, "name": "Customers", "opt_in_mode": "Double",
//	    "custom_fields": [{"id": 3, "name": "Company"}, {"name": "Plan", "data_type": "Text"}],
//	    "segments": [{"name": "Pro", "field": "Plan", "value": "pro"}],
//	    "subscribers": [
//	      {"email": "ann@example.com", "fields": {"Company": "Acme", "Plan": "pro"}},
//	      {"email": "bob@example.com", "status": "Confirmation Pending"},
//	      {"email": "cy@example.com", "status": "Unsubscribed", "bounce_type": "Hard", "fields": {"CustomField3": "Initech"}}
//	    ],
//	    "suppressions": [{"email": "no@example.com"}]
//	  }],
//	  "suppressions": [{"email": "complained@example.com", "type": "FBL Report"}]
//	}
//
// The rules, checked as a whole before anything is loaded:
//   - Unknown members are refused, and every error names the member's JSON path, e.g.
//     lists[1].subscribers[3].status.
//   - IDs (of lists, custom fields and segments) are optional: a program that must know a
//     field's CustomField<id> gives it. A given ID is from 1 to 2147483647 and unique among
//     its kind, the server's existing data included (custom field and segment IDs are
//     unique across lists, as the fake numbers them). Entries without one get, in order,
//     the smallest IDs no entry claims and no existing record holds.
//   - A list needs a name; opt_in_mode is Single (the default) or Double, in any case.
//   - A custom field needs a name, unique within its list in any case; type, data_type,
//     default_value and options are shown by list.get as given (type "Single line" and
//     data_type "Text" by default).
//   - A segment needs a name and selects the subscribers whose custom field field (a name
//     of its list's fields) equals value.
//   - A subscriber needs an address the fake accepts, once per list in any case. status is
//     one of the states the service reports: Subscribed (the default), Confirmation Pending
//     or Unsubscribed, in any case; bounce_type is Not Bounced (the default), Hard or Soft.
//     fields are keyed by a custom field's name (in any case) or CustomField<id>. The
//     subscription (and unsubscription) date is the server's today, the IPs 0.0.0.0; no
//     email is sent and no webhook posted.
//   - Suppressions need an address; type is free text, "Manual" by default. Those at the
//     top are global, those of a list are that list's.
type Seed struct {
	// Lists are the lists to make, each with its fields, segments, subscribers and
	// suppressions.
	Lists []SeedList `json:"lists"`
	// Suppressions are global suppressions: the addresses may join no list.
	Suppressions []SeedSuppression `json:"suppressions"`
}

// SeedList is a list of a Seed.
type SeedList struct {
	// ID is the list's ID; 0 lets the fake choose.
	ID int `json:"id"`
	// Name is the list's name (required).
	Name string `json:"name"`
	// OptInMode is "Single" (the default) or "Double".
	OptInMode string `json:"opt_in_mode"`
	// CustomFields are the list's custom fields, in order.
	CustomFields []SeedCustomField `json:"custom_fields"`
	// Segments are the list's segments.
	Segments []SeedSegment `json:"segments"`
	// Subscribers are the list's members, in SubscriberID order.
	Subscribers []SeedSubscriber `json:"subscribers"`
	// Suppressions are the addresses that may not join this list.
	Suppressions []SeedSuppression `json:"suppressions"`
}

// SeedCustomField is a custom field of a SeedList.
type SeedCustomField struct {
	// ID is the field's ID, the <id> of CustomField<id>; 0 lets the fake choose.
	ID int `json:"id"`
	// Name is the field's name (required), unique within its list in any case.
	Name string `json:"name"`
	// Type is the field's type as list.get shows it; "Single line" by default.
	Type string `json:"type"`
	// DataType is the field's data type, e.g. "Text", "Number" or "Date"; "Text" by default.
	DataType string `json:"data_type"`
	// DefaultValue is the value shown for a subscriber without one.
	DefaultValue string `json:"default_value"`
	// Options are a choice field's options, as the service writes them.
	Options string `json:"options"`
}

// SeedSegment is a segment of a SeedList.
type SeedSegment struct {
	// ID is the segment's ID; 0 lets the fake choose.
	ID int `json:"id"`
	// Name is the segment's name (required).
	Name string `json:"name"`
	// Field is the name of the list's custom field the segment tests (required).
	Field string `json:"field"`
	// Value is the field value the segment selects.
	Value string `json:"value"`
}

// SeedSubscriber is a member of a SeedList.
type SeedSubscriber struct {
	// Email is the member's address (required).
	Email string `json:"email"`
	// Status is "Subscribed" (the default), "Confirmation Pending" or "Unsubscribed".
	Status string `json:"status"`
	// BounceType is "Not Bounced" (the default), "Hard" or "Soft".
	BounceType string `json:"bounce_type"`
	// Fields are custom field values, keyed by the field's name or CustomField<id>.
	Fields map[string]string `json:"fields"`
}

// SeedSuppression is a suppressed address of a Seed (global) or a SeedList.
type SeedSuppression struct {
	// Email is the suppressed address (required).
	Email string `json:"email"`
	// Type is the suppression's type, e.g. "FBL Report"; "Manual" by default.
	Type string `json:"type"`
}

// SeedError is a fault of a seed, at a JSON path such as lists[1].subscribers[3].status.
type SeedError struct {
	// Path is the member at fault, from the document's root; "" for the document itself.
	Path string
	// Reason says what is wrong.
	Reason string
}

// Error returns "path: reason".
func (e *SeedError) Error() string {
	if e.Path == "" {
		return "seed: " + e.Reason
	}
	return "seed: " + e.Path + ": " + e.Reason
}

// maxSeedErrors bounds how many faults a seed's error lists.
const maxSeedErrors = 20

// ReadSeed decodes a seed document (see Seed). Unknown members, and members of the wrong
// JSON type, are refused with a *SeedError naming their path (errors.Join of up to 20 of
// them); the content is checked by Server.LoadSeed.
func ReadSeed(r io.Reader) (Seed, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Seed{}, fmt.Errorf("seed: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return Seed{}, &SeedError{Reason: "not a JSON document: " + jsonErrorText(data, err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Seed{}, &SeedError{Reason: "more than one JSON value"}
	}
	var errs []error
	checkShape(&errs, "", tree, reflect.TypeOf(Seed{}))
	if len(errs) > 0 {
		return Seed{}, errors.Join(errs...)
	}
	var seed Seed
	if err := json.Unmarshal(data, &seed); err != nil { // the shape is checked: not expected
		return Seed{}, &SeedError{Reason: err.Error()}
	}
	return seed, nil
}

// jsonErrorText says where a syntax error is, by line.
func jsonErrorText(data []byte, err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		line := 1 + bytes.Count(data[:min(int(syntax.Offset), len(data))], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, err)
	}
	if errors.Is(err, io.EOF) {
		return "empty"
	}
	return err.Error()
}

// checkShape compares a decoded JSON value with the Go type it will be decoded into,
// recording a SeedError per unknown member or wrong type. null stands for any type.
func checkShape(errs *[]error, path string, v any, t reflect.Type) {
	if v == nil || len(*errs) >= maxSeedErrors {
		return
	}
	fail := func(reason string) { *errs = append(*errs, &SeedError{Path: path, Reason: reason}) }
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			fail("want an object, not " + jsonKind(v))
			return
		}
		members := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			members[name] = t.Field(i).Type
			names = append(names, name)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			mt, known := members[k]
			if !known {
				*errs = append(*errs, &SeedError{Path: joinPath(path, k),
					Reason: "unknown member; known here: " + strings.Join(names, ", ")})
				continue
			}
			checkShape(errs, joinPath(path, k), obj[k], mt)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			fail("want an array, not " + jsonKind(v))
			return
		}
		for i, e := range arr {
			checkShape(errs, path+"["+strconv.Itoa(i)+"]", e, t.Elem())
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			fail("want an object, not " + jsonKind(v))
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			checkShape(errs, path+"["+strconv.Quote(k)+"]", obj[k], t.Elem())
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			fail("want a string, not " + jsonKind(v))
		}
	case reflect.Int:
		n, ok := v.(json.Number)
		if !ok {
			fail("want a number, not " + jsonKind(v))
			return
		}
		if _, err := strconv.ParseInt(string(n), 10, 32); err != nil {
			fail("want a whole number from -2147483648 to 2147483647, not " + string(n))
		}
	}
}

func joinPath(path, member string) string {
	if path == "" {
		return member
	}
	return path + "." + member
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number (" + string(v) + ")"
	case bool:
		return "a boolean"
	}
	return "null"
}

package listsync

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/csvfile"
)

const notUTF8 = "not valid UTF-8 (save the file as UTF-8, or name its encoding with --encoding, e.g. windows-1252)"

var demoFields = []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}}

func TestMapHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		header  []string
		fields  []Field
		email   int
		status  int
		mapped  []int // field IDs in column order
		ignored []string
		err     []string
	}{
		{name: "names", header: []string{"EmailAddress", "First name", "Plan"}, fields: demoFields, email: 0, status: -1, mapped: []int{1, 2}},
		{name: "keys, any case", header: []string{"customfield2", "EMAILADDRESS"}, fields: demoFields, email: 1, status: -1, mapped: []int{2}},
		{name: "aliases and spaces", header: []string{" Email Address ", " first NAME "}, fields: demoFields, email: 0, status: -1, mapped: []int{1}},
		{name: "email alias", header: []string{"email"}, fields: demoFields, email: 0, status: -1},
		{name: "export columns", header: []string{"EmailAddress", "Plan", "SubscriberID", "SubscriptionStatus", "OptInDate"}, fields: demoFields,
			email: 0, status: 3, mapped: []int{2}, ignored: []string{"SubscriberID", "SubscriptionStatus", "OptInDate"}},
		{name: "a field named like a key of another", header: []string{"EmailAddress", "CustomField1"},
			fields: []Field{{ID: 1, Name: "A"}, {ID: 2, Name: "CustomField1"}}, email: 0, status: -1, mapped: []int{1}},
		{name: "unknown", header: []string{"EmailAddress", "Colour", "Size"}, fields: demoFields,
			err: []string{`unknown columns "Colour", "Size"`, `"First name" (CustomField1), "Plan" (CustomField2)`}},
		{name: "unknown without fields", header: []string{"EmailAddress", "X"}, err: []string{`unknown column "X" (the list's custom fields are none;`}},
		{name: "unknown key", header: []string{"EmailAddress", "CustomField9", "CustomField+1", "CustomField0"}, fields: demoFields,
			err: []string{`"CustomField9", "CustomField+1", "CustomField0"`}},
		{name: "no address", header: []string{"Plan"}, fields: demoFields, err: []string{"no address column"}},
		{name: "twice", header: []string{"Email", "Plan", "customfield2"}, fields: demoFields, err: []string{`columns 2 and 3 ("customfield2") both hold CustomField2`}},
		{name: "read-only twice", header: []string{"Email", "OptInDate", "optindate"}, fields: demoFields, err: []string{"both hold optindate"}},
		{name: "ambiguous", header: []string{"Email", "plan"}, fields: []Field{{ID: 4, Name: "Plan"}, {ID: 9, Name: "PLAN "}},
			err: []string{`column "plan" names 2 custom fields (CustomField4, CustomField9)`}},
		{name: "unnamed", header: []string{"Email", " "}, fields: demoFields, err: []string{"column 2 has no name"}},
		{name: "not UTF-8", header: []string{"Email", "\xff"}, fields: demoFields, err: []string{"column 2's name is not valid UTF-8"}},
		{name: "all at once", header: []string{"Plan", "X", ""}, fields: demoFields,
			err: []string{`unknown column "X"`, "column 3 has no name", "no address column"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := mapHeader(tt.header, tt.fields)
			if headerErrorChecked(t, err, tt.err) {
				return
			}
			mapped := mappedIDs(m)
			if m.Email != tt.email || m.Status != tt.status || !reflect.DeepEqual(mapped, tt.mapped) ||
				!reflect.DeepEqual(m.Ignored, tt.ignored) || m.Columns != len(tt.header) {
				t.Errorf("got %+v", m)
			}
		})
	}
}

func TestExportHeader(t *testing.T) {
	t.Parallel()
	fields := []Field{
		{1, "First name"}, {2, "Plan"}, {3, "plan "}, {4, ""}, {5, "EmailAddress"}, {6, "optindate"},
		{7, "CustomField1"}, {8, "Größe"}, {9, "\xff"},
	}
	want := []string{"First name", "CustomField2", "CustomField3", "CustomField4", "CustomField5", "CustomField6",
		"CustomField7", "Größe", "CustomField9"}
	header := ExportHeader(fields)
	got := header[1 : 1+len(fields)]
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ExportHeader's field columns = %q, want %q", got, want)
	}
	if header[0] != csvfile.ColumnEmail || !reflect.DeepEqual(header[1+len(fields):], readOnlyColumns) {
		t.Fatalf("ExportHeader = %q", header)
	}
	header[len(header)-1] = "changed"
	if readOnlyColumns[len(readOnlyColumns)-1] == "changed" {
		t.Fatal("ExportHeader shares its slice with the package")
	}
	// Export's header reads back into the same fields.
	m, err := mapHeader(append([]string{csvfile.ColumnEmail}, got...), fields)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Fields {
		if f.Field != fields[i] {
			t.Errorf("column %q maps to %+v, want %+v", f.Header, f.Field, fields[i])
		}
	}
}

func TestRow(t *testing.T) {
	t.Parallel()
	m, err := mapHeader([]string{"Plan", "EmailAddress", "SubscriptionStatus", "First name"}, demoFields)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		rec    csvfile.Record
		want   MappedRow
		reject string
	}{
		{"valid", csvfile.Record{Line: 2, Fields: []string{"pro", " Ann@Example.com ", "Subscribed", " Ann "}},
			MappedRow{Line: 2, Email: "Ann@Example.com", Key: "ann@example.com", Raw: " Ann@Example.com ", Values: []string{"pro", "Ann"}}, ""},
		{"invisible characters around the address", csvfile.Record{Line: 2, Fields: []string{"pro", "\ufeff\u200bAnn@Example.com\u00a0", "Subscribed", ""}},
			MappedRow{Line: 2, Email: "Ann@Example.com", Key: "ann@example.com", Raw: "\ufeff\u200bAnn@Example.com\u00a0", Values: []string{"pro", ""}}, ""},
		{"stray comma, an address with a zero-width space", csvfile.Record{Line: 6, Fields: []string{"pro", " Jr", "\u200bBob@example.com", "Subscribed", "Bob"}, Text: "…"},
			MappedRow{Line: 6, Email: "Bob@example.com", Raw: "\u200bBob@example.com", Protect: []string{"bob@example.com"}}, "malformed line: 5 fields, the header has 4"},
		{"status in any case", csvfile.Record{Line: 3, Fields: []string{"", "b@example.com", " subscribed ", ""}},
			MappedRow{Line: 3, Email: "b@example.com", Key: "b@example.com", Raw: "b@example.com", Values: []string{"", ""}}, ""},
		{"other status", csvfile.Record{Line: 4, Fields: []string{"", "c@example.com", "Unsubscribed", ""}},
			MappedRow{Line: 4, Email: "c@example.com", Key: "c@example.com", Raw: "c@example.com", Values: []string{"", ""}, Skip: true}, ""},
		{"malformed, text not kept", csvfile.Record{Line: 5, Err: errors.New("bare quote")},
			MappedRow{Line: 5, Malformed: true, Raw: "(line 5)"}, "malformed line: bare quote"},
		{"short", csvfile.Record{Line: 6, Fields: []string{"pro", "d@example.com"}, Text: "pro,d@example.com"}, MappedRow{Line: 6, Email: "d@example.com", Raw: "d@example.com", Protect: []string{"d@example.com"}}, "malformed line: 2 fields, the header has 4"},
		{"stray comma before the address", csvfile.Record{Line: 6, Fields: []string{"pro", " Jr", " Bob@example.com", "Subscribed", "Bob"}, Text: "pro, Jr, Bob@example.com,Subscribed,Bob"},
			MappedRow{Line: 6, Email: "Bob@example.com", Raw: " Bob@example.com", Protect: []string{"bob@example.com"}}, "malformed line: 5 fields, the header has 4"},
		{"spaces only", csvfile.Record{Line: 7, Fields: []string{"   "}, Text: "   "}, MappedRow{Line: 7, Raw: "(line 7)"}, "malformed line: 1 field, the header has 4"},
		{"too long, two addresses", csvfile.Record{Line: 6, Fields: []string{"a@example.com", "b@example.com", "x", "A@example.com", "y"}, Text: "…"},
			MappedRow{Line: 6, Email: "b@example.com", Raw: "b@example.com", Protect: []string{"a@example.com", "b@example.com"}}, "malformed line: 5 fields, the header has 4"},
		{"too long, address column not an address", csvfile.Record{Line: 6, Fields: []string{"pro", "x", "Subscribed", "Bob", "c@example.com"}, Text: "pro,x,Subscribed,Bob,c@example.com"},
			MappedRow{Line: 6, Email: "c@example.com", Raw: "c@example.com", Protect: []string{"c@example.com"}}, "malformed line: 5 fields, the header has 4"},
		{"too short for the address", csvfile.Record{Line: 7, Fields: []string{"pro"}, Text: "pro"}, MappedRow{Line: 7, Raw: "pro"}, "malformed line: 1 field, the header has 4"},
		{"too long", csvfile.Record{Line: 7, Fields: []string{"pro", " ", "x", "y", "z"}, Text: "pro; ;x;y;z"}, MappedRow{Line: 7, Raw: "pro; ;x;y;z"}, "malformed line: 5 fields, the header has 4"},
		{"no address", csvfile.Record{Line: 8, Fields: []string{"pro", " ", "Subscribed", ""}}, MappedRow{Line: 8, Raw: " "}, "missing email address"},
		{"bad address", csvfile.Record{Line: 9, Fields: []string{"pro", "Ann <a@example.com>", "Subscribed", ""}}, MappedRow{Line: 9, Email: "Ann <a@example.com>", Raw: "Ann <a@example.com>"}, "invalid email address"},
		{"not UTF-8", csvfile.Record{Line: 10, Fields: []string{"pro", "e@example.com", "Subscribed", "\xffx"}}, MappedRow{Line: 10, Email: "e@example.com", Raw: "e@example.com"}, notUTF8},
		{"address not UTF-8", csvfile.Record{Line: 11, Fields: []string{"pro", "\xff@example.com", "Subscribed", ""}}, MappedRow{Line: 11, Email: "\uFFFD@example.com", Raw: "\uFFFD@example.com"}, notUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.want.Reject = tt.reject
			if got := m.Row(tt.rec); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Row = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// headerErrorChecked checks err against the fragments a table row expects (none: no error)
// and reports whether the row expected an error, which ends its test.
func headerErrorChecked(t *testing.T, err error, fragments []string) bool {
	t.Helper()
	if len(fragments) == 0 {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	var herr *HeaderError
	if !errors.As(err, &herr) {
		t.Fatalf("error %v, want a *HeaderError", err)
	}
	for _, want := range fragments {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	return true
}

// mappedIDs lists the field IDs a mapping fills, in column order.
func mappedIDs(m *Mapping) []int {
	var ids []int
	for _, f := range m.Fields {
		ids = append(ids, f.Field.ID)
	}
	return ids
}

package listsync

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/csvfile"
)

func TestMapHeaderOptions(t *testing.T) {
	t.Parallel()
	fields := []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}}
	tests := []struct {
		name    string
		header  []string
		opts    HeaderOptions
		email   int
		mapped  []int
		ignored []string
		err     []string
	}{
		{name: "Email Address", header: []string{"Email Address"}, email: 0},
		{name: "E-mail", header: []string{"Plan", "E-mail"}, email: 1, mapped: []int{2}},
		{name: "email_address", header: []string{"email_address"}, email: 0},
		{name: "EMAIL-ADDRESS", header: []string{" EMAIL-ADDRESS "}, email: 0},
		{name: "Mail", header: []string{"Mail"}, email: 0},
		{name: "e.mail", header: []string{"e.mail"}, email: 0},
		{name: "export columns spelt otherwise", header: []string{"email", "Subscriber ID", "subscription_status"}, email: 0,
			ignored: []string{"Subscriber ID", "subscription_status"}},
		{name: "--column to the address", header: []string{"Email", "Work"}, email: 1,
			opts: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "work", Target: "EmailAddress"}}, Ignore: []string{"email"}}, ignored: []string{"Email"}},
		{name: "--column to fields by name and key", header: []string{"Courriel", "Prénom", "Offre"}, email: 0, mapped: []int{1, 2},
			opts: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "Courriel", Target: "E-mail"}, {Source: "prénom", Target: "first NAME"}, {Source: "Offre", Target: "customfield2"}}}},
		{name: "--column beats a name", header: []string{"Email", "Plan"}, email: 0, mapped: []int{1},
			opts: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "Plan", Target: "CustomField1"}}}},
		{name: "--ignore-column", header: []string{"Email", "Notes", "Plan"}, email: 0, mapped: []int{2},
			opts: HeaderOptions{Ignore: []string{"notes"}}, ignored: []string{"Notes"}},
		{name: "--ignore-unknown-columns", header: []string{"Email", "Notes", "", "Plan", "Colour"}, email: 0, mapped: []int{2},
			opts: HeaderOptions{IgnoreUnknown: true}, ignored: []string{"Notes", "Colour"}},
		{name: "two addresses", header: []string{"Email", "E-Mail Address"}, err: []string{"both hold EmailAddress", "--ignore-column"}},
		{name: "--column to nothing", header: []string{"Email", "X"}, opts: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "X", Target: "Colour"}}},
			err: []string{`--column "X=Colour": "Colour" is neither EmailAddress nor a custom field`}},
		{name: "--column of a missing column", header: []string{"Email"}, opts: HeaderOptions{Columns: []csvfile.ColumnMap{{Source: "Y", Target: "Plan"}}},
			err: []string{`--column "Y=Plan": the header has no column "Y"`}},
		{name: "--ignore-column of a missing column", header: []string{"Email"}, opts: HeaderOptions{Ignore: []string{"Y"}},
			err: []string{`--ignore-column "Y": the header has no such column`}},
		{name: "no address, with the hint", header: []string{"Plan"}, err: []string{"--column 'NAME=EmailAddress'"}},
		{name: "unknown, with the hints", header: []string{"Email", "Colour"}, err: []string{`unknown column "Colour"`, "--ignore-unknown-columns"}},
		{name: "ambiguous name, ignored unknown", header: []string{"Email", "plan"}, opts: HeaderOptions{IgnoreUnknown: true},
			err: []string{"names 2 custom fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := fields
			if strings.HasPrefix(tt.name, "ambiguous") {
				fs = []Field{{ID: 4, Name: "Plan"}, {ID: 9, Name: "plan"}}
			}
			m, err := mapHeader(tt.header, fs, tt.opts)
			if headerErrorChecked(t, err, tt.err) {
				return
			}
			mapped := mappedIDs(m)
			if m.Email != tt.email || !reflect.DeepEqual(mapped, tt.mapped) || !reflect.DeepEqual(m.Ignored, tt.ignored) {
				t.Errorf("got email %d, fields %v, ignored %q", m.Email, mapped, m.Ignored)
			}
		})
	}
}

func TestKeepSpaces(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		m, err := mapHeader([]string{"Email", "Plan"}, []Field{{ID: 2, Name: "Plan"}}, HeaderOptions{KeepSpaces: keep})
		if err != nil {
			t.Fatal(err)
		}
		row := m.Row(csvfile.Record{Line: 2, Fields: []string{" a@example.com ", "\t pro  "}})
		want := "pro"
		if keep {
			want = "\t pro  "
		}
		if row.Email != "a@example.com" || row.Values[0] != want {
			t.Errorf("KeepSpaces %v: %+v", keep, row)
		}
	}
}

// FuzzMapHeader maps any header: either a mapping whose columns are within the header and
// distinct, or a *HeaderError.
func FuzzMapHeader(f *testing.F) {
	f.Add("Email Address;Prénom;plan;;SubscriptionStatus", "Prénom=first name", true)
	f.Add("E-mail,CustomField2,x", "x=EmailAddress", false)
	f.Add("mail,MAIL", "", false)
	f.Fuzz(func(t *testing.T, header, column string, ignoreUnknown bool) {
		names := strings.FieldsFunc(header, func(r rune) bool { return r == ',' || r == ';' })
		opts := HeaderOptions{IgnoreUnknown: ignoreUnknown}
		if c, err := csvfile.ParseColumnMap(column); err == nil {
			opts.Columns = []csvfile.ColumnMap{c}
		}
		m, err := mapHeader(names, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}}, opts)
		if err != nil {
			var herr *HeaderError
			if !errors.As(err, &herr) {
				t.Fatalf("error %v is not a *HeaderError", err)
			}
			return
		}
		seen := map[int]bool{m.Email: true}
		if m.Email < 0 || m.Email >= len(names) {
			t.Fatalf("address column %d of %d", m.Email, len(names))
		}
		for _, fld := range m.Fields {
			if fld.Column < 0 || fld.Column >= len(names) || seen[fld.Column] {
				t.Fatalf("field column %d: %+v", fld.Column, m)
			}
			seen[fld.Column] = true
		}
	})
}

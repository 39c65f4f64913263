package sendloop

import (
	"net/url"
	"strconv"
	"testing"
)

// FuzzImportRowRoundTrip checks that a row ImportAll encodes reads back as it was (the
// rows of a failed batch are reported from its body), and that url.ParseQuery reads the
// body as the service should.
func FuzzImportRowRoundTrip(f *testing.F) {
	f.Add("a@example.com", 1, "x", 2, "y")
	f.Add("b+tag@example.com", 7, "z z&=%+ü", 3, "")
	f.Add("c@example.com", 4096, "\xff\x00", 1<<30, "~-._")
	f.Fuzz(func(t *testing.T, email string, id1 int, v1 string, id2 int, v2 string) {
		row := ImportSubscriber{EmailAddress: email, Fields: CustomFields{id1: v1, id2: v2}}
		var enc importEncoder
		if !enc.check(row) {
			t.Skip()
		}
		for _, n := range []int{0, 3, 999} {
			b := enc.appendChecked(nil, n, email)
			got := decodeImportRow(string(b))
			if got.EmailAddress != row.EmailAddress || len(got.Fields) != len(row.Fields) {
				t.Fatalf("row %+v read back as %+v from %s", row, got, b)
			}
			for id, v := range row.Fields {
				if got.Fields[id] != v {
					t.Fatalf("field %d %q read back as %q", id, v, got.Fields[id])
				}
			}
			values, err := url.ParseQuery(string(b[1:]))
			if err != nil {
				t.Fatal(err)
			}
			prefix := "Subscribers[" + strconv.Itoa(n) + "]"
			if values.Get(prefix+"[EmailAddress]") != email {
				t.Fatalf("url.ParseQuery reads %v from %s", values, b)
			}
			for id, v := range row.Fields {
				if values.Get(prefix+"[CustomField"+strconv.Itoa(id)+"]") != v {
					t.Fatalf("url.ParseQuery reads %v from %s", values, b)
				}
			}
		}
	})
}

func TestAppendQueryEscapeMatchesQueryEscape(t *testing.T) {
	t.Parallel()
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", "a b+c&d=e%f", "ü€", string(all)} {
		if got, want := string(appendQueryEscape(nil, s)), url.QueryEscape(s); got != want {
			t.Errorf("appendQueryEscape(%q) = %q, want %q", s, got, want)
		}
	}
}

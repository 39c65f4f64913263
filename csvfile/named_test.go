package csvfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddressColumn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		header  []string
		columns []ColumnMap
		want    int
		err     string
	}{
		{[]string{"Name", " E-mail "}, nil, 1, ""},
		{[]string{"Work", "Email"}, []ColumnMap{{Source: "work", Target: "EmailAddress"}}, 0, ""},
		{[]string{"Email", "Mail"}, nil, -1, "both hold EmailAddress"},
		{[]string{"Name"}, nil, -1, "no address column"},
		{[]string{"Name"}, []ColumnMap{{Source: "Work", Target: "Email"}}, -1, `no column "Work"`},
	} {
		got, err := AddressColumn(tt.header, tt.columns)
		assert.Equal(t, tt.want, got, "%q %v", tt.header, tt.columns)
		if tt.err == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, tt.err)
		}
	}
}

func TestIsAddressName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"EmailAddress": true, "Email Address": true, " E-mail ": true, "email_address": true, "MAIL": true,
		"e.mail": true, "Email ID": true, "Name": false, "": false, "Emails": false,
	} {
		assert.Equal(t, want, IsAddressName(name), name)
	}
}

func TestNamed(t *testing.T) {
	t.Parallel()
	r, err := NewReader(strings.NewReader("sep=;\nEmail;Name\nann@example.com;Ann\nb\"ob@example.com;Bob\nc@example.com\n;Nobody\n"))
	require.NoError(t, err)
	var got []string
	for rec, err := range r.Named(0) {
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%d %q %q %v %q %t", rec.Line, rec.Address, rec.Raw, rec.Columns, rec.Reject, rec.Malformed))
	}
	assert.Equal(t, []string{
		`3 "ann@example.com" "ann@example.com" map[Name:Ann] "" false`,
		`4 "" "b\"ob@example.com" map[] "malformed line: bare \" in non-quoted-field" true`,
		`5 "" "c@example.com" map[] "malformed line: 1 field, the header has 2" false`,
		`6 "" "" map[] "missing email address" false`,
	}, got)

	for rec, err := range r.Named(2) {
		require.ErrorContains(t, err, "csvfile: address column 2 is not among the header's, 0 to 1")
		assert.Zero(t, rec)
	}
}

// TestRecordAddress is the address rule listsync's rows and Named's records share: what
// each kind of record gives as its address, its Raw text and its reason.
func TestRecordAddress(t *testing.T) {
	t.Parallel()
	// The header: Plan, EmailAddress, SubscriptionStatus, First name.
	const col, columns = 1, 4
	for _, tt := range []struct {
		name string
		rec  Record
		want RecordAddress
	}{
		{"valid", Record{Line: 2, Fields: []string{"pro", " Ann@Example.com ", "Subscribed", " Ann "}},
			RecordAddress{Address: "Ann@Example.com", Raw: " Ann@Example.com "}},
		{"invisible characters around the address", Record{Line: 2, Fields: []string{"pro", "\ufeff\u200bAnn@Example.com\u00a0", "", ""}},
			RecordAddress{Address: "Ann@Example.com", Raw: "\ufeff\u200bAnn@Example.com\u00a0"}},
		{"malformed", Record{Line: 5, Err: errors.New("bare quote"), Text: `pro,"x"y@example.com,Subscribed,`, comma: ','},
			RecordAddress{Malformed: true, Raw: `x"y@example.com`, Reject: "malformed line: bare quote"}},
		{"malformed, split plainly", Record{Line: 5, Err: errors.New("bare quote"), Text: `pro;"x;y@example.com;S`, comma: ';'},
			RecordAddress{Malformed: true, Raw: `x`, Reject: "malformed line: bare quote"}},
		{"malformed, text not kept", Record{Line: 5, Err: errors.New("bare quote"), comma: ','},
			RecordAddress{Malformed: true, Raw: "(line 5)", Reject: "malformed line: bare quote"}},
		{"malformed, no address in the first line", Record{Line: 5, Err: errors.New("open quote"), Text: `"pro`, comma: ','},
			RecordAddress{Malformed: true, Raw: `"pro`, Reject: "malformed line: open quote"}},
		{"malformed, invalid UTF-8", Record{Line: 5, Err: errors.New("bare quote"), Text: "pro,\xff@example.com\",S,", comma: ','},
			RecordAddress{Malformed: true, Raw: "\uFFFD@example.com", Reject: "malformed line: bare quote"}},
		{"short", Record{Line: 6, Fields: []string{"pro", "d@example.com"}, Text: "pro,d@example.com"},
			RecordAddress{Address: "d@example.com", Raw: "d@example.com", Protect: []string{"d@example.com"}, Reject: "malformed line: 2 fields, the header has 4"}},
		{"stray comma, an address with a zero-width space", Record{Line: 6, Fields: []string{"pro", " Jr", "\u200bBob@example.com", "Subscribed", "Bob"}, Text: "…"},
			RecordAddress{Address: "Bob@example.com", Raw: "\u200bBob@example.com", Protect: []string{"bob@example.com"}, Reject: "malformed line: 5 fields, the header has 4"}},
		{"too long, two addresses", Record{Line: 6, Fields: []string{"a@example.com", "b@example.com", "x", "A@example.com", "y"}, Text: "…"},
			RecordAddress{Address: "b@example.com", Raw: "b@example.com", Protect: []string{"a@example.com", "b@example.com"}, Reject: "malformed line: 5 fields, the header has 4"}},
		{"spaces only", Record{Line: 7, Fields: []string{"   "}, Text: "   "},
			RecordAddress{Raw: "(line 7)", Reject: "malformed line: 1 field, the header has 4"}},
		{"too long, text not kept", Record{Line: 7, Fields: []string{"pro", " ", "x\xff", "y", "z"}, comma: ';'},
			RecordAddress{Raw: "pro; ;x\uFFFD;y;z", Reject: "malformed line: 5 fields, the header has 4"}},
		{"no address", Record{Line: 8, Fields: []string{"pro", " ", "Subscribed", ""}},
			RecordAddress{Raw: " ", Reject: "missing email address"}},
		{"bad address", Record{Line: 9, Fields: []string{"pro", "Ann <a@example.com>", "Subscribed", ""}},
			RecordAddress{Address: "Ann <a@example.com>", Raw: "Ann <a@example.com>", Reject: "invalid email address"}},
		{"not UTF-8", Record{Line: 10, Fields: []string{"pro", "e@example.com", "Subscribed", "\xffx"}},
			RecordAddress{Address: "e@example.com", Raw: "e@example.com", Reject: notUTF8}},
		{"address not UTF-8", Record{Line: 11, Fields: []string{"pro", "\xff@example.com", "Subscribed", ""}},
			RecordAddress{Address: "\uFFFD@example.com", Raw: "\uFFFD@example.com", Reject: notUTF8}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.rec.Address(col, columns))
		})
	}
}

func TestEncodingsIsACopy(t *testing.T) {
	t.Parallel()
	e := Encodings()
	require.Equal(t, []string{EncodingUTF8, EncodingLatin1, EncodingWindows1252, EncodingUTF16LE, EncodingUTF16BE}, e)
	e[0] = "ebcdic"
	assert.Equal(t, EncodingUTF8, Encodings()[0])
}
